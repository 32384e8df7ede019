package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// target is one server the clients connect to.
type target struct {
	name       string // "tandem" or "postgres"
	host, port string
	user, db   string
}

// pgArgs are the connection arguments of the PostgreSQL command-line tools.
func (t target) pgArgs() []string {
	return []string{"-h", t.host, "-p", t.port, "-U", t.user}
}

// dsn is a libpq key/value connection string.
func (t target) dsn() string {
	return fmt.Sprintf("host=%s port=%s user=%s dbname=%s sslmode=disable", t.host, t.port, t.user, t.db)
}

// url is a postgres:// URL (node-postgres' connectionString).
func (t target) url() string {
	return fmt.Sprintf("postgres://%s@%s:%s/%s?sslmode=disable", t.user, t.host, t.port, t.db)
}

// benchResult is what one system scored in pgbench.
type benchResult struct {
	initLine   string // pgbench -i's "done in ..." line
	initTime   time.Duration
	run        pgbenchRun
	loadBefore loadAvg
	loadAfter  loadAvg
	// Tandem only: mean time per read of each stage in the controller and
	// in the replica (reads while pgbench -S ran).
	stages, replicaStages []stageTime
	hydration             time.Duration // from pgbench -i's end to every index hydrated
	// cpu is the CPU time of each server process, then pgbench's, during
	// the select-only run.
	cpu []procCPU
}

// pgbenchRun is the summary pgbench prints after a run.
type pgbenchRun struct {
	Transactions int
	Failed       int
	LatencyMs    float64
	TPS          float64
}

var (
	reTxns    = regexp.MustCompile(`(?m)^number of transactions actually processed: (\d+)`)
	reFailed  = regexp.MustCompile(`(?m)^number of failed transactions: (\d+)`)
	reLatency = regexp.MustCompile(`(?m)^latency average = ([0-9.]+) ms`)
	reTPS     = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)
	reInit    = regexp.MustCompile(`(?m)^done in [0-9.]+ s.*$`)
)

// parsePgbench reads the summary of `pgbench` (PostgreSQL 15's format).
// The failed-transactions line is optional (older pgbench has none).
func parsePgbench(out string) (pgbenchRun, error) {
	var r pgbenchRun
	txns := reTxns.FindStringSubmatch(out)
	lat := reLatency.FindStringSubmatch(out)
	tps := reTPS.FindStringSubmatch(out)
	if txns == nil || lat == nil || tps == nil {
		return r, fmt.Errorf("pgbench output lacks its summary (transactions, latency average, tps):\n%s", out)
	}
	var err error
	if r.Transactions, err = strconv.Atoi(txns[1]); err != nil {
		return r, fmt.Errorf("transactions %q: %w", txns[1], err)
	}
	if f := reFailed.FindStringSubmatch(out); f != nil {
		if r.Failed, err = strconv.Atoi(f[1]); err != nil {
			return r, fmt.Errorf("failed transactions %q: %w", f[1], err)
		}
	}
	if r.LatencyMs, err = strconv.ParseFloat(lat[1], 64); err != nil {
		return r, fmt.Errorf("latency %q: %w", lat[1], err)
	}
	if r.TPS, err = strconv.ParseFloat(tps[1], 64); err != nil {
		return r, fmt.Errorf("tps %q: %w", tps[1], err)
	}
	return r, nil
}

