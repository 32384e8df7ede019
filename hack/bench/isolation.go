package main

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/hack/bench/internal/plot"
	"github.com/tandemdb/tandem/hack/bench/internal/report"
	"github.com/tandemdb/tandem/hack/internal/proc"
)

// isolationParams sizes the isolation scenario.
type isolationParams struct {
	bigKeys, smallKeys int // KEY VALUE sources: churned and read
	valueSize          int
	capacityFor        time.Duration
	warmup, quiet      time.Duration
	churn              time.Duration
	repeats            int
	grace              time.Duration
	abRounds           int // hydrations each way in hydrationAB
}

func isolationSizes(e *env) isolationParams {
	return isolationParams{
		bigKeys:     pick(e, 300_000, 1_000_000),
		smallKeys:   10_000,
		valueSize:   64,
		capacityFor: pick(e, 2*time.Second, 5*time.Second),
		warmup:      pick(e, 2*time.Second, 5*time.Second),
		quiet:       pick(e, 4*time.Second, 10*time.Second),
		churn:       pick(e, 12*time.Second, 30*time.Second),
		repeats:     pick(e, 1, 3),
		grace:       pick(e, 5*time.Second, 15*time.Second),
		abRounds:    pick(e, 3, 6),
	}
}

// runIsolation measures reads while the maintenance runtime hydrates:
// arms solo (enable_compute_interactive_dataflows off) and two_runtime
// (on), each on a fresh controller, and two_runtime_unbounded: two_runtime
// with the maintenance step bounds off (stepBoundParams at 0), so that the
// bounds' cost in hydration time and their effect on the longest step
// (max_step_ms_maintenance) are measured side by side in one run.
func runIsolation(ctx context.Context, e *env) (*result, error) {
	return runRuntimeArms(ctx, e, "isolation",
		"isolation: read latency while an index hydrates (shaded: churn)",
		"isolation: read latency CDF during churn and quiet", isolationArm,
		runtimeArm{unboundedArm, true, isolationArm})
}

// unboundedArm is the name of the isolation arm that runs with the step
// bounds off.
const unboundedArm = "two_runtime_unbounded"

// stepBoundParams are the system parameters that bound a maintenance
// worker's step (0 turns each off); the unbounded arm sets them to 0, and
// every arm reports the values it ran with (limit_<parameter>).
var stepBoundParams = []string{"source_step_items", "arrange_step_updates", "worker_step_budget_ms"}

// setStepBounds turns the step bounds off (on false) or leaves the
// defaults.
func setStepBounds(ctx context.Context, e *env, admin *pgx.Conn, on bool) error {
	if on {
		return nil
	}
	e.logf("  ALTER SYSTEM SET %s = 0 (step bounds off)", strings.Join(stepBoundParams, ", "))
	return setStepBoundsTo(ctx, admin, false)
}

// setStepBoundsTo sets every step bound to its default (on) or to 0.
func setStepBoundsTo(ctx context.Context, admin *pgx.Conn, on bool) error {
	for _, name := range stepBoundParams {
		stmt := "ALTER SYSTEM SET " + name + " = 0"
		if on {
			stmt = "ALTER SYSTEM RESET " + name
		}
		if err := require(ctx, admin, stmt, stmt); err != nil {
			return err
		}
	}
	return nil
}

// setInteractive flips enable_compute_interactive_dataflows and waits for
// the replica to answer again: the flag rolls replicas, and a replica that
// cannot start the interactive runtime is reported as the missing feature.
func setInteractive(ctx context.Context, e *env, c *proc.Controller, conn *pgx.Conn, on bool) error {
	val := "off"
	if on {
		val = "on"
	}
	if err := require(ctx, conn, "ALTER SYSTEM SET enable_compute_interactive_dataflows", "ALTER SYSTEM SET enable_compute_interactive_dataflows = "+val); err != nil {
		return err
	}
	if !on {
		return nil
	}
	e.logf("  waiting for the replica to restart with the interactive runtime")
	deadline := time.Now().Add(30 * time.Second)
	var lastErr error
	for time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		procs, err := replicaProcesses(ctx, c)
		if err != nil {
			return err
		}
		running, restarts, lastExit := true, 0, ""
		for _, r := range procs {
			for _, pr := range r.Processes {
				running = running && pr.State == "running"
				restarts += pr.Restarts
				if pr.LastExit != "" {
					lastExit = pr.LastExit
				}
			}
		}
		if restarts > 1 {
			return &missingError{feature: "a replica that runs with the interactive runtime (enable_compute_interactive_dataflows = on)",
				cause: fmt.Errorf("replica restarted %d times, last exit %q; see %s/logs", restarts, lastExit, c.DataDir)}
		}
		if !running {
			continue
		}
		if _, err := c.Get(ctx, "/readyz"); err != nil {
			lastErr = err
			continue
		}
		lastErr = nil
		// Stable for a moment: a crash-looping replica shows up as restarts.
		time.Sleep(2 * time.Second)
		procs, err = replicaProcesses(ctx, c)
		if err != nil {
			return err
		}
		again := 0
		for _, r := range procs {
			for _, pr := range r.Processes {
				again += pr.Restarts
			}
		}
		if again > restarts {
			continue
		}
		return nil
	}
	return fmt.Errorf("replica not ready after enabling the interactive runtime: %v", lastErr)
}

