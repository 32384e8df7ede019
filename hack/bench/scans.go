package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/hack/bench/internal/load"
	"github.com/tandemdb/tandem/hack/bench/internal/plot"
	"github.com/tandemdb/tandem/hack/bench/internal/report"
	"github.com/tandemdb/tandem/hack/bench/internal/stats"
	"github.com/tandemdb/tandem/hack/internal/proc"
)

// walkMetric counts a replica's index peek walks by placement.
const walkMetric = "tandem_compute_peek_walks_total"

// walkArm is one peek-placement arm: the system parameters it sets.
type walkArm struct {
	name string
	mode string // peek_walk_mode
}

// walkArms are the arms of scans and skew, named as the benchmark issue
// requires. The offload arm offloads every walk, so any difference from
// inline is the placement and not a budget choice.
var walkArms = []walkArm{{"inline", "inline"}, {"offload", "offload"}}

// scanKind is a way of running the background full scans. "full" sends
// every row to the client, as the benchmark issue asks; "walk" adds a
// filter no row passes (key < 0 is no index lookup, so the plan stays a
// fast-path scan and the filter runs on the replica during the walk): the
// same walk without the transfer of the result, which isolates the
// walk's placement from the response path.
type scanKind struct {
	name   string // metric infix: "" for full
	filter string
	rows   func(keys int) int
}

var scanKinds = []scanKind{
	{"", "", func(keys int) int { return keys }},
	{"walk_", " WHERE key < 0", func(int) int { return 0 }},
}

// scansParams sizes the scans scenario.
type scansParams struct {
	sizes       []int // keys per scanned source, the swept scan cost
	valueSize   int
	scanners    int
	capacityFor time.Duration
	warmup      time.Duration
	measure     time.Duration
	repeats     int
	grace       time.Duration
}

func scansSizes(e *env) scansParams {
	return scansParams{
		sizes:       pick(e, []int{5_000, 20_000, 80_000}, []int{5_000, 50_000, 200_000}),
		valueSize:   32,
		scanners:    3,
		capacityFor: pick(e, 2*time.Second, 5*time.Second),
		warmup:      pick(e, 2*time.Second, 5*time.Second),
		measure:     pick(e, 8*time.Second, 20*time.Second),
		repeats:     pick(e, 1, 3),
		grace:       pick(e, 5*time.Second, 15*time.Second),
	}
}

