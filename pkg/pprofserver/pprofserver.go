package pprofserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/go-logr/logr"
)

// CheckAddr returns an error unless addr (host:port) is a loopback
// address.
func CheckAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("pprof address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("pprof address %q: profiles are served on loopback only (e.g. 127.0.0.1:6060)", addr)
}

// Handler serves /debug/pprof/ and nothing else.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// Serve listens on the loopback address addr and serves Handler until ctx
// ends. It returns the address it listens on and a stop function that
// closes the server.
func Serve(ctx context.Context, addr string) (listening string, stop func(), err error) {
	if err := CheckAddr(addr); err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("pprof listener: %w", err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		// "localhost" resolved to something else: refuse rather than
		// serve profiles on it.
		ln.Close()
		return "", nil, fmt.Errorf("pprof address %q resolved to %s, not loopback", addr, ln.Addr())
	}
	srv := &http.Server{Handler: Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// A failed listener loses the profiles and nothing else.
		_ = srv.Serve(ln)
	}()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	return ln.Addr().String(), func() { cancel(); <-done }, nil
}

// ServeConfigured serves profiles on addr as Serve does and logs where, or
// does nothing when addr is empty (profiling not configured). The returned
// stop is never nil.
func ServeConfigured(ctx context.Context, addr string, log logr.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	listening, stop, err := Serve(ctx, addr)
	if err != nil {
		return nil, err
	}
	log.Info("Serving profiles on loopback", "addr", listening)
	return stop, nil
}
