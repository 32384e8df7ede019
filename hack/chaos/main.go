package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/tandemdb/tandem/hack/internal/proc"
)

// config is the command line.
type config struct {
	seed     uint64
	faults   int
	writers  int
	pause    time.Duration // load between faults
	recovery time.Duration // bound on the wait for the system to answer again
	binDir   string
	keep     bool
	// sabotage deletes an acknowledged row behind the clients' back before
	// the final check, to show that the check catches a lost write.
	sabotage bool
	// only limits the faults to these kinds (empty: all).
	only string
}

func main() {
	var cfg config
	flag.Uint64Var(&cfg.seed, "seed", uint64(time.Now().UnixNano()), "seed of the fault and load choices (printed; rerun with it to replay)")
	flag.IntVar(&cfg.faults, "faults", 10, "number of faults to inject")
	flag.IntVar(&cfg.writers, "writers", 3, "concurrent writers")
	flag.DurationVar(&cfg.pause, "pause", 2*time.Second, "load between two faults")
	flag.DurationVar(&cfg.recovery, "recovery", 2*time.Minute, "longest wait for the system to answer again after a fault")
	flag.StringVar(&cfg.binDir, "bin", "", "directory holding controller and replica (default: build them into a temporary directory)")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the data directory (its path is printed)")
	flag.StringVar(&cfg.only, "only", "", "comma-separated fault kinds to inject (default: all of "+faultNames()+")")
	flag.BoolVar(&cfg.sabotage, "sabotage", false, "delete one acknowledged row behind the clients' back before the final check; the run must then fail")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sum, err := run(ctx, cfg)
	fmt.Println(sum)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config) (sum summary, err error) {
	sum = summary{seed: cfg.seed, faultsByKind: map[string]int{}}
	logf("seed %d, %d faults, %d writers", cfg.seed, cfg.faults, cfg.writers)
	if cfg.binDir == "" {
		dir, err := os.MkdirTemp("", "tandem-chaos-bin-")
		if err != nil {
			return sum, err
		}
		defer os.RemoveAll(dir)
		root, err := proc.RepoRoot()
		if err != nil {
			return sum, err
		}
		logf("building controller and replica")
		if err := proc.Build(ctx, root, dir); err != nil {
			return sum, err
		}
		cfg.binDir = dir
	}
	dataDir, err := os.MkdirTemp("", "tandem-chaos-data-")
	if err != nil {
		return sum, err
	}
	defer func() {
		// A failed run keeps its data directory (the controller's and the
		// replicas' logs are in it) for the post-mortem.
		if cfg.keep || len(sum.violations) > 0 {
			logf("data directory kept: %s", dataDir)
			return
		}
		os.RemoveAll(dataDir)
	}()
	sys := &system{binDir: cfg.binDir, dataDir: dataDir}
	if err := sys.start(ctx); err != nil {
		return sum, err
	}
	defer sys.stop()

	kinds, err := chooseFaults(cfg.only)
	if err != nil {
		return sum, err
	}
	rng := rand.New(rand.NewPCG(cfg.seed, cfg.seed^0x9e3779b97f4a7c15))
	l := newLoad(sys, cfg.writers, rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())))
	if err := l.setup(ctx); err != nil {
		return sum, fmt.Errorf("create schema: %w", err)
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	done := l.start(loadCtx)
	defer func() { stopLoad(); <-done }()

	for i := range cfg.faults {
		if err := sleep(ctx, cfg.pause); err != nil {
			return sum, err
		}
		f := kinds[rng.IntN(len(kinds))]
		logf("fault %d/%d: %s", i+1, cfg.faults, f.name)
		if err := f.inject(ctx, sys, l, rng); err != nil {
			return sum, fmt.Errorf("fault %d (%s): %w", i+1, f.name, err)
		}
		sum.faultsByKind[f.name]++
		if err := l.checkpoint(ctx, cfg.recovery); err != nil {
			return sum, fmt.Errorf("after fault %d (%s): %w", i+1, f.name, err)
		}
		sum.collect(l)
		if len(sum.violations) > 0 {
			break
		}
	}
	if len(sum.violations) == 0 {
		if err := sleep(ctx, cfg.pause); err != nil {
			return sum, err
		}
		if cfg.sabotage {
			if err := l.loseAWrite(ctx); err != nil {
				return sum, fmt.Errorf("sabotage: %w", err)
			}
		}
		if err := l.checkpoint(ctx, cfg.recovery); err != nil {
			return sum, fmt.Errorf("final check: %w", err)
		}
		sum.collect(l)
	}
	if len(sum.violations) > 0 {
		return sum, fmt.Errorf("%d violations (replay with --seed %d)", len(sum.violations), cfg.seed)
	}
	return sum, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "chaos %s: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
