package sink

import (
	"sync"
	"time"
)

// Metrics records what a Factory's writers do; the replica implements it
// with Prometheus. A nil Metrics records nothing. Writers call it from
// their own goroutines, concurrently, never from a dataflow worker.
type Metrics interface {
	// AppendFinished records one compare-and-append call: how it ended,
	// the number of updates (rows with diffs) it carried, which were
	// written only if result is AppendSucceeded, and how long it took.
	AppendFinished(result AppendResult, updates int, d time.Duration)
	// ShardRead records a read of the shard and why it was made.
	ShardRead(reason ReadReason)
	// SinkState sets a live sink's state: its write lag (how far the
	// shard's upper trails the dataflow's output frontier, in timestamp
	// milliseconds) and the number of distinct rows its writer keeps in
	// memory (the shard's contents).
	SinkState(sink string, lag time.Duration, persistedRows int)
	// SinkClosed forgets a sink's state: its last writer in this process
	// stopped. SinkState is not called for it again unless a new writer
	// starts.
	SinkClosed(sink string)
}

// AppendResult is how one compare-and-append ended.
type AppendResult string

const (
	// AppendSucceeded: the shard's upper moved to the new upper.
	AppendSucceeded AppendResult = "appended"
	// AppendLostRace: another writer had moved the shard's upper first
	// (ErrUpperMismatch); the writer re-reads the shard.
	AppendLostRace AppendResult = "lost_race"
	// AppendFailed: any other error (storage unreachable, ...); the
	// writer backs off and retries.
	AppendFailed AppendResult = "error"
)

// AppendResults lists every AppendResult, for exporters that publish
// each series before its first event.
func AppendResults() []AppendResult {
	return []AppendResult{AppendSucceeded, AppendLostRace, AppendFailed}
}

// ReadReason is why a writer read the shard.
type ReadReason string

const (
	// ReadAtStart: the writer's first, full read of the shard's contents.
	ReadAtStart ReadReason = "start"
	// ReadAfterLostRace: the read of what another writer appended after
	// an append lost the race.
	ReadAfterLostRace ReadReason = "lost_race"
)

// ReadReasons lists every ReadReason.
func ReadReasons() []ReadReason { return []ReadReason{ReadAtStart, ReadAfterLostRace} }

// liveSinks counts the running writers of each sink in one Factory and
// forwards to Metrics, so that a sink's series are forgotten only when its
// last writer stops: while a replaced dataflow's writer is still closing,
// its successor's may already run, and the first to stop must not delete
// the other's series. Nil-safe: a nil Metrics makes every call a no-op.
type liveSinks struct {
	m Metrics

	mu    sync.Mutex
	count map[string]int
}

// sinkMetrics is one writer's view of its Factory's Metrics.
type sinkMetrics struct {
	live *liveSinks
	name string
}

func (l *liveSinks) open(name string) sinkMetrics {
	if l == nil || l.m == nil {
		return sinkMetrics{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count == nil {
		l.count = map[string]int{}
	}
	l.count[name]++
	return sinkMetrics{live: l, name: name}
}

func (s sinkMetrics) enabled() bool { return s.live != nil && s.live.m != nil }

func (s sinkMetrics) appendFinished(result AppendResult, updates int, d time.Duration) {
	if s.enabled() {
		s.live.m.AppendFinished(result, updates, d)
	}
}

func (s sinkMetrics) shardRead(reason ReadReason) {
	if s.enabled() {
		s.live.m.ShardRead(reason)
	}
}

func (s sinkMetrics) state(lag time.Duration, persistedRows int) {
	if s.enabled() {
		s.live.m.SinkState(s.name, lag, persistedRows)
	}
}

// close is called once, when the writer's goroutine ends.
func (s sinkMetrics) close() {
	if !s.enabled() {
		return
	}
	l := s.live
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count[s.name]--
	if l.count[s.name] > 0 {
		return
	}
	delete(l.count, s.name)
	l.m.SinkClosed(s.name)
}