// findPgbench prefers the pgbench of the PostgreSQL installation, then PATH.
func findPgbench(pgBin string) (string, error) {
	if pgBin != "" {
		if p := filepath.Join(pgBin, "pgbench"); isExecutable(p) {
			return p, nil
		}
	}
	p, err := exec.LookPath("pgbench")
	if err != nil {
		return "", fmt.Errorf("pgbench not found (install PostgreSQL with hack/postgres.sh or Debian's postgresql-client): %w", err)
	}
	return p, nil
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// benchConfig sizes the pgbench runs.
type benchConfig struct {
	pgbench  string
	scale    int
	clients  int
	duration time.Duration
}

// initArgs and runArgs are the pgbench command lines (also printed).
func (c benchConfig) initArgs(t target) []string {
	return append(append([]string{"-i", "-n", "-s", strconv.Itoa(c.scale)}, t.pgArgs()...), t.db)
}

func (c benchConfig) runArgs(t target) []string {
	return append(append([]string{"-S", "-n", "-c", strconv.Itoa(c.clients), "-T", strconv.Itoa(int(c.duration.Seconds()))}, t.pgArgs()...), t.db)
}

// runHooks let the caller observe the select-only run: before is called
// once the tables are initialised, right before the run; during runs
// alongside it (e.g. to take a profile) and is cancelled when it ends;
// cpu meters the server's processes around the run. Any may be nil.
type runHooks struct {
	before func(context.Context)
	during func(context.Context)
	cpu    cpuMeter
}

// runPgbench initialises pgbench's tables in t and runs the select-only
// workload.
func runPgbench(ctx context.Context, c benchConfig, t target, logf func(string, ...any), hooks runHooks) (*benchResult, error) {
	res := &benchResult{}
	logf("%s: pgbench %s", t.name, strings.Join(c.initArgs(t), " "))
	start := time.Now()
	out, err := runTool(ctx, c.pgbench, c.initArgs(t)...)
	res.initTime = time.Since(start)
	if err != nil {
		return nil, fmt.Errorf("%s: pgbench -i: %w", t.name, err)
	}
	res.initLine = reInit.FindString(out)
	logf("%s: %s", t.name, res.initLine)

	logf("%s: pgbench %s", t.name, strings.Join(c.runArgs(t), " "))
	if hooks.before != nil {
		hooks.before(ctx)
	}
	res.loadBefore = readLoadAvg()
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	if hooks.during != nil {
		go func() { defer close(done); hooks.during(runCtx) }()
	} else {
		close(done)
	}
	var cpu0 []procCPU
	if hooks.cpu != nil {
		cpu0 = hooks.cpu()
	}
	out, pgbenchCPU, err := runToolCPU(ctx, c.pgbench, c.runArgs(t)...)
	cancel()
	<-done
	if hooks.cpu != nil {
		res.cpu = cpuDeltas(cpu0, hooks.cpu())
	}
	res.cpu = append(res.cpu, procCPU{name: "pgbench", cpu: pgbenchCPU})
	res.loadAfter = readLoadAvg()
	if err != nil {
		return nil, fmt.Errorf("%s: pgbench -S: %w", t.name, err)
	}
	if res.run, err = parsePgbench(out); err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	if res.run.Failed > 0 {
		return res, fmt.Errorf("%s: pgbench -S: %d failed transactions:\n%s", t.name, res.run.Failed, out)
	}
	logf("%s: %.1f tps, %.2f ms average latency, %d transactions", t.name, res.run.TPS, res.run.LatencyMs, res.run.Transactions)
	return res, nil
}

// runTool runs a command and returns its combined output; a failure
// carries the output.
func runTool(ctx context.Context, name string, args ...string) (string, error) {
	out, _, err := runToolCPU(ctx, name, args...)
	return out, err
}

// runToolCPU is runTool that also returns the CPU time (user and system,
// from its rusage) the command used.
func runToolCPU(ctx context.Context, name string, args ...string) (string, time.Duration, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "PGSSLMODE=disable", "PGCONNECT_TIMEOUT=30")
	out, err := cmd.CombinedOutput()
	var cpu time.Duration
	if st := cmd.ProcessState; st != nil {
		cpu = st.UserTime() + st.SystemTime()
	}
	if err != nil {
		return string(out), cpu, fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out), cpu, nil
}

// loadAvg is /proc/loadavg's 1, 5 and 15 minute averages.
type loadAvg [3]float64

func (l loadAvg) String() string { return fmt.Sprintf("%.2f %.2f %.2f", l[0], l[1], l[2]) }

func readLoadAvg() loadAvg {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return loadAvg{}
	}
	l, _ := parseLoadAvg(string(b))
	return l
}

func parseLoadAvg(s string) (loadAvg, error) {
	var l loadAvg
	f := strings.Fields(s)
	if len(f) < 3 {
		return l, fmt.Errorf("loadavg %q: want three averages", s)
	}
	for i := range l {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return l, fmt.Errorf("loadavg %q: %w", s, err)
		}
		l[i] = v
	}
	return l, nil
}

// stageTime is the mean time per read of one readtrace stage.
type stageTime struct {
	stage string
	count float64
	mean  time.Duration
}

// reStage matches a sum or count of a stage histogram: the controller's
// tandem_read_stage_seconds and the replica's
// tandem_compute_read_stage_seconds.
var reStage = regexp.MustCompile(`^(tandem_(?:compute_)?read_stage_seconds)_(sum|count)\{stage="([a-z]+)"\} ([0-9.eE+-]+)$`)

// parseStages reads the sums and counts of histogram name's stages from a
// Prometheus text exposition.
func parseStages(metrics, name string) map[string][2]float64 {
	out := map[string][2]float64{}
	sc := bufio.NewScanner(strings.NewReader(metrics))
	for sc.Scan() {
		m := reStage.FindStringSubmatch(sc.Text())
		if m == nil || m[1] != name {
			continue
		}
		v, err := strconv.ParseFloat(m[4], 64)
		if err != nil {
			continue
		}
		e := out[m[3]]
		if m[2] == "sum" {
			e[0] = v
		} else {
			e[1] = v
		}
		out[m[3]] = e
	}
	return out
}

// The stage orders of the controller (pkg/readtrace) and of a replica
// (its command handling, then the runtime's peek).
var (
	controllerStages = []string{"pgwire", "planning", "admission", "timestamp", "controller", "replica", "response"}
	replicaStages    = []string{"command", "runtime"}
)

// stageDeltas is the mean time per read of each stage in order between
// two scrapes.
func stageDeltas(order []string, before, after map[string][2]float64) []stageTime {
	var out []stageTime
	for _, s := range order {
		a, ok := after[s]
		if !ok {
			continue
		}
		b := before[s]
		n := a[1] - b[1]
		st := stageTime{stage: s, count: n}
		if n > 0 {
			st.mean = time.Duration((a[0] - b[0]) / n * float64(time.Second))
		}
		out = append(out, st)
	}
	return out
}
