package main

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/tandemdb/tandem/hack/bench/internal/load"
	"github.com/tandemdb/tandem/hack/bench/internal/plot"
	"github.com/tandemdb/tandem/hack/bench/internal/report"
)

// targetUtilization is the fraction of measured capacity an arm is driven
// at: far enough below saturation that a percentile is a statement about
// the system rather than about a queue the benchmark itself built.
const targetUtilization = 0.3

// readLoad is one kind of request an arm issues open-loop.
type readLoad struct {
	name    string
	workers int
	// maxRate caps the offered rate (arrivals/s) so the load generator
	// does not take the shared machine's cores from the system under test;
	// the reported utilization shows when the cap, not 30%, decided.
	maxRate float64
	op      load.Op

	capacity float64 // measured, requests/s
	rate     float64 // offered, requests/s
}

// measure sets the kind's capacity (closed loop for d) and its offered
// rate: targetUtilization of capacity, at most maxRate (and at least one
// request per 20 s, so a very slow arm still gets samples).
func (k *readLoad) measure(ctx context.Context, e *env, d time.Duration) error {
	e.logf("  %s: measuring capacity for %v with %d workers", k.name, d, k.workers)
	c, err := load.Capacity(ctx, d, k.workers, k.op)
	if err != nil {
		return fmt.Errorf("%s capacity: %w", k.name, err)
	}
	k.capacity = c
	k.rate = math.Max(0.05, math.Min(targetUtilization*c, k.maxRate))
	e.logf("  %s: capacity %.0f/s, offering %.1f/s (utilization %.2f)", k.name, c, k.rate, k.rate/c)
	return nil
}

// utilization is the offered rate over the measured capacity.
func (k *readLoad) utilization() float64 { return k.rate / k.capacity }

// phase is a labelled time span of a run.
type phase struct {
	name       string
	start, end time.Time
}

func (p phase) contains(t time.Time) bool { return !t.Before(p.start) && t.Before(p.end) }

// openLoop runs every kind concurrently on its own schedule over
// [start, start+dur) and returns each kind's samples.
func openLoop(ctx context.Context, kinds []*readLoad, start time.Time, dur, grace time.Duration) (map[string][]load.Sample, error) {
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		out      = map[string][]load.Sample{}
		firstErr error
	)
	for _, k := range kinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := load.Schedule{Start: start, Rate: k.rate, Duration: dur, Grace: grace}
			samples, err := load.Run(ctx, s, k.workers, k.op)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("%s: %w", k.name, err)
			}
			out[k.name] = samples
		}()
	}
	wg.Wait()
	return out, firstErr
}

// inPhases selects samples whose arrival fell in one of phases.
func inPhases(phases []phase) func(load.Sample) bool {
	return func(s load.Sample) bool {
		for _, p := range phases {
			if p.contains(s.Scheduled) {
				return true
			}
		}
		return false
	}
}

// addLoad reports one kind's latency over phases, with its queue delay,
// errors and, once per kind, its capacity and utilization. A kind whose
// every request failed is an error: there is nothing to report.
func addLoad(arm *report.Arm, key string, k *readLoad, samples []load.Sample, phases []phase) error {
	c := load.Collect(samples, inPhases(phases))
	if c.Latency.Count() == 0 && c.Errors > 0 {
		return fmt.Errorf("%s: all %d requests failed, first: %w", key, c.Errors, c.FirstError)
	}
	arm.Latency(key, c.Latency.Summary())
	arm.Latency(key+"_queue_delay", c.QueueDelay.Summary())
	arm.Int(key+"_errors", int64(c.Errors))
	return nil
}

// addRates reports a kind's capacity, offered rate and utilization.
func addRates(arm *report.Arm, k *readLoad) {
	arm.Float(k.name+"_capacity_per_s", round(k.capacity, 1))
	arm.Float(k.name+"_offered_per_s", round(k.rate, 2))
	arm.Float(k.name+"_utilization", round(k.utilization(), 3))
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// points converts samples to plot points relative to origin, leaving out
// failed requests (they have no latency).
func points(samples []load.Sample, origin time.Time) []plot.Point {
	pts := make([]plot.Point, 0, len(samples))
	for _, s := range samples {
		if s.Err != nil && !s.Censored {
			continue
		}
		pts = append(pts, plot.Point{
			T:        s.Scheduled.Sub(origin).Seconds(),
			Ms:       float64(s.Latency) / float64(time.Millisecond),
			Censored: s.Censored,
		})
	}
	return pts
}

// plotPhases converts phases to plot spans relative to origin.
func plotPhases(phases []phase, origin time.Time) []plot.Phase {
	out := make([]plot.Phase, len(phases))
	for i, p := range phases {
		out[i] = plot.Phase{Name: p.name, Start: p.start.Sub(origin).Seconds(), End: p.end.Sub(origin).Seconds()}
	}
	return out
}

// sortedKeys returns m's keys in order, so reports list roles stably.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
