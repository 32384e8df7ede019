package load

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tandemdb/tandem/hack/bench/internal/stats"
)

// Op issues one request on worker w's own connection. It must return
// promptly once ctx is done.
type Op func(ctx context.Context, w int) error

// Schedule is an open-loop arrival plan.
type Schedule struct {
	Start    time.Time     // first arrival
	Rate     float64       // arrivals per second, > 0
	Duration time.Duration // arrivals fall in [Start, Start+Duration)
	// Grace is how long after the arrival window outstanding requests may
	// still complete; at Start+Duration+Grace the phase ends.
	Grace time.Duration
}

// End is when the phase ends and outstanding requests are censored.
func (s Schedule) End() time.Time { return s.Start.Add(s.Duration + s.Grace) }

// Arrivals is the number of requests the schedule issues.
func (s Schedule) Arrivals() int {
	n := int(s.Duration.Seconds() * s.Rate)
	// Count arrival times strictly inside the window despite rounding.
	for n > 0 && !s.At(n-1).Before(s.Start.Add(s.Duration)) {
		n--
	}
	for s.At(n).Before(s.Start.Add(s.Duration)) {
		n++
	}
	return n
}

// At is arrival i's scheduled time.
func (s Schedule) At(i int) time.Time {
	return s.Start.Add(time.Duration(float64(i) / s.Rate * float64(time.Second)))
}

// Sample is the outcome of one scheduled request.
type Sample struct {
	Seq       int
	Scheduled time.Time
	// Latency runs from Scheduled to completion; when Censored it is the
	// time outstanding at the phase end, a lower bound.
	Latency time.Duration
	// QueueDelay runs from Scheduled to a worker starting the request; for
	// a request never started it is the time it waited until the phase end.
	QueueDelay time.Duration
	Censored   bool
	Err        error
}

// Run issues the schedule's arrivals to workers goroutines, each calling
// op with its own index, and returns one Sample per arrival in order.
// Cancelling ctx ends the phase early (outstanding requests are censored).
func Run(ctx context.Context, s Schedule, workers int, op Op) ([]Sample, error) {
	if s.Rate <= 0 || workers <= 0 {
		return nil, fmt.Errorf("load: rate %v and workers %d must be positive", s.Rate, workers)
	}
	n := s.Arrivals()
	samples := make([]Sample, n)
	for i := range samples {
		samples[i] = Sample{Seq: i, Scheduled: s.At(i)}
	}
	var (
		mu        sync.Mutex
		started   = make([]bool, n)
		done      = make([]bool, n)
		remaining = n
		finished  = make(chan struct{}) // closed when remaining reaches 0
		closed    bool                  // the phase has ended; later outcomes are ignored
	)
	if n == 0 {
		close(finished)
	}
	opCtx, cancelOps := context.WithCancel(ctx)
	defer cancelOps()

	queue := make(chan int, n)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range queue {
				start := time.Now()
				mu.Lock()
				if closed {
					mu.Unlock()
					continue // drain: the phase is over
				}
				samples[i].QueueDelay = start.Sub(samples[i].Scheduled)
				started[i] = true
				mu.Unlock()
				err := op(opCtx, w)
				end := time.Now()
				mu.Lock()
				if !closed {
					samples[i].Latency = end.Sub(samples[i].Scheduled)
					samples[i].Err = err
					done[i] = true
					if remaining--; remaining == 0 {
						close(finished)
					}
				}
				mu.Unlock()
			}
		}()
	}

	phaseEnd := time.NewTimer(time.Until(s.End()))
	defer phaseEnd.Stop()
	ended := false
	issued := 0
	for i := 0; i < n && !ended; i++ {
		wait := time.NewTimer(time.Until(samples[i].Scheduled))
		select {
		case <-wait.C:
			queue <- i
			issued++
		case <-ctx.Done():
			wait.Stop()
			ended = true
		}
	}
	close(queue)
	if !ended {
		select {
		case <-phaseEnd.C:
		case <-ctx.Done():
		case <-finished:
		}
	}
	end := time.Now()
	mu.Lock()
	closed = true
	// Arrivals never issued (the phase was cancelled first) are not samples.
	samples = samples[:issued]
	for i := range samples {
		if done[i] {
			continue
		}
		samples[i].Censored = true
		samples[i].Latency = max(end.Sub(samples[i].Scheduled), 0)
		if !started[i] {
			// Never started: it queued for the whole remaining phase.
			samples[i].QueueDelay = samples[i].Latency
		}
	}
	mu.Unlock()
	cancelOps()
	wg.Wait()
	return samples, nil
}

// Collected is one metric's statistics over a subset of samples.
type Collected struct {
	Latency    stats.Series
	QueueDelay stats.Series
	Errors     int
	FirstError error
}

// Collect summarises the samples keep selects (nil keeps all). Failed
// requests are counted as errors, never as latencies.
func Collect(samples []Sample, keep func(Sample) bool) Collected {
	var c Collected
	for _, sm := range samples {
		if keep != nil && !keep(sm) {
			continue
		}
		switch {
		case sm.Censored:
			c.Latency.RecordCensored(sm.Latency)
			c.QueueDelay.RecordCensored(sm.QueueDelay)
		case sm.Err != nil:
			c.Errors++
			if c.FirstError == nil {
				c.FirstError = sm.Err
			}
		default:
			c.Latency.Record(sm.Latency)
			c.QueueDelay.Record(sm.QueueDelay)
		}
	}
	return c
}

// Capacity measures closed-loop throughput: each worker issues requests
// back to back, starting new ones for d, and the result is completed
// requests per second of wall time until the last one finished. Requests
// in flight at d are allowed to finish (up to 10*d more), so a system
// slower than d per request still gets a measured, not a zero, capacity.
// A closed loop is right here precisely because it never queues.
func Capacity(ctx context.Context, d time.Duration, workers int, op Op) (float64, error) {
	if workers <= 0 || d <= 0 {
		return 0, fmt.Errorf("load: capacity needs positive workers (%d) and duration (%v)", workers, d)
	}
	runCtx, cancel := context.WithTimeout(ctx, 11*d)
	defer cancel()
	start := time.Now()
	deadline := start.Add(d)
	var (
		mu        sync.Mutex
		completed int
		firstErr  error
		wg        sync.WaitGroup
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for runCtx.Err() == nil && time.Now().Before(deadline) {
				err := op(runCtx, w)
				mu.Lock()
				switch {
				case err == nil:
					completed++
				case runCtx.Err() == nil && firstErr == nil:
					firstErr = err
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return 0, fmt.Errorf("load: capacity run failed: %w", firstErr)
	}
	if completed == 0 {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("load: no request completed within %v", 11*d)
	}
	return float64(completed) / elapsed.Seconds(), nil
}
