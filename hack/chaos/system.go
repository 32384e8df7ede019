package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/hack/internal/proc"
)

// system is the controller under test, restarted on the same data
// directory after it is killed. Clients ask it for a connection string
// each time they (re)connect, since a restarted controller listens on new
// ports.
type system struct {
	binDir, dataDir string

	mu   sync.Mutex
	ctl  *proc.Controller
	gen  int // incremented by every start
	down bool
}

func (s *system) start(ctx context.Context) error {
	c, err := proc.Start(ctx, proc.Config{BinDir: s.binDir, DataDir: s.dataDir, Keep: true, StartTimeout: 2 * time.Minute,
		ExtraArgs: []string{"--storage-fault-injection"}})
	if err != nil {
		return fmt.Errorf("start controller: %w", err)
	}
	s.mu.Lock()
	s.ctl, s.down = c, false
	s.gen++
	s.mu.Unlock()
	return nil
}

func (s *system) controller() *proc.Controller {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ctl
}

func (s *system) stop() {
	if c := s.controller(); c != nil {
		_ = c.Stop()
	}
}

// connect opens a connection to the current controller, retrying while it
// is down or restarting, until ctx ends.
func (s *system) connect(ctx context.Context) (*pgx.Conn, error) {
	for {
		s.mu.Lock()
		c, down := s.ctl, s.down
		s.mu.Unlock()
		if !down {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			conn, err := pgx.Connect(cctx, c.ConnString())
			cancel()
			if err == nil {
				return conn, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// killController ends the controller and its replicas with SIGKILL and
// starts a new one on the same data directory.
func (s *system) killController(ctx context.Context) error {
	s.mu.Lock()
	c := s.ctl
	s.down = true
	s.mu.Unlock()
	c.Kill()
	return s.start(ctx)
}

// signalController sends sig to the controller process only.
func (s *system) signalController(sig syscall.Signal) error {
	return syscall.Kill(s.controller().Pid(), sig)
}

// replicas returns the pids of the controller's replica processes.
func (s *system) replicas() ([]int, error) {
	return s.controller().Children("replica")
}

// limitSpace lets the controller's storage write n more bytes, then fail
// with ENOSPC as a full disk does; n < 0 lifts the limit.
func (s *system) limitSpace(ctx context.Context, n int64) error {
	url := fmt.Sprintf("http://%s/debug/storage/space?bytes=%d", s.controller().HTTPAddr, n)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("limit storage space: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("limit storage space: %s", resp.Status)
	}
	return nil
}
