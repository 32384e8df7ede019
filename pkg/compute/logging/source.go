package logging

import (
	"bytes"
	"slices"
	"sync"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/consolidate"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// Snapshot appends a relation's current rows for one worker to dst. It runs
// on the worker goroutine.
type Snapshot func(dst []row.Row) []row.Row

// Source emits a relation's snapshots as a collection: at each refresh, the
// difference from the previous snapshot at the refresh time. It implements
// render.Source.
type Source struct {
	snap     Snapshot
	interval time.Duration
	now      func() frontier.Time
	activate func()

	prev  []row.Row // sorted
	upper frontier.Frontier
	last  frontier.Time // time of the last refresh

	mu     sync.Mutex
	timer  *time.Timer
	closed bool
}

// NewSource returns a source refreshing every interval. now returns the
// current time in milliseconds (nil: the system clock); activate schedules
// the source's operator.
func NewSource(snap Snapshot, interval time.Duration, now func() frontier.Time, activate func()) *Source {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if now == nil {
		now = func() frontier.Time { return frontier.Time(time.Now().UnixMilli()) }
	}
	return &Source{snap: snap, interval: interval, now: now, activate: activate, upper: frontier.Minimum()}
}

// Poll implements render.Source. A refresh happens when the interval has
// passed since the last one (or on the first poll).
func (s *Source) Poll(dst []dataflow.Update) ([]dataflow.Update, frontier.Frontier, error) {
	now := s.now()
	t, _ := s.upper.Time()
	// Times never go backwards, even if the clock does.
	now = max(now, t)
	due := s.last == 0 || now >= s.last+frontier.Time(s.interval.Milliseconds())
	if due {
		next := s.snap(nil)
		slices.SortFunc(next, func(a, b row.Row) int { return bytes.Compare(a, b) })
		dst = diffSorted(dst, s.prev, next, now)
		s.prev = next
		s.last = now
		s.upper = frontier.At(now + 1)
	}
	s.schedule()
	return dst, s.upper, nil
}

// diffSorted appends next - prev (sorted multisets of rows) at time t.
func diffSorted(dst []dataflow.Update, prev, next []row.Row, t frontier.Time) []dataflow.Update {
	consolidate.Difference(prev, next, func(a, b row.Row) int { return bytes.Compare(a, b) },
		func(r row.Row) { dst = append(dst, dataflow.Update{Val: r, Time: t, Diff: -1}) },
		func(r row.Row) { dst = append(dst, dataflow.Update{Val: r, Time: t, Diff: 1}) },
		func(row.Row, row.Row) {})
	return dst
}

func (s *Source) schedule() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.timer == nil {
		s.timer = time.AfterFunc(s.interval, s.activate)
		return
	}
	s.timer.Reset(s.interval)
}

// Close implements render.Source.
func (s *Source) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
}
