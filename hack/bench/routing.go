package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/tandemdb/tandem/hack/bench/internal/plot"
	"github.com/tandemdb/tandem/hack/bench/internal/report"
)

// routedMetric counts the fast-path peeks a two-runtime replica's
// multiplexer sent to each runtime, by "role".
const routedMetric = "tandem_compute_peeks_routed_total"

// routingPolicies are the values of peek_routing, each an arm
// (docs/design/read-routing.md).
var routingPolicies = []string{"maintenance", "interactive", "sealed_hint"}

// routedRoles are the runtimes a peek can be routed to; both are always
// reported, so a zero share is visible as a zero and not as a gap.
var routedRoles = []string{"maintenance", "interactive"}

// routingSizes is isolation's sizing: the same churn, so the two scenarios'
// numbers can be read together. A full run repeats the (quiet, churn)
// cycle twice instead of three times: three policies on one controller.
func routingSizes(e *env) isolationParams {
	p := isolationSizes(e)
	p.repeats = pick(e, 1, 2)
	return p
}

// runRouting measures, on one two-runtime replica, which runtime serves
// fast-path point reads under each peek_routing policy, quiet and during
// hydration churn, next to the reads' latency. The replica's routed-peek
// counter is read at every phase boundary; a phase's share is the counter's
// growth over it. Policies apply without a restart (UpdateConfiguration),
// so the arms share one controller and run back to back.
func runRouting(ctx context.Context, e *env) (*result, error) {
	p := routingSizes(e)
	c, admin, err := startChurnArm(ctx, e, p, true, []stmt{
		{"KEY VALUE load generator source", fmt.Sprintf("CREATE SOURCE small FROM LOAD GENERATOR KEY VALUE (KEYS %d, VALUE SIZE %d)", p.smallKeys, p.valueSize)},
		{"CREATE INDEX on a source", "CREATE INDEX small_idx ON small (key)"},
	})
	if err != nil {
		return nil, err
	}
	defer c.Stop()
	defer admin.Close(context.Background())
	const read = "SELECT value FROM small WHERE key = %d"
	if err := waitQuery(ctx, admin, "serializable point read on an index", fmt.Sprintf(read, 1), 1, time.Minute); err != nil {
		return nil, err
	}
	if err := requirePlan(ctx, admin, fmt.Sprintf(read, 1), "Fast path: lookup"); err != nil {
		return nil, err
	}
	// The replica's address is resolved once: the policy changes do not
	// restart it, and the controller's status endpoint can wait behind the
	// churn's DDL, which would move the boundary reads.
	metricsAddrs, err := replicaMetricsAddrs(ctx, c)
	if err != nil {
		return nil, err
	}
	if _, err := scrapeCounterAt(ctx, metricsAddrs, routedMetric, "role"); err != nil {
		return nil, err
	}
	readers, err := openClients(ctx, 4, serializable(c))
	if err != nil {
		return nil, err
	}
	defer readers.close()

	setPolicy := func(policy string) error {
		return require(ctx, admin, "ALTER SYSTEM SET peek_routing", "ALTER SYSTEM SET peek_routing = '"+policy+"'")
	}
	// Every policy's quiet capacity first; then every arm is offered the
	// same rate, 30% of the smallest (at most 200/s), so the arms differ in
	// the policy and not in the load. On a shared machine the capacities
	// differ by noise as much as by policy; a policy-dependent rate would
	// make that noise a difference in queueing during churn.
	loads := map[string]*readLoad{}
	rate := math.Inf(1)
	for _, policy := range routingPolicies {
		e.logf("routing/%s: peek_routing = %s, capacity", policy, policy)
		if err := setPolicy(policy); err != nil {
			return nil, err
		}
		k := &readLoad{name: "point_read", workers: len(readers.conns), maxRate: 200, op: func(ctx context.Context, w int) error {
			key := rand.IntN(p.smallKeys)
			n, err := readers.query(ctx, w, fmt.Sprintf(read, key))
			if err == nil && n != 1 {
				err = fmt.Errorf("point read of key %d returned %d rows, want 1", key, n)
			}
			return err
		}}
		if err := k.measure(ctx, e, p.capacityFor); err != nil {
			return nil, err
		}
		loads[policy] = k
		rate = math.Min(rate, k.rate)
	}

	rep := &report.Report{}
	var timeline, cdf []plot.Series
	var phases []plot.Phase
	for _, policy := range routingPolicies {
		e.logf("routing/%s: peek_routing = %s, offering %.1f/s", policy, policy, rate)
		if err := setPolicy(policy); err != nil {
			return &result{report: rep}, err
		}
		pointRead := loads[policy]
		pointRead.rate = rate
		var scrapes []routedScrape
		watch := func(ctx context.Context, r *churnRun) error {
			ctx, cancel := context.WithDeadline(ctx, r.origin.Add(10*time.Minute))
			defer cancel()
			var err error
			scrapes, err = scrapeAtBoundaries(ctx, e, metricsAddrs, append(append([]phase(nil), r.quiet...), r.churn...))
			return err
		}
		run, err := runChurnTimeline(ctx, e, "routing/"+policy, p, admin, []*readLoad{pointRead}, watch)
		if err != nil {
			return &result{report: rep}, fmt.Errorf("arm %s: %w", policy, err)
		}
		arm := report.NewArm(policy)
		for _, ph := range []struct {
			suffix string
			phases []phase
		}{{"_quiet", run.quiet}, {"", run.churn}} {
			if err := addLoad(arm, "point_read"+ph.suffix, pointRead, run.samples[pointRead.name], ph.phases); err != nil {
				return &result{report: rep}, err
			}
			share, err := shareOver(scrapes, ph.phases)
			if err != nil {
				return &result{report: rep}, fmt.Errorf("arm %s: %w", policy, err)
			}
			for _, role := range routedRoles {
				arm.Int("routed_"+role+ph.suffix, int64(share.counts[role]))
			}
			if f, ok := share.fraction("interactive"); ok {
				arm.Float("interactive_fraction"+ph.suffix, round(f, 3))
			}
		}
		// The churn's own read through each new index is a fast-path peek
		// too, routed like any other: this many of the churn counts are not
		// the load's.
		arm.Int("churn_peeks", int64(run.hydrations.Count()))
		arm.Float("counter_read_late_ms", float64(maxLate(scrapes).Milliseconds()))
		arm.Latency("hydration", run.hydrations.Summary())
		addRates(arm, pointRead)
		rep.Arms = append(rep.Arms, arm)
		s := plot.Series{Name: policy, Points: points(run.samples[pointRead.name], run.origin)}
		timeline = append(timeline, s)
		cdf = append(cdf, plot.Series{Name: policy + " churn", Points: points(within(run.samples[pointRead.name], run.churn), run.origin)})
		if phases == nil {
			phases = plotPhases(run.churn, run.origin)
		}
	}
	return &result{report: rep, figures: []figure{
		{"timeline", func(w ioWriter) error {
			return plot.Timeline(w, "routing: serializable point reads by peek_routing policy (shaded: churn)", timeline, phases)
		}},
		{"cdf", func(w ioWriter) error {
			return plot.CDF(w, "routing: point read latency during churn, by peek_routing policy", cdf)
		}},
	}}, nil
}

