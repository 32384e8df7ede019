package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/pkg/sql/oracle"
)

// target gives every script a database of its own, as the corpus asks.
type target interface {
	// open returns a connection to a fresh database for script number i,
	// and what to call when the script is done with it.
	open(ctx context.Context, i int) (*pgConn, func(), error)
	close()
}

// dsnTarget is a server the caller started. Without fresh, every script
// runs in the DSN's database, which is right only for one script or for
// scripts that leave nothing behind.
type dsnTarget struct {
	cfg   *pgx.ConnConfig
	fresh bool
	stop  func()
}

func (t *dsnTarget) open(ctx context.Context, i int) (*pgConn, func(), error) {
	if !t.fresh {
		c, err := dial(ctx, t.cfg.Copy(), nil)
		if err != nil {
			return nil, nil, err
		}
		return c, c.Close, nil
	}
	admin, err := dial(ctx, t.cfg.Copy(), nil)
	if err != nil {
		return nil, nil, err
	}
	name := fmt.Sprintf("slt_%d_%d", os.Getpid(), i)
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = admin.conn.Exec(dctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close()
	}
	if _, err := admin.conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return nil, nil, fmt.Errorf("create database %s: %w", name, err)
	}
	cfg := t.cfg.Copy()
	cfg.Database = name
	c, err := dial(ctx, cfg, nil)
	if err != nil {
		drop()
		return nil, nil, err
	}
	return c, func() { c.Close(); drop() }, nil
}

func (t *dsnTarget) close() {
	if t.stop != nil {
		t.stop()
	}
}

// startPostgres starts a throwaway PostgreSQL the way the oracle suite does
// (pkg/sql/oracle) and gives each script a database of its own.
func startPostgres(ctx context.Context, parent string) (*dsnTarget, error) {
	dir, err := os.MkdirTemp(parent, "slt-postgres-")
	if err != nil {
		return nil, fmt.Errorf("postgres directory: %w", err)
	}
	pg, err := oracle.StartPostgres(ctx, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	cfg, err := pgx.ParseConfig(fmt.Sprintf("host=127.0.0.1 port=%d user=postgres database=postgres sslmode=disable", pg.Port))
	if err != nil {
		pg.Stop()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("postgres address: %w", err)
	}
	return &dsnTarget{cfg: cfg, fresh: true, stop: func() { pg.Stop(); os.RemoveAll(dir) }}, nil
}

// tandemTarget starts a fresh controller on a fresh data directory for
// every script. Tandem has no CREATE DATABASE, and dropping what a script
// created would leave the next script exposed to whatever a failed DROP,
// a half-applied statement or a crashed replica left behind; a new process
// costs under a second and makes the scripts independent, and a crash in
// one script cannot spill into the next.
type tandemTarget struct {
	controller, replica, tmp, logLevel string
}

func (t *tandemTarget) open(ctx context.Context, i int) (*pgConn, func(), error) {
	s, err := startTandem(ctx, t.controller, t.replica, t.tmp, t.logLevel)
	if err != nil {
		return nil, nil, err
	}
	c, err := dial(ctx, s.cfg, s.alive)
	if err != nil {
		s.stop()
		return nil, nil, err
	}
	return c, func() {
		c.Close()
		if !s.alive() {
			fmt.Fprintf(os.Stderr, "slt: controller exited during the script; log tail:\n%s\n", s.logTail())
		}
		s.stop()
	}, nil
}

func (t *tandemTarget) close() {}
