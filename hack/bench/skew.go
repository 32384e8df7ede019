package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tandemdb/tandem/hack/bench/internal/load"
	"github.com/tandemdb/tandem/hack/bench/internal/plot"
	"github.com/tandemdb/tandem/hack/bench/internal/report"
	"github.com/tandemdb/tandem/hack/bench/internal/stats"
)

// skewParams sizes the skew scenario.
type skewParams struct {
	keys        int // rows, all in partition 0: the skewed key's values
	valueSize   int
	capacityFor time.Duration
	warmup      time.Duration
	quiet       time.Duration
	slot        time.Duration // one injection per slot, at its start
	repeats     int
	grace       time.Duration
}

func skewSizes(e *env) skewParams {
	return skewParams{
		keys:        pick(e, 300_000, 1_000_000),
		valueSize:   16,
		capacityFor: pick(e, 2*time.Second, 5*time.Second),
		warmup:      pick(e, 2*time.Second, 5*time.Second),
		quiet:       pick(e, 6*time.Second, 15*time.Second),
		slot:        pick(e, 8*time.Second, 15*time.Second),
		repeats:     pick(e, 1, 3), // injections of each kind
		grace:       pick(e, 5*time.Second, 15*time.Second),
	}
}

// The skewed source has PARTITIONS 1, so its partition index holds one key
// with every row as its values; its key index is selective.
const normalLookup = "SELECT * FROM skewed WHERE key = %d"

// skewedKind is one way of looking up the skewed key. Both walk every value
// of the key on the replica. "walk" filters every row out on the replica
// (key < 0 is no index lookup, so the planner keeps the partition lookup
// and applies it during the walk): it isolates where the walk runs.
// "full_result" returns every row, as a careless client would, adding the
// transfer of the result through the replica, controller and pgwire.
type skewedKind struct {
	name string
	sql  string
	rows func(keys int) int
}

var skewedKinds = []skewedKind{
	{"walk", "SELECT * FROM skewed WHERE partition = 0 AND key < 0", func(int) int { return 0 }},
	{"full_result", "SELECT * FROM skewed WHERE partition = 0", func(keys int) int { return keys }},
}