// runScans measures point lookups on an index while 3 clients run full
// scans of the same index (see scanLoad), sweeping the scan cost (keys),
// with peek walks inline and offloaded. Both arms share one controller:
// peek_walk_mode takes effect on the replica without a restart, and
// sharing spares hydrating every source twice on a 2-core machine.
func runScans(ctx context.Context, e *env) (*result, error) {
	p := scansSizes(e)
	c, admin, stop, err := e.startWithAdmin(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	for _, n := range p.sizes {
		for _, s := range []stmt{
			{"KEY VALUE load generator source", fmt.Sprintf("CREATE SOURCE kv%d FROM LOAD GENERATOR KEY VALUE (KEYS %d, VALUE SIZE %d)", n, n, p.valueSize)},
			{"CREATE INDEX on a source", fmt.Sprintf("CREATE INDEX kv%d_idx ON kv%d (key)", n, n)},
		} {
			if err := require(ctx, admin, s.feature, s.sql); err != nil {
				return nil, err
			}
		}
	}
	for _, n := range p.sizes {
		if err := waitQuery(ctx, admin, "serializable point read on an index", fmt.Sprintf("SELECT * FROM kv%d WHERE key = 1", n), 1, 2*time.Minute); err != nil {
			return nil, err
		}
		// Both reads must be fast-path peeks on the index: a one-shot
		// dataflow would measure dataflow construction, not walks.
		if err := requirePlan(ctx, admin, fmt.Sprintf("SELECT * FROM kv%d WHERE key = 1", n), "Fast path: lookup"); err != nil {
			return nil, err
		}
		for _, k := range scanKinds {
			if err := requirePlan(ctx, admin, fmt.Sprintf("SELECT * FROM kv%d%s", n, k.filter), "Fast path: scan"); err != nil {
				return nil, err
			}
		}
	}
	readers, err := openClients(ctx, 8, serializable(c))
	if err != nil {
		return nil, err
	}
	defer readers.close()
	scanners, err := openClients(ctx, p.scanners, serializable(c))
	if err != nil {
		return nil, err
	}
	defer scanners.close()

	rep := &report.Report{}
	var cdf []plot.Series
	var sweep []plot.XYSeries
	for _, wa := range walkArms {
		before, err := enterWalkArm(ctx, e, admin, c, "scans", wa)
		if err != nil {
			return &result{report: rep}, err
		}
		arm := report.NewArm(wa.name)
		// The offered rate is 30% of the lookups' quiet capacity on the
		// smallest source, the same for every size: a rate the system
		// sustains with ease when no scan runs. Behind the scans an arm may
		// no longer sustain it; the queueing that follows is the result.
		// (Capacity measured behind inline scans falls to ~1/s at 80k keys,
		// leaving too few samples to say anything.)
		quiet := &readLoad{name: "lookup", workers: len(readers.conns), maxRate: 50, op: func(ctx context.Context, w int) error {
			_, err := readers.query(ctx, w, fmt.Sprintf("SELECT * FROM kv%d WHERE key = %d", p.sizes[0], rand.IntN(p.sizes[0])))
			return err
		}}
		if err := quiet.measure(ctx, e, p.capacityFor); err != nil {
			return &result{report: rep}, err
		}
		addRates(arm, quiet)
		lines := make([]plot.XYSeries, len(scanKinds))
		for j, k := range scanKinds {
			lines[j].Name = fmt.Sprintf("%s, %s", wa.name, map[string]string{"": "full scans", "walk_": "walk-only scans"}[k.name])
		}
		for i, n := range p.sizes {
			lookup := &readLoad{name: "lookup", workers: len(readers.conns), capacity: quiet.capacity, rate: quiet.rate, op: func(ctx context.Context, w int) error {
				key := rand.IntN(n)
				nr, err := readers.query(ctx, w, fmt.Sprintf("SELECT * FROM kv%d WHERE key = %d", n, key))
				if err == nil && nr != 1 {
					err = fmt.Errorf("lookup of key %d returned %d rows, want 1", key, nr)
				}
				return err
			}}
			for j, k := range scanKinds {
				samples, scans, measured, origin, err := scansTimeline(ctx, e, p, n, k, lookup, scanners)
				if err != nil {
					return &result{report: rep}, fmt.Errorf("arm %s, %d keys: %w", wa.name, n, err)
				}
				col := load.Collect(samples, inPhases(measured))
				if col.Errors > 0 {
					return &result{report: rep}, fmt.Errorf("arm %s, %d keys: %d lookups failed, first: %w", wa.name, n, col.Errors, col.FirstError)
				}
				sum := col.Latency.Summary()
				arm.Latency(fmt.Sprintf("lookup_%s%dk", k.name, n/1000), sum)
				lines[j].Points = append(lines[j].Points, plot.XY{X: float64(n), Y: sum.P99Ms, LowerBound: sum.P99LowerBound})
				arm.Latency(fmt.Sprintf("scan_%s%dk", k.name, n/1000), scans.Summary())
				if i == len(p.sizes)-1 && k.name == "" {
					// The issue's `lookup` is the costliest full scan's.
					if err := addLoad(arm, "lookup", lookup, samples, measured); err != nil {
						return &result{report: rep}, err
					}
					cdf = append(cdf, plot.Series{Name: fmt.Sprintf("%s %dk keys", wa.name, n/1000), Points: points(within(samples, measured), origin)})
				}
			}
		}
		after, err := replicaWalks(ctx, c)
		if err != nil {
			return &result{report: rep}, err
		}
		arm.Int("walks_inline", int64(after["inline"]-before["inline"]))
		arm.Int("walks_offloaded", int64(after["offloaded"]-before["offloaded"]))
		rep.Arms = append(rep.Arms, arm)
		sweep = append(sweep, lines...)
	}
	return &result{report: rep, figures: []figure{
		{"p99", func(w ioWriter) error {
			return plot.Sweep(w, fmt.Sprintf("scans: point lookup p99 behind %d scanners, by scanned index size", p.scanners), "keys in the scanned index", "lookup p99", sweep)
		}},
		{"cdf", func(w ioWriter) error {
			return plot.CDF(w, fmt.Sprintf("scans: point lookup latency behind %d full scans of %dk keys", p.scanners, p.sizes[len(p.sizes)-1]/1000), cdf)
		}},
	}}, nil
}

// scanLoad is the background of one size: scanners full-scan the source,
// each pausing for twice its last scan's latency between scans, so that on
// average one scan is in flight. Back-to-back scans would saturate a
// 2-core machine with row encoding and transfer, and the lookups would
// then measure CPU starvation instead of where the walks run.
type scanLoad struct {
	mu      sync.Mutex
	scans   stats.Series
	err     error
	measure bool // record latencies (off during the warm-up)
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

func startScans(ctx context.Context, keys int, kind scanKind, scanners *clients) *scanLoad {
	ctx, cancel := context.WithCancel(ctx)
	l := &scanLoad{stop: cancel}
	for w := range scanners.conns {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			// Stagger the scanners so they do not start in lock-step.
			if sleepUntil(ctx, time.Now().Add(time.Duration(w)*50*time.Millisecond)) != nil {
				return
			}
			for ctx.Err() == nil {
				begin := time.Now()
				// Rows are read and discarded: the cost under test is the
				// replica's walk, not the client's.
				n, err := scanners.query(ctx, w, fmt.Sprintf("SELECT * FROM kv%d%s", keys, kind.filter))
				took := time.Since(begin)
				l.mu.Lock()
				switch {
				case ctx.Err() != nil:
					if l.measure {
						l.scans.RecordCensored(took)
					}
				case err != nil:
					if l.err == nil {
						l.err = fmt.Errorf("scan: %w", err)
					}
				case n != kind.rows(keys):
					if l.err == nil {
						l.err = fmt.Errorf("scan of kv%d%s returned %d rows, want %d", keys, kind.filter, n, kind.rows(keys))
					}
				case l.measure:
					l.scans.Record(took)
				}
				l.mu.Unlock()
				if sleepUntil(ctx, time.Now().Add(2*took)) != nil {
					return
				}
			}
		}()
	}
	return l
}

func (l *scanLoad) setMeasuring(on bool) {
	l.mu.Lock()
	l.measure = on
	l.mu.Unlock()
}

// finish stops the scanners and returns the scans recorded and any error.
func (l *scanLoad) finish() (stats.Series, error) {
	l.stop()
	l.wg.Wait()
	if l.err != nil {
		return l.scans, l.err
	}
	// Scans cut off by the end are censored lower bounds, still a result.
	return l.scans, nil
}

// scansTimeline runs one size: scans start, then lookups arrive open-loop
// through a warm-up and the measured phases. It
// returns the lookups, the scan latencies of the measured span (a scan cut
// off at the end is censored), the measured phases and the origin.
func scansTimeline(ctx context.Context, e *env, p scansParams, keys int, kind scanKind, lookup *readLoad, scanners *clients) ([]load.Sample, stats.Series, []phase, time.Time, error) {
	scans := startScans(ctx, keys, kind, scanners)
	defer scans.stop()
	origin := time.Now().Add(500 * time.Millisecond)
	t := origin.Add(p.warmup)
	var measured []phase
	for range p.repeats {
		measured = append(measured, phase{"scans", t, t.Add(p.measure)})
		t = t.Add(p.measure)
	}
	total := t.Sub(origin)
	e.logf("  %dk keys (%sscans): %d scanners, lookups at %.1f/s for %v", keys/1000, kind.name, p.scanners, lookup.rate, total.Round(time.Second))
	go func() {
		if sleepUntil(ctx, origin.Add(p.warmup)) == nil {
			scans.setMeasuring(true)
		}
	}()
	samples, err := openLoop(ctx, []*readLoad{lookup}, origin, total, p.grace)
	scanStats, scanErr := scans.finish()
	if err != nil {
		return nil, stats.Series{}, nil, time.Time{}, err
	}
	if scanErr != nil {
		return nil, stats.Series{}, nil, time.Time{}, scanErr
	}
	return samples[lookup.name], scanStats, measured, origin, nil
}

// within selects the samples scheduled in one of phases.
func within(samples []load.Sample, phases []phase) []load.Sample {
	keep := inPhases(phases)
	var out []load.Sample
	for _, s := range samples {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// setWalkMode sets peek_walk_mode; the replica applies it without a
// restart (UpdateConfiguration), so no wait follows.
// enterWalkArm switches the replicas to the arm's walk mode and returns
// their walk counters before the arm runs, so the arm can show the mode
// took effect.
func enterWalkArm(ctx context.Context, e *env, admin *pgx.Conn, c *proc.Controller, scenario string, wa walkArm) (map[string]float64, error) {
	e.logf("%s/%s: peek_walk_mode = %s", scenario, wa.name, wa.mode)
	if err := setWalkMode(ctx, admin, wa.mode); err != nil {
		return nil, err
	}
	return replicaWalks(ctx, c)
}

func setWalkMode(ctx context.Context, conn *pgx.Conn, mode string) error {
	return require(ctx, conn, "ALTER SYSTEM SET peek_walk_mode", "ALTER SYSTEM SET peek_walk_mode = '"+mode+"'")
}

// requirePlan checks that EXPLAIN of sql mentions want, so a scenario
// measures the read path it claims to.
func requirePlan(ctx context.Context, conn *pgx.Conn, sql, want string) error {
	_, err := explainWith(ctx, conn, sql, want)
	return err
}

// explainWith returns EXPLAIN's text for sql, or a missingError when it
// does not mention want.
func explainWith(ctx context.Context, conn *pgx.Conn, sql, want string) (string, error) {
	rows, err := conn.Query(ctx, "EXPLAIN "+sql)
	if err != nil {
		return "", &missingError{feature: "EXPLAIN " + sql, cause: err}
	}
	var plan strings.Builder
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			rows.Close()
			return "", err
		}
		for _, v := range vals {
			fmt.Fprintln(&plan, v)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", &missingError{feature: "EXPLAIN " + sql, cause: err}
	}
	if !strings.Contains(plan.String(), want) {
		return "", &missingError{feature: fmt.Sprintf("%q planned as %q", sql, want), cause: fmt.Errorf("plan:\n%s", plan.String())}
	}
	return plan.String(), nil
}

// replicaWalks sums the peek-walk counter by placement across every
// replica process and role.
func replicaWalks(ctx context.Context, c *proc.Controller) (map[string]float64, error) {
	return scrapeCounter(ctx, c, walkMetric, "placement")
}

// parseWalkSample reads one Prometheus text line of walkMetric and returns
// its placement label and value.
func parseWalkSample(line string) (string, float64, bool) {
	return parseCounterSample(line, walkMetric, "placement")
}
