package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"time"
)

// fault is one kind of failure the suite injects.
type fault struct {
	name   string
	inject func(ctx context.Context, sys *system, l *load, rng *rand.Rand) error
}

var faults = []fault{
	{"kill-replica", killReplica},
	{"kill-controller", func(ctx context.Context, sys *system, _ *load, _ *rand.Rand) error {
		return sys.killController(ctx)
	}},
	{"stop-replica", stopReplica},
	{"stop-controller", func(ctx context.Context, sys *system, _ *load, rng *rand.Rand) error {
		if err := sys.signalController(syscall.SIGSTOP); err != nil {
			return err
		}
		defer sys.signalController(syscall.SIGCONT)
		return sleep(ctx, stopFor(rng))
	}},
	{"recreate-index", recreateIndex},
	{"full-disk", fullDisk},
}

// stopFor is how long a stopped process stays stopped: a few seconds, long
// enough for peers' connections and clients' statements to notice.
func stopFor(rng *rand.Rand) time.Duration {
	return 2*time.Second + time.Duration(rng.Int64N(int64(2*time.Second)))
}

// pickReplica waits for a replica process to exist (one may be restarting)
// and picks one.
func pickReplica(ctx context.Context, sys *system, rng *rand.Rand) (int, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		pids, err := sys.replicas()
		if err != nil {
			return 0, err
		}
		if len(pids) > 0 {
			return pids[rng.IntN(len(pids))], nil
		}
		if time.Now().After(deadline) {
			return 0, errors.New("no replica process for a minute")
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return 0, err
		}
	}
}

func killReplica(ctx context.Context, sys *system, _ *load, rng *rand.Rand) error {
	pid, err := pickReplica(ctx, sys, rng)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill replica %d: %w", pid, err)
	}
	return nil
}

func stopReplica(ctx context.Context, sys *system, _ *load, rng *rand.Rand) error {
	pid, err := pickReplica(ctx, sys, rng)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return nil // it exited meanwhile
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	return sleep(ctx, stopFor(rng))
}

// recreateIndex drops the indexed view's index and creates it again, so
// that it hydrates while the load goes on (and readers of the view wait or
// fall back to a one-shot dataflow).
func recreateIndex(ctx context.Context, sys *system, _ *load, _ *rand.Rand) error {
	conn, err := sys.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	octx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := conn.Exec(octx, `DROP INDEX acct_buckets_idx`); err != nil {
		return fmt.Errorf("drop index: %w", err)
	}
	if _, err := conn.Exec(octx, `CREATE INDEX acct_buckets_idx ON acct_buckets (b)`); err != nil {
		return fmt.Errorf("create index: %w", err)
	}
	return nil
}

// fullDisk fills the storage directory's disk for a few seconds: writes
// fail (ENOSPC, or part way through a commit), then space returns and
// writes must succeed again with nothing partial left behind.
func fullDisk(ctx context.Context, sys *system, _ *load, rng *rand.Rand) error {
	if err := sys.limitSpace(ctx, rng.Int64N(4<<10)); err != nil {
		return err
	}
	defer sys.limitSpace(context.Background(), -1)
	return sleep(ctx, stopFor(rng))
}

func faultNames() string {
	var names []string
	for _, f := range faults {
		names = append(names, f.name)
	}
	return strings.Join(names, ", ")
}

// chooseFaults returns the faults named in only (comma-separated), or all
// of them when only is empty.
func chooseFaults(only string) ([]fault, error) {
	if only == "" {
		return faults, nil
	}
	var out []fault
	for _, name := range strings.Split(only, ",") {
		i := slices.IndexFunc(faults, func(f fault) bool { return f.name == strings.TrimSpace(name) })
		if i < 0 {
			return nil, fmt.Errorf("--only: unknown fault %q (known: %s)", name, faultNames())
		}
		out = append(out, faults[i])
	}
	return out, nil
}
