package scripttest

import (
	"context"
	"time"
)

// MinCPUShare sets the stall threshold of Options.CPU: a wait fails once
// the replica used less than Timeout/MinCPUShare of CPU over the last
// Timeout (0.5 s in 20 s). An idle replica uses far less (its loadgen
// ticks and frontier reports); one arranging data uses its share of the
// machine, which is more even on a heavily loaded machine.
const MinCPUShare = 40

// stallSamples is how many CPU samples a wait takes per Timeout.
const stallSamples = 10

// waitContext bounds one wait of an expectation. Without Options.CPU it
// ends Timeout from now. With it, it ends once the replica has used less
// than Timeout/MinCPUShare of CPU time over the last Timeout: a replica
// that stalled (a lost wakeup, a deadlock: it idles) fails as fast as
// before, while one that works slowly (a large hydration on a loaded
// machine) is waited for. The test's own deadline still bounds the whole.
func (rn *runner) waitContext() (context.Context, context.CancelFunc) {
	if rn.cpu == nil {
		return context.WithTimeout(rn.ctx, rn.timeout)
	}
	ctx, cancel := context.WithCancel(rn.ctx)
	go rn.watchStall(ctx, cancel)
	return ctx, cancel
}

// watchStall samples the replica's CPU time and cancels ctx when it
// stalls.
func (rn *runner) watchStall(ctx context.Context, cancel context.CancelFunc) {
	w := cpuWindow{timeout: rn.timeout, threshold: rn.timeout / MinCPUShare}
	w.add(cpuSample{time.Now(), rn.cpu()})
	tick := time.NewTicker(rn.timeout / stallSamples)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if w.add(cpuSample{time.Now(), rn.cpu()}) {
			cancel()
			return
		}
	}
}

type cpuSample struct {
	at  time.Time
	cpu time.Duration
}

// cpuWindow holds the CPU samples of the last timeout.
type cpuWindow struct {
	timeout, threshold time.Duration
	samples            []cpuSample // the oldest is the newest at least timeout old
}

// add records s and reports whether the CPU used over the last timeout
// (once a whole timeout has been observed) is below the threshold.
func (w *cpuWindow) add(s cpuSample) (stalled bool) {
	w.samples = append(w.samples, s)
	for len(w.samples) > 1 && s.at.Sub(w.samples[1].at) >= w.timeout {
		w.samples = w.samples[1:]
	}
	first := w.samples[0]
	return s.at.Sub(first.at) >= w.timeout && s.cpu-first.cpu < w.threshold
}
