package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tandemdb/tandem/hack/internal/proc"
	"github.com/tandemdb/tandem/pkg/sql/oracle"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "clients: %v\n", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	bench      benchConfig
	skipBench  bool
	skipDriver bool
	profileDir string
	keep       bool
	laneRounds int
	binDir     string
	skipPG     bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("clients", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.bench.scale, "scale", 10, "pgbench scale factor (-s)")
	fs.IntVar(&o.bench.clients, "clients", 4, "pgbench clients (-c)")
	fs.DurationVar(&o.bench.duration, "duration", 30*time.Second, "pgbench -S run time (-T, whole seconds)")
	fs.BoolVar(&o.skipBench, "skip-pgbench", false, "run only the driver scripts")
	fs.BoolVar(&o.skipDriver, "skip-drivers", false, "run only pgbench")
	fs.StringVar(&o.profileDir, "profile", "", "directory for CPU profiles (controller.pprof, replica.pprof) and then execution traces (controller.trace, replica.trace) of Tandem during pgbench -S")
	fs.IntVar(&o.laneRounds, "lane-rounds", 0, "after Tandem's pgbench -S, rounds of pgbench -S with enable_peek_lane off and on, alternating (docs/design/read-path.md)")
	fs.StringVar(&o.binDir, "bin-dir", "", "run the controller and replica binaries in this directory instead of building them (to compare two builds in one session, alternately)")
	fs.BoolVar(&o.skipPG, "skip-postgres", false, "run only against Tandem")
	fs.BoolVar(&o.keep, "keep", false, "keep Tandem's data directory (its logs) after the run")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.bench.duration < time.Second || o.bench.scale < 1 || o.bench.clients < 1 {
		return o, errors.New("--duration must be at least 1s, --scale and --clients at least 1")
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(stderr, "clients: "+format+"\n", a...)
	}
	root, err := proc.RepoRoot()
	if err != nil {
		return err
	}
	pgBin, err := oracle.FindPostgres()
	if err != nil {
		return fmt.Errorf("%w (install it with hack/postgres.sh)", err)
	}
	if !o.skipBench {
		if o.bench.pgbench, err = findPgbench(pgBin); err != nil {
			return err
		}
	}
	var drv drivers
	if !o.skipDriver {
		if drv, err = installDrivers(ctx, root); err != nil {
			return err
		}
	}
	binDir := o.binDir
	if binDir == "" {
		if binDir, err = os.MkdirTemp("", "tandem-clients-bin-"); err != nil {
			return err
		}
		defer os.RemoveAll(binDir)
		logf("building controller and replica")
		if err := proc.Build(ctx, root, binDir); err != nil {
			return err
		}
	}

	rep := &report{bench: o.bench}
	var failures []error
	fail := func(err error) {
		logf("FAIL: %v", err)
		failures = append(failures, err)
	}
	if err := runTandem(ctx, o, root, binDir, drv, rep, logf, fail); err != nil {
		return err
	}
	if !o.skipPG {
		if err := runPostgres(ctx, o, root, drv, rep, logf, fail); err != nil {
			return err
		}
	}
	rep.print(stdout)
	return errors.Join(failures...)
}

// runTandem starts a fresh controller and runs every client against it.
// A client's failure goes to fail; the error is for the harness itself.
func runTandem(ctx context.Context, o options, root, binDir string, drv drivers, rep *report, logf func(string, ...any), fail func(error)) error {
	cfg := proc.Config{BinDir: binDir, Keep: o.keep, ExtraArgs: []string{"--log-level=warn"}}
	var pp pprofAddrs
	if o.profileDir != "" {
		var err error
		if pp, err = freePprofAddrs(); err != nil {
			return err
		}
		cfg.ExtraArgs = append(cfg.ExtraArgs, "--pprof-listen-addr="+pp.controller)
		// The replicas inherit the controller's environment; the
		// controller's own flag wins over the variable.
		cfg.Env = []string{"TANDEM_PPROF_LISTEN_ADDR=" + pp.replica}
	}
	c, err := proc.Start(ctx, cfg)
	if err != nil {
		return fmt.Errorf("start Tandem: %w", err)
	}
	defer c.Stop()
	logf("tandem: controller on %s (data %s)", c.PgwireAddr, c.DataDir)
	host, port, err := net.SplitHostPort(c.PgwireAddr)
	if err != nil {
		return err
	}
	t := target{name: "tandem", host: host, port: port, user: "tandem", db: "tandem"}
	if !o.skipBench {
		var before scrape
		var hydration time.Duration
		hooks := runHooks{before: func(ctx context.Context) {
			// pgbench -i returns once ADD PRIMARY KEY has created the key
			// index, before the index has hydrated; reads wait until it
			// has. The wait is reported apart, so that -S measures reads.
			start := time.Now()
			if err := waitHydrated(ctx, c, 15*time.Minute); err != nil {
				fail(err)
			}
			hydration = time.Since(start)
			logf("tandem: indexes hydrated %.1f s after pgbench -i returned", hydration.Seconds())
			before = scrapeStages(ctx, c)
		}, cpu: replicaMeter(c)}
		if o.profileDir != "" {
			hooks.during = func(ctx context.Context) { profile(ctx, pp, o, logf) }
		}
		res, err := runPgbench(ctx, o.bench, t, logf, hooks)
		if err != nil {
			fail(err)
		}
		if res != nil {
			after := scrapeStages(ctx, c)
			res.stages = stageDeltas(controllerStages, before.controller, after.controller)
			res.replicaStages = stageDeltas(replicaStages, before.replica, after.replica)
			res.hydration = hydration
			rep.tandem = res
		}
		if o.laneRounds > 0 && err == nil {
			arms, err := runLaneArms(ctx, o, c, t, logf)
			if err != nil {
				fail(err)
			}
			rep.laneArms = arms
		}
	}
	if !o.skipDriver {
		runScripts(ctx, drv, root, t, rep, logf, fail)
	}
	if !c.Alive() {
		fail(fmt.Errorf("the controller exited during the run; log %s", c.LogPath))
	}
	return nil
}

