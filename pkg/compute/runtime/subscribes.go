package runtime

import (
	"bytes"
	"cmp"
	"slices"
	"sync"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// UpdateRow is one consolidated change of a subscribed collection.
type UpdateRow struct {
	Row  []byte
	Time frontier.Time
	Diff int64
	// Error marks a row of the error collection (internal to merging).
	Error bool
}

// subscribeBatch is the process's consolidated updates over [Lower, Upper).
type subscribeBatch struct {
	Lower, Upper frontier.Frontier
	Updates      []UpdateRow
}

// subscribeMerger merges one subscribe's per-worker outputs: each worker
// reports updates and its frontier; once the meet over workers advances, the
// updates before it are consolidated and released as one batch.
type subscribeMerger struct {
	mu     sync.Mutex
	lower  frontier.Frontier
	uppers []frontier.Frontier
	buf    []UpdateRow
	done   bool
}

func newSubscribeMerger(workers int, asOf frontier.Frontier) *subscribeMerger {
	m := &subscribeMerger{lower: asOf, uppers: make([]frontier.Frontier, workers)}
	for i := range m.uppers {
		m.uppers[i] = asOf
	}
	return m
}

// report adds one worker's updates (times at or beyond the merger's lower)
// and frontier; it returns a batch when the process frontier advanced, after
// passing it to emit (if non-nil) under the merger's lock, so batches reach
// emit in order even when workers report concurrently.
func (m *subscribeMerger) report(worker int, ups []UpdateRow, upper frontier.Frontier, emit func(subscribeBatch)) (subscribeBatch, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done {
		return subscribeBatch{}, false
	}
	m.buf = append(m.buf, ups...)
	m.uppers[worker] = frontier.Join(m.uppers[worker], upper)
	meet := frontier.Closed()
	for _, u := range m.uppers {
		meet = frontier.Meet(meet, u)
	}
	if !m.lower.Less(meet) {
		return subscribeBatch{}, false
	}
	var out, keep []UpdateRow
	for _, u := range m.buf {
		if meet.LessEqualTime(u.Time) {
			keep = append(keep, u)
		} else {
			out = append(out, u)
		}
	}
	m.buf = keep
	b := subscribeBatch{Lower: m.lower, Upper: meet, Updates: consolidateUpdates(out)}
	m.lower = meet
	m.done = meet.IsClosed()
	if emit != nil {
		emit(b)
	}
	return b, true
}

// consolidateUpdates sorts by (time, row), sums equal pairs and drops zeros.
func consolidateUpdates(ups []UpdateRow) []UpdateRow {
	slices.SortFunc(ups, func(a, b UpdateRow) int {
		if c := cmp.Compare(a.Time, b.Time); c != 0 {
			return c
		}
		if a.Error != b.Error {
			if a.Error {
				return 1
			}
			return -1
		}
		return bytes.Compare(a.Row, b.Row)
	})
	out := ups[:0]
	for _, u := range ups {
		if n := len(out); n > 0 && out[n-1].Time == u.Time && out[n-1].Error == u.Error && bytes.Equal(out[n-1].Row, u.Row) {
			out[n-1].Diff += u.Diff
			if out[n-1].Diff == 0 {
				out = out[:n-1]
			}
			continue
		}
		if u.Diff != 0 {
			out = append(out, u)
		}
	}
	return out
}