func isolationArm(ctx context.Context, e *env, p isolationParams, name string, interactive bool) (*report.Arm, []plot.Series, []plot.Phase, error) {
	c, admin, err := startChurnArm(ctx, e, p, interactive, []stmt{
		{"KEY VALUE load generator source", fmt.Sprintf("CREATE SOURCE small FROM LOAD GENERATOR KEY VALUE (KEYS %d, VALUE SIZE %d)", p.smallKeys, p.valueSize)},
		{"CREATE INDEX on a source", "CREATE INDEX small_idx ON small (key)"},
		{"CREATE TABLE", "CREATE TABLE t (k bigint, v text)"},
		{"CREATE INDEX on a table", "CREATE INDEX t_k ON t (k)"},
		{"INSERT of many rows", tableRows(tableKeys)},
	})
	if err != nil {
		return nil, nil, nil, err
	}
	defer c.Stop()
	defer admin.Close(context.Background())
	if err := setStepBounds(ctx, e, admin, name != unboundedArm); err != nil {
		return nil, nil, nil, err
	}
	// The first point read waits for small_idx to hydrate.
	if err := waitQuery(ctx, admin, "serializable point read on an index", "SELECT value FROM small WHERE key = 1", 1, time.Minute); err != nil {
		return nil, nil, nil, err
	}
	if err := require(ctx, admin, "introspection relation introspection.frontiers", "SELECT id, write_frontier FROM introspection.frontiers"); err != nil {
		return nil, nil, nil, err
	}

	connect := serializable(c)
	readers, err := openClients(ctx, 4, connect)
	if err != nil {
		return nil, nil, nil, err
	}
	defer readers.close()
	pollers, err := openClients(ctx, 2, connect)
	if err != nil {
		return nil, nil, nil, err
	}
	defer pollers.close()

	strict, err := openClients(ctx, 2, c.Connect) // the session default: strict serializable
	if err != nil {
		return nil, nil, nil, err
	}
	defer strict.close()

	var stalenessMu sync.Mutex
	var staleness []timedLag
	pointRead := &readLoad{name: "point_read", workers: len(readers.conns), maxRate: 200, op: func(ctx context.Context, w int) error {
		key := rand.IntN(p.smallKeys)
		// A literal key, as a console or psql sends it; see pointSQL.
		n, err := readers.query(ctx, w, fmt.Sprintf("SELECT value FROM small WHERE key = %d", key))
		if err == nil && n != 1 {
			err = fmt.Errorf("point read of key %d returned %d rows, want 1", key, n)
		}
		return err
	}}
	introspection := &readLoad{name: "introspection", workers: len(pollers.conns), maxRate: 20, op: func(ctx context.Context, w int) error {
		conn, err := pollers.conn(ctx, w)
		if err != nil {
			return err
		}
		rows, err := conn.Query(ctx, "SELECT id, write_frontier FROM introspection.frontiers")
		if err != nil {
			return err
		}
		var newest int64
		for rows.Next() {
			var id string
			var wf *int64
			if err := rows.Scan(&id, &wf); err != nil {
				rows.Close()
				return err
			}
			if wf != nil && *wf > newest {
				newest = *wf
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		// Staleness: how far the newest frontier the answer shows lags
		// the wall clock when the answer arrives.
		if newest > 0 {
			lag := time.Duration(time.Now().UnixMilli()-newest) * time.Millisecond
			stalenessMu.Lock()
			staleness = append(staleness, timedLag{time.Now(), max(lag, 0)})
			stalenessMu.Unlock()
		}
		return nil
	}}
	// Strict-serializable point reads of a table index: with no concurrent
	// write they read at the oracle's read timestamp and wait for nothing
	// (docs/design/controller.md, "Read timestamps").
	pointReadStrict := &readLoad{name: "point_read_strict", workers: len(strict.conns), maxRate: 100, op: func(ctx context.Context, w int) error {
		key := rand.IntN(tableKeys)
		n, err := strict.query(ctx, w, fmt.Sprintf("SELECT v FROM t WHERE k = %d", key))
		if err == nil && n != 1 {
			err = fmt.Errorf("strict point read of key %d returned %d rows, want 1", key, n)
		}
		return err
	}}
	kinds := []*readLoad{pointRead, pointReadStrict, introspection}
	for _, k := range kinds {
		if err := k.measure(ctx, e, p.capacityFor); err != nil {
			return nil, nil, nil, err
		}
	}

	addrs, err := replicaMetricsAddrs(ctx, c)
	if err != nil {
		return nil, nil, nil, err
	}
	var phaseSteps phaseMaxSteps
	run, err := runChurnTimeline(ctx, e, "isolation/"+name, p, admin, kinds, func(ctx context.Context, r *churnRun) error {
		return phaseSteps.watch(ctx, addrs, r)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	samples, quiet, churn, origin, hydrations := run.samples, run.quiet, run.churn, run.origin, run.hydrations

	arm := report.NewArm(name)
	for _, k := range kinds {
		if err := addLoad(arm, k.name, k, samples[k.name], churn); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := addLimits(ctx, arm, admin); err != nil {
		return nil, nil, nil, err
	}
	maxSteps, err := replicaMaxSteps(ctx, c)
	if err != nil {
		return nil, nil, nil, err
	}
	var maxStep time.Duration
	for _, role := range sortedKeys(maxSteps) {
		d := maxSteps[role]
		if role == "" {
			role = "solo" // a solo replica's series carry no role label
		}
		arm.Float("max_step_ms_"+role, float64(d.Milliseconds()))
		maxStep = max(maxStep, d)
	}
	arm.Float("max_step_ms", float64(maxStep.Milliseconds()))
	// The true longest step (tandem_compute_worker_max_step_seconds, reset
	// at every phase start), during churn and quiet; it replaces the
	// histogram bound above when the replicas export it.
	for _, w := range phaseSteps.where {
		e.logf("  longest steps, %s", strings.TrimSpace(w))
	}
	if !phaseSteps.missing {
		for role, d := range phaseSteps.churn {
			arm.Float("max_step_ms_"+cmp.Or(role, "solo"), float64(d.Milliseconds()))
		}
		for role, d := range phaseSteps.quiet {
			arm.Float("max_step_ms_"+cmp.Or(role, "solo")+"_quiet", float64(d.Milliseconds()))
		}
	}
	for _, k := range kinds {
		if err := addLoad(arm, k.name+"_quiet", k, samples[k.name], quiet); err != nil {
			return nil, nil, nil, err
		}
	}
	stalenessMu.Lock()
	arm.Latency("introspection_staleness", lagSummary(staleness, churn))
	arm.Latency("introspection_staleness_quiet", lagSummary(staleness, quiet))
	stalenessMu.Unlock()
	arm.Latency("hydration", hydrations.Summary())
	if name == "two_runtime" {
		// The reads have stopped: the bounds' cost in hydration time,
		// side by side.
		on, off, err := hydrationAB(ctx, e, admin, p.abRounds)
		if err != nil {
			return nil, nil, nil, err
		}
		arm.Latency("hydration_ab_bounded", on.Summary())
		arm.Latency("hydration_ab_unbounded", off.Summary())
		if o := off.Quantile(0.5); o > 0 {
			arm.Float("hydration_ab_ratio", float64(on.Quantile(0.5))/float64(o))
		}
	}
	for _, k := range kinds {
		addRates(arm, k)
	}
	var series []plot.Series
	for _, k := range kinds {
		series = append(series, plot.Series{Name: name + " " + k.name, Points: points(samples[k.name], origin)})
	}
	return arm, series, plotPhases(churn, origin), nil
}

// waitQuery retries sql until it returns want rows or timeout passes.
func waitQuery(ctx context.Context, conn *pgx.Conn, feature, sql string, want int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		qctx, cancel := context.WithTimeout(ctx, timeout)
		n, err := countRows(qctx, conn, sql)
		cancel()
		if err == nil && n == want {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if err == nil {
				err = fmt.Errorf("%d rows, want %d", n, want)
			}
			return &missingError{feature: feature + " (" + sql + ")", cause: err}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// tableKeys is the size of the isolation scenario's table t.
const tableKeys = 1000

// tableRows is an INSERT of keys 0..n-1 into t.
func tableRows(n int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO t VALUES ")
	for k := range n {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, 'v%d')", k, k)
	}
	return b.String()
}

// benchLimits are the system parameters that bound reads and steps; each
// arm states the values it ran with.
var benchLimits = []string{"max_concurrent_peeks", "max_concurrent_one_shot_reads", "max_queued_reads",
	"source_step_items", "arrange_step_updates", "worker_step_budget_ms"}

// addLimits records the read-admission and step bounds in force as
// integer metrics of the arm (limit_<parameter>).
func addLimits(ctx context.Context, arm *report.Arm, admin *pgx.Conn) error {
	for _, name := range benchLimits {
		var v string
		if err := admin.QueryRow(ctx, "SHOW "+name).Scan(&v); err != nil {
			return fmt.Errorf("SHOW %s: %w", name, err)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("SHOW %s = %q: %w", name, v, err)
		}
		arm.Int("limit_"+name, n)
	}
	return nil
}
