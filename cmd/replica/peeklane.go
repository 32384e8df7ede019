package main

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tandemdb/tandem/pkg/compute/peeklane"
	"github.com/tandemdb/tandem/pkg/compute/server"
	"github.com/tandemdb/tandem/pkg/internaltls"
)

// peekLane is the process's peek lane listener (pkg/compute/peeklane); a
// zero value serves none.
type peekLane struct {
	lis        net.Listener
	advertised string
	cfg        peeklane.ServeConfig
	cleanup    func()
	log        logr.Logger
}

// listenPeekLane opens the lane --peek-lane asks for: a unix socket in a
// directory only this user can enter, whose peers must run as this user;
// or TCP on --peek-lane-listen-addr, else on the compute protocol port's
// host with a port the system chooses, with the same mutual TLS as that
// port when --internal-tls-* are set. Refused lanes are counted in
// refused and logged.
func listenPeekLane(cfg *config, refused prometheus.Counter, log logr.Logger) (*peekLane, error) {
	l := &peekLane{log: log, cleanup: func() {}}
	l.cfg.OnRefused = func(err error) {
		refused.Inc()
		log.Info("Refused a peek lane", "err", err.Error())
	}
	host, _, err := net.SplitHostPort(cfg.ControllerListenAddr)
	if err != nil {
		return nil, fmt.Errorf("--controller-listen-addr: %w", err)
	}
	mode := cfg.PeekLane
	if mode == "auto" {
		mode = "tcp"
		if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
			mode = "unix"
		}
	}
	if mode != "tcp" && cfg.PeekLaneListenAddr != "" {
		// auto picked the socket: the fixed port is for pods, where the
		// controller is never on this host's loopback.
		log.Info("Peek lane on a unix socket; --peek-lane-listen-addr unused", "addr", cfg.PeekLaneListenAddr)
	}
	switch mode {
	case "off":
		return l, nil
	case "unix":
		l.lis, l.advertised, l.cleanup, err = peeklane.ListenUnix("")
		l.cfg.SameUser = true
	case "tcp":
		if cfg.InternalTLS.Cert != "" {
			if l.cfg.TLS, err = internaltls.ServerConfig(cfg.InternalTLS); err != nil {
				return nil, err
			}
		}
		addr := cfg.PeekLaneListenAddr
		if addr == "" {
			addr = net.JoinHostPort(host, "0")
		}
		l.lis, l.advertised, err = peeklane.ListenTCP(addr)
	}
	if err != nil {
		return nil, err
	}
	log.Info("Serving peek lane", "address", l.advertised, "mutual_tls", l.cfg.TLS != nil)
	return l, nil
}

// serve serves lanes to srv until ctx ends.
func (l *peekLane) serve(ctx context.Context, srv *server.Server) {
	if l.lis == nil {
		return
	}
	if err := peeklane.Serve(ctx, l.lis, l.cfg, srv.AttachLane); err != nil {
		l.log.Error(err, "Peek lane stopped; point reads take the command stream")
	}
}

func (l *peekLane) close() {
	if l.lis != nil {
		l.lis.Close()
	}
	l.cleanup()
}

// checkPeekLaneAddr validates --peek-lane-listen-addr: a HOST:PORT with a
// numeric port, and only where a tcp lane may be chosen.
func checkPeekLaneAddr(mode, addr string) error {
	if addr == "" {
		return nil
	}
	if mode == "unix" || mode == "off" {
		return fmt.Errorf("--peek-lane-listen-addr %q: needs --peek-lane=tcp or auto, not %s", addr, mode)
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--peek-lane-listen-addr: %w", err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("--peek-lane-listen-addr %q: port %q is not a number from 0 to 65535", addr, port)
	}
	return nil
}
