package runtime

import (
	"strings"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// maintenanceSampleInterval is how often a busy worker adds the time its
// arrange operators spent since the last sample to the maintenance metric.
// Sampling (rather than timing every schedule) keeps the cost off the run
// loop: one pass over the worker's operator list per interval.
const maintenanceSampleInterval = 100 * time.Millisecond

// arrangeOperatorPrefix names the operators that maintain arrangements:
// they seal batches into a trace and spend merge fuel on its spine
// (render.Arrange), so their scheduling time is arrangement maintenance.
const arrangeOperatorPrefix = "Arrange "

// maintenanceSampler turns the cumulative per-operator scheduling time of
// a worker's arrange operators into increments for a counter. It belongs to
// one worker and is touched only on that worker's goroutine.
type maintenanceSampler struct {
	last    time.Time
	elapsed map[operatorKey]time.Duration
}

type operatorKey struct {
	dataflow uint64
	operator int
}

// sample returns the arrange time spent since the previous sample, or 0
// when the interval has not passed yet. Operators of dropped dataflows are
// forgotten; the time they spent after the previous sample is not counted
// (at most one interval's worth per dropped dataflow).
func (s *maintenanceSampler) sample(w *dataflow.Worker, now time.Time) time.Duration {
	if now.Sub(s.last) < maintenanceSampleInterval {
		return 0
	}
	s.last = now
	next := make(map[operatorKey]time.Duration, len(s.elapsed))
	var delta time.Duration
	for _, op := range w.Operators() {
		if !strings.HasPrefix(op.Name, arrangeOperatorPrefix) {
			continue
		}
		k := operatorKey{dataflow: op.Dataflow, operator: op.Operator}
		next[k] = op.Elapsed
		if d := op.Elapsed - s.elapsed[k]; d > 0 {
			delta += d
		}
	}
	s.elapsed = next
	return delta
}
