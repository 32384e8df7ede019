package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/hack/internal/proc"
)

// env is what every scenario gets: its options, progress output and a way
// to start the system under test.
type env struct {
	quick  bool
	outDir string
	keep   bool
	// memoryKeys overrides the memory scenario's index size (keys of 1
	// KiB; 0: the scenario's own), memoryArms its arms (nil: all).
	memoryKeys int
	memoryArms []string
	repoRoot   string
	binDir     string
	stderr     io.Writer
	began      time.Time

	buildOnce sync.Once
	buildErr  error
}

// logf prints a progress line to stderr with the elapsed time.
func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(e.stderr, "[%6.1fs] %s\n", time.Since(e.began).Seconds(), fmt.Sprintf(format, args...))
}

// pick returns quick in --quick mode and full otherwise.
func pick[T any](e *env, quick, full T) T {
	if e.quick {
		return quick
	}
	return full
}

// startTandem builds the binaries once per invocation and starts a fresh
// controller; the caller must Stop it (deferred right away).
func (e *env) startTandem(ctx context.Context) (*proc.Controller, error) {
	e.buildOnce.Do(func() {
		e.logf("building controller and replica into %s", e.binDir)
		e.buildErr = proc.Build(ctx, e.repoRoot, e.binDir)
	})
	if e.buildErr != nil {
		return nil, e.buildErr
	}
	c, err := proc.Start(ctx, proc.Config{BinDir: e.binDir, Keep: e.keep})
	if err != nil {
		return nil, err
	}
	e.logf("controller up: pgwire %s, http %s, data %s", c.PgwireAddr, c.HTTPAddr, c.DataDir)
	return c, nil
}

// startWithAdmin starts a fresh controller and opens a serializable admin
// connection to it; stop closes both (the caller defers it right away).
func (e *env) startWithAdmin(ctx context.Context) (c *proc.Controller, admin *pgx.Conn, stop func(), err error) {
	if c, err = e.startTandem(ctx); err != nil {
		return nil, nil, nil, err
	}
	if admin, err = serializable(c)(ctx); err != nil {
		c.Stop()
		return nil, nil, nil, err
	}
	return c, admin, func() {
		admin.Close(context.Background())
		c.Stop()
	}, nil
}

// connector opens a SQL connection to the system under test.
type connector func(ctx context.Context) (*pgx.Conn, error)

// clients is a fixed set of pre-opened connections, one per load worker.
// A connection broken by a cancelled request is reopened on next use, so
// a censored request never costs the following phase a worker.
type clients struct {
	connect connector
	conns   []*pgx.Conn
}

func openClients(ctx context.Context, n int, connect connector) (*clients, error) {
	c := &clients{connect: connect}
	for range n {
		conn, err := connect(ctx)
		if err != nil {
			c.close()
			return nil, err
		}
		c.conns = append(c.conns, conn)
	}
	return c, nil
}

func (c *clients) conn(ctx context.Context, w int) (*pgx.Conn, error) {
	if c.conns[w].IsClosed() {
		conn, err := c.connect(ctx)
		if err != nil {
			return nil, err
		}
		c.conns[w] = conn
	}
	return c.conns[w], nil
}

// query runs sql on worker w's connection, reads every row and returns
// how many there were.
func (c *clients) query(ctx context.Context, w int, sql string, args ...any) (int, error) {
	conn, err := c.conn(ctx, w)
	if err != nil {
		return 0, err
	}
	return countRows(ctx, conn, sql, args...)
}

func (c *clients) close() {
	for _, conn := range c.conns {
		if conn != nil {
			conn.Close(context.Background())
		}
	}
}

func countRows(ctx context.Context, conn *pgx.Conn, sql string, args ...any) (int, error) {
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		return 0, err
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	return n, rows.Err()
}

// missingError names a feature the system under test lacks; scenarios
// return it instead of a result.
type missingError struct {
	feature string
	cause   error
}

func (m *missingError) Error() string {
	if m.cause == nil {
		return fmt.Sprintf("%v: %s", proc.ErrMissing, m.feature)
	}
	return fmt.Sprintf("%v: %s: %v", proc.ErrMissing, m.feature, m.cause)
}

func (m *missingError) Unwrap() error { return proc.ErrMissing }

// require runs a statement the scenario depends on and turns its failure
// into a missingError naming the feature.
func require(ctx context.Context, conn *pgx.Conn, feature, sql string, args ...any) error {
	if _, err := countRows(ctx, conn, sql, args...); err != nil {
		return &missingError{feature: feature + " (" + sql + ")", cause: err}
	}
	return nil
}
