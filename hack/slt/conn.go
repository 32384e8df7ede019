package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tandemdb/tandem/hack/slt/internal/slt"
)

// pgConn runs records over one pgwire connection with the simple query
// protocol: results come back in text format, which is what the formatter
// reads, and nothing is prepared, so no statement cache can go stale when a
// script drops and recreates a table.
type pgConn struct {
	cfg  *pgx.ConnConfig
	conn *pgx.Conn
	// alive, when set, reports whether the server process still runs, so
	// that a lost connection is told apart from a dead server at once.
	alive func() bool
}

func dial(ctx context.Context, cfg *pgx.ConnConfig, alive func() bool) (*pgConn, error) {
	c := &pgConn{cfg: cfg, alive: alive}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s:%d: %w", cfg.Host, cfg.Port, err)
	}
	c.conn = conn
	return c, nil
}

func (c *pgConn) Close() {
	if c.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.conn.Close(ctx)
	}
}

func (c *pgConn) Exec(ctx context.Context, sql string) error {
	_, err := c.conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	return c.settle(ctx, err)
}

func (c *pgConn) Query(ctx context.Context, sql string) ([][][]byte, error) {
	rows, err := c.conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, c.settle(ctx, err)
	}
	var out [][][]byte
	for rows.Next() {
		raw := rows.RawValues()
		row := make([][]byte, len(raw))
		for i, v := range raw {
			if v != nil {
				// RawValues are only valid until the next row.
				row[i] = append([]byte{}, v...)
			}
		}
		out = append(out, row)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, c.settle(ctx, err)
	}
	return out, nil
}

// settle classifies a failure: a server error is the statement's verdict;
// a timeout is the statement's too, after which the connection is replaced
// if pgx had to close it; anything else is a lost connection, which is
// tried once more and otherwise wraps slt.ErrBroken.
func (c *pgConn) settle(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return err
	}
	if c.alive != nil && !c.alive() {
		return fmt.Errorf("%w: server process exited: %v", slt.ErrBroken, err)
	}
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
	if !c.conn.IsClosed() {
		if timedOut {
			return fmt.Errorf("statement timeout: %w", ctx.Err())
		}
		return err
	}
	rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, rerr := pgx.ConnectConfig(rctx, c.cfg)
	if rerr != nil {
		return fmt.Errorf("%w: %v; reconnecting: %v", slt.ErrBroken, err, rerr)
	}
	c.conn = conn
	if timedOut {
		return fmt.Errorf("statement timeout: %w", ctx.Err())
	}
	return fmt.Errorf("connection lost (reconnected): %w", err)
}