// routedScrape is the routed-peek counter, by role, read at one instant.
type routedScrape struct {
	at     time.Time
	late   time.Duration // when the read completed, after at
	counts map[string]float64
}

// maxLate is the largest delay between a boundary and its counter read:
// the window in which a peek may have been counted in the wrong phase.
func maxLate(scrapes []routedScrape) time.Duration {
	var m time.Duration
	for _, s := range scrapes {
		m = max(m, s.late)
	}
	return m
}

// scrapeAtBoundaries reads the routed-peek counter at the start and end of
// every phase (a boundary shared by two phases is read once), in time
// order, returning when the last boundary has been read.
func scrapeAtBoundaries(ctx context.Context, e *env, addrs []string, phases []phase) ([]routedScrape, error) {
	var at []time.Time
	for _, ph := range phases {
		for _, t := range []time.Time{ph.start, ph.end} {
			dup := false
			for _, u := range at {
				dup = dup || u.Equal(t)
			}
			if !dup {
				at = append(at, t)
			}
		}
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	out := make([]routedScrape, 0, len(at))
	for _, t := range at {
		if err := sleepUntil(ctx, t); err != nil {
			return out, fmt.Errorf("routed-peek counter: run ended before the boundary at %v", t.Format(time.TimeOnly))
		}
		counts, err := scrapeCounterAt(ctx, addrs, routedMetric, "role")
		if err != nil {
			return out, fmt.Errorf("routed-peek counter: %w", err)
		}
		// The counter is read somewhere between the boundary and now:
		// peeks routed in between may be counted in the wrong phase.
		late := time.Since(t)
		if late > 500*time.Millisecond {
			e.logf("  routed-peek counter read %v after its phase boundary", late.Round(time.Millisecond))
		}
		out = append(out, routedScrape{at: t, late: late, counts: counts})
	}
	return out, nil
}

// routeShare is how many peeks each runtime was given over some phases.
type routeShare struct {
	counts map[string]float64
	total  float64
}

// fraction is role's share of the peeks; false when there were none, so an
// empty span is never reported as a 0% or 100% share.
func (s routeShare) fraction(role string) (float64, bool) {
	if s.total <= 0 {
		return 0, false
	}
	return s.counts[role] / s.total, true
}

// shareOver sums, over phases, each role's counter growth from the scrape
// at a phase's start to the one at its end. A missing boundary, or a
// counter that went backwards (the replica restarted and its counters
// began again), is an error: the share would be made up.
func shareOver(scrapes []routedScrape, phases []phase) (routeShare, error) {
	find := func(t time.Time) (map[string]float64, bool) {
		for _, s := range scrapes {
			if s.at.Equal(t) {
				return s.counts, true
			}
		}
		return nil, false
	}
	share := routeShare{counts: map[string]float64{}}
	for _, ph := range phases {
		before, ok1 := find(ph.start)
		after, ok2 := find(ph.end)
		if !ok1 || !ok2 {
			return routeShare{}, fmt.Errorf("routed-peek counter not read at both ends of the %s phase at %v", ph.name, ph.start.Format(time.TimeOnly))
		}
		roles := map[string]bool{}
		for r := range before {
			roles[r] = true
		}
		for r := range after {
			roles[r] = true
		}
		for r := range roles {
			d := after[r] - before[r]
			if d < 0 {
				return routeShare{}, fmt.Errorf("routed-peek counter for %s went backwards over the %s phase (%v -> %v): the replica restarted", r, ph.name, before[r], after[r])
			}
			share.counts[r] += d
			share.total += d
		}
	}
	return share, nil
}
