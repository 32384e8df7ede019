package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/tandemdb/tandem/pkg/pgwire"
	"github.com/tandemdb/tandem/pkg/sql"
)

// servePgwire starts the SQL front door over env on addr. Connections
// without a password are accepted only over loopback (pgwire's default).
// stop closes the listener and waits for connections to finish.
func servePgwire(ctx context.Context, addr string, env sql.Backend, maxCopyBytes int, log *slog.Logger) (stop func(), listening string, err error) {
	engine := sql.NewEngine(env)
	engine.MaxCopyBytes = maxCopyBytes
	srv, err := pgwire.NewServer(engine, pgwire.Config{Logger: log})
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("pgwire listener: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln); err != nil {
			log.Error("pgwire server stopped", "error", err)
		}
	}()
	return func() { cancel(); <-done }, ln.Addr().String(), nil
}
