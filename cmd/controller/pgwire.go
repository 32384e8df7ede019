package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/tandemdb/tandem/pkg/pgwire"
	"github.com/tandemdb/tandem/pkg/sql"
)

// servePgwire starts the SQL front door over env on addr, with the
// authentication and TLS of fd; a COPY may hold maxCopyBytes. Connections
// without a password are accepted only over loopback (pgwire's default).
// stop closes the listener and waits for connections to finish; health
// reports whether it still accepts connections (/healthz). stages, if not
// nil, receives every read's stage times.
func servePgwire(ctx context.Context, addr string, env sql.Backend, fd frontDoorConfig, maxCopyBytes int, log *slog.Logger, stages pgwire.ReadStages) (stop func(), health func() error, listening string, err error) {
	pcfg, err := fd.pgwireConfig()
	if err != nil {
		return nil, nil, "", err
	}
	pcfg.Logger = log
	pcfg.ReadStages = stages
	engine := sql.NewEngine(env)
	engine.MaxCopyBytes = maxCopyBytes
	srv, err := pgwire.NewServer(engine, pcfg)
	if err != nil {
		return nil, nil, "", err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, "", fmt.Errorf("pgwire listener: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil {
			log.Error("pgwire server stopped", "error", err)
		}
	}()
	return func() { cancel(); <-done }, srv.Health, ln.Addr().String(), nil
}