// runSkew injects lookups on a key with very many values into a steady
// open-loop stream of selective lookups and counts the selective lookups
// it delays past twice their quiet p99, with peek walks inline and
// offloaded (one controller; the mode applies without a restart).
func runSkew(ctx context.Context, e *env) (*result, error) {
	p := skewSizes(e)
	c, admin, stop, err := e.startWithAdmin(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	for _, s := range []stmt{
		{"KEY VALUE load generator source", fmt.Sprintf("CREATE SOURCE skewed FROM LOAD GENERATOR KEY VALUE (KEYS %d, PARTITIONS 1, VALUE SIZE %d)", p.keys, p.valueSize)},
		{"CREATE INDEX on a source", "CREATE INDEX skewed_key_idx ON skewed (key)"},
		{"CREATE INDEX on a low-cardinality column", "CREATE INDEX skewed_partition_idx ON skewed (partition)"},
	} {
		if err := require(ctx, admin, s.feature, s.sql); err != nil {
			return nil, err
		}
	}
	if err := waitQuery(ctx, admin, "serializable point read on an index", fmt.Sprintf(normalLookup, 1), 1, 3*time.Minute); err != nil {
		return nil, err
	}
	if err := waitQuery(ctx, admin, "lookup on the skewed key", skewedKinds[1].sql, p.keys, 3*time.Minute); err != nil {
		return nil, err
	}
	// Each read must be a fast-path lookup, each in its own index (EXPLAIN
	// names indexes by id: the two must differ).
	var used []string
	for _, q := range []string{fmt.Sprintf(normalLookup, 1), skewedKinds[0].sql, skewedKinds[1].sql} {
		plan, err := explainWith(ctx, admin, q, "Fast path: lookup")
		if err != nil {
			return nil, err
		}
		used = append(used, lookupIndex(plan))
	}
	if used[0] == "" || used[0] == used[1] || used[1] != used[2] {
		return nil, &missingError{feature: "lookups on two indexes of one source planned on different indexes", cause: fmt.Errorf("indexes used: %q", used)}
	}
	readers, err := openClients(ctx, 8, serializable(c))
	if err != nil {
		return nil, err
	}
	defer readers.close()
	// The injector's own connection, reopened if a cut-off lookup closed it.
	injector, err := openClients(ctx, 1, serializable(c))
	if err != nil {
		return nil, err
	}
	defer injector.close()

	rep := &report.Report{}
	var timeline []plot.Series
	var phases []plot.Phase
	for _, wa := range walkArms {
		before, err := enterWalkArm(ctx, e, admin, c, "skew", wa)
		if err != nil {
			return &result{report: rep}, err
		}
		lookup := &readLoad{name: "lookup", workers: len(readers.conns), maxRate: 200, op: func(ctx context.Context, w int) error {
			key := rand.IntN(p.keys)
			n, err := readers.query(ctx, w, fmt.Sprintf(normalLookup, key))
			if err == nil && n != 1 {
				err = fmt.Errorf("lookup of key %d returned %d rows, want 1", key, n)
			}
			return err
		}}
		if err := lookup.measure(ctx, e, p.capacityFor); err != nil {
			return &result{report: rep}, err
		}
		run, err := skewTimeline(ctx, e, p, lookup, injector)
		if err != nil {
			return &result{report: rep}, fmt.Errorf("arm %s: %w", wa.name, err)
		}
		after, err := replicaWalks(ctx, c)
		if err != nil {
			return &result{report: rep}, err
		}
		arm := report.NewArm(wa.name)
		if err := addLoad(arm, "lookup", lookup, run.samples, run.slots); err != nil {
			return &result{report: rep}, err
		}
		if err := addLoad(arm, "lookup_quiet", lookup, run.samples, []phase{run.quiet}); err != nil {
			return &result{report: rep}, err
		}
		quiet := load.Collect(run.samples, inPhases([]phase{run.quiet}))
		quietP99 := quiet.Latency.Quantile(0.99)
		for _, k := range skewedKinds {
			victims, quietSlow := countVictims(run.samples, run.injections[k.name], run.quiet, 2*quietP99)
			suffix := "_" + k.name
			if k.name == skewedKinds[0].name {
				// The issue's `victims`: the walk alone.
				suffix = ""
				arm.Int("slow_in_quiet", int64(quietSlow))
			}
			arm.Int("victims"+suffix, int64(victims))
			arm.Latency("skewed_"+k.name, run.skewed[k.name].Summary())
		}
		arm.Float("victim_threshold_ms", round(float64(2*quietP99)/float64(time.Millisecond), 2))
		addRates(arm, lookup)
		arm.Int("walks_inline", int64(after["inline"]-before["inline"]))
		arm.Int("walks_offloaded", int64(after["offloaded"]-before["offloaded"]))
		rep.Arms = append(rep.Arms, arm)
		timeline = append(timeline, plot.Series{Name: wa.name + " lookup", Points: points(run.samples, run.origin)})
		if phases == nil {
			for _, in := range run.all {
				phases = append(phases, plot.Phase{Name: in.name, Start: in.start.Sub(run.origin).Seconds(), End: in.end.Sub(run.origin).Seconds()})
			}
		}
	}
	return &result{report: rep, figures: []figure{
		{"timeline", func(w ioWriter) error {
			return plot.Timeline(w, fmt.Sprintf("skew: selective lookups; shaded: a lookup of one key with %dk values (first arm)", p.keys/1000), timeline, phases)
		}},
	}}, nil
}

// skewRun is one arm's timeline.
type skewRun struct {
	origin     time.Time
	quiet      phase
	slots      []phase
	injections map[string][]phase // per kind, each skewed lookup's run
	all        []phase            // every skewed lookup, named by kind
	skewed     map[string]*stats.Series
	samples    []load.Sample
}

// skewTimeline runs a warm-up, a quiet phase and repeats slots, issuing one
// skewed lookup at the start of each slot, the kinds alternating (or when the previous one
// finished, if later) while the selective lookups arrive open-loop
// throughout. A skewed lookup still running at the end is censored.
func skewTimeline(ctx context.Context, e *env, p skewParams, lookup *readLoad, injector *clients) (*skewRun, error) {
	r := &skewRun{origin: time.Now().Add(500 * time.Millisecond), injections: map[string][]phase{}, skewed: map[string]*stats.Series{}}
	for _, k := range skewedKinds {
		r.skewed[k.name] = &stats.Series{}
	}
	t := r.origin.Add(p.warmup)
	r.quiet = phase{"quiet", t, t.Add(p.quiet)}
	t = t.Add(p.quiet)
	for range p.repeats * len(skewedKinds) {
		r.slots = append(r.slots, phase{"skew", t, t.Add(p.slot)})
		t = t.Add(p.slot)
	}
	total := t.Sub(r.origin)
	e.logf("  lookups at %.1f/s for %v, %d skewed lookups", lookup.rate, total.Round(time.Second), len(r.slots))

	injCtx, stop := context.WithDeadline(ctx, r.origin.Add(total+p.grace))
	defer stop()
	injDone := make(chan error, 1)
	go func() {
		for i, s := range r.slots {
			if sleepUntil(injCtx, s.start) != nil {
				break
			}
			k := skewedKinds[i%len(skewedKinds)]
			begin := time.Now()
			n, err := injector.query(injCtx, 0, k.sql)
			end := time.Now()
			in := phase{k.name, begin, end}
			r.injections[k.name] = append(r.injections[k.name], in)
			r.all = append(r.all, in)
			switch {
			case injCtx.Err() != nil:
				r.skewed[k.name].RecordCensored(end.Sub(begin))
			case err != nil:
				injDone <- fmt.Errorf("skewed lookup %s: %w", k.name, err)
				return
			case n != k.rows(p.keys):
				injDone <- fmt.Errorf("skewed lookup %s returned %d rows, want %d", k.name, n, k.rows(p.keys))
				return
			default:
				r.skewed[k.name].Record(end.Sub(begin))
			}
		}
		injDone <- nil
	}()
	samples, err := openLoop(ctx, []*readLoad{lookup}, r.origin, total, p.grace)
	injErr := <-injDone
	stop()
	if err != nil {
		return nil, err
	}
	if injErr != nil {
		return nil, injErr
	}
	if len(r.all) == 0 {
		return nil, fmt.Errorf("no skewed lookup was issued")
	}
	r.samples = samples[lookup.name]
	return r, nil
}

// countVictims counts the selective lookups that were outstanding during
// a skewed lookup (their [scheduled, completed] span overlaps one) and
// took longer than threshold; as a noise floor it also counts the lookups
// of the quiet phase above threshold. A censored lookup counts when its
// lower bound already exceeds the threshold.
func countVictims(samples []load.Sample, injections []phase, quiet phase, threshold time.Duration) (victims, quietSlow int) {
	for _, s := range samples {
		if s.Err != nil && !s.Censored {
			continue
		}
		if s.Latency <= threshold {
			continue
		}
		if quiet.contains(s.Scheduled) {
			quietSlow++
			continue
		}
		end := s.Scheduled.Add(s.Latency)
		for _, in := range injections {
			if s.Scheduled.Before(in.end) && end.After(in.start) {
				victims++
				break
			}
		}
	}
	return victims, quietSlow
}

// lookupIndex returns the index id a fast-path lookup plan reads, or "".
func lookupIndex(plan string) string {
	_, rest, ok := strings.Cut(plan, " in index ")
	if !ok {
		return ""
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
