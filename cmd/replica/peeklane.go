package main

import (
	"context"
	"fmt"
	"net"

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
// or TCP on the compute protocol port's host, with the same mutual TLS as
// that port when --internal-tls-* are set. Refused lanes are counted in
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
		l.lis, l.advertised, err = peeklane.ListenTCP(host)
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