// runPostgres starts a throwaway PostgreSQL and runs every client against it.
func runPostgres(ctx context.Context, o options, root string, drv drivers, rep *report, logf func(string, ...any), fail func(error)) error {
	dir, err := os.MkdirTemp("", "tandem-clients-pg-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pg, err := oracle.StartPostgres(ctx, dir)
	if err != nil {
		return fmt.Errorf("start PostgreSQL: %w", err)
	}
	defer pg.Stop()
	t := target{name: "postgres", host: "127.0.0.1", port: strconv.Itoa(pg.Port), user: "postgres", db: "postgres"}
	logf("postgres: server on %s:%s", t.host, t.port)
	if !o.skipBench {
		res, err := runPgbench(ctx, o.bench, t, logf, runHooks{cpu: postgresCPU(pg.Pid())})
		if err != nil {
			fail(err)
		}
		rep.postgres = res
	}
	if !o.skipDriver {
		runScripts(ctx, drv, root, t, rep, logf, fail)
	}
	return nil
}

func runScripts(ctx context.Context, drv drivers, root string, t target, rep *report, logf func(string, ...any), fail func(error)) {
	for _, s := range scripts {
		logf("%s: %s", t.name, s.name)
		out, err := runScript(ctx, s, drv, root, t)
		out = strings.TrimSpace(out)
		rep.scripts = append(rep.scripts, scriptResult{system: t.name, name: s.name, ok: err == nil, output: out})
		if err != nil {
			fail(fmt.Errorf("%w\n%s", err, out))
			continue
		}
		logf("%s: %s", t.name, out)
	}
}

// waitHydrated polls /api/status until every replica of every cluster
// reports no dataflow still hydrating.
func waitHydrated(ctx context.Context, c *proc.Controller, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		b, err := c.Get(ctx, "/api/status")
		if err == nil {
			var n int
			if n, err = notHydrated(b); err == nil && n == 0 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("indexes not hydrated %s after pgbench -i (last: %v)", limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// notHydrated counts the dataflows /api/status lists as not hydrated.
func notHydrated(status []byte) (int, error) {
	var st struct {
		Clusters []struct {
			Replicas []struct {
				Connected   bool     `json:"connected"`
				NotHydrated []string `json:"not_hydrated"`
			} `json:"replicas"`
		} `json:"clusters"`
	}
	if err := json.Unmarshal(status, &st); err != nil {
		return 0, fmt.Errorf("/api/status: %w", err)
	}
	n := 0
	for _, cl := range st.Clusters {
		for _, r := range cl.Replicas {
			if !r.Connected {
				return 0, errors.New("/api/status: a replica is not connected")
			}
			n += len(r.NotHydrated)
		}
	}
	return n, nil
}

// scrape is the stage histograms of the controller and of its replica.
type scrape struct{ controller, replica map[string][2]float64 }

// scrapeStages reads the stage histograms from the controller's /metrics
// and the replica's internal HTTP /metrics (summed over replica processes).
// What cannot be read stays empty: the stage table is then left out.
func scrapeStages(ctx context.Context, c *proc.Controller) scrape {
	var s scrape
	if b, err := c.Get(ctx, "/metrics"); err == nil {
		s.controller = parseStages(string(b), "tandem_read_stage_seconds")
	}
	s.replica = map[string][2]float64{}
	pids, _ := c.Children("replica")
	for _, pid := range pids {
		addr := replicaHTTPAddr(pid)
		if addr == "" {
			continue
		}
		b, err := httpGet(ctx, "http://"+addr+"/metrics")
		if err != nil {
			continue
		}
		for k, v := range parseStages(string(b), "tandem_compute_read_stage_seconds") {
			e := s.replica[k]
			s.replica[k] = [2]float64{e[0] + v[0], e[1] + v[1]}
		}
	}
	return s
}

// replicaHTTPAddr reads a replica's --internal-http-listen-addr from its
// command line.
func replicaHTTPAddr(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	return flagValue(strings.Split(string(b), "\x00"), "--internal-http-listen-addr")
}

// flagValue returns the value of flag in args (--flag=value or --flag value).
func flagValue(args []string, flag string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}
