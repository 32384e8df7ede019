package sink

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// fakeMetrics records what a writer reports. It keeps each sink's last
// state after SinkClosed (final) so a test can check the state a writer
// reported before it stopped as well as that it was forgotten (live).
type fakeMetrics struct {
	mu      sync.Mutex
	appends map[AppendResult]int
	carried map[AppendResult]int // updates carried, by result
	timed   int                  // AppendFinished calls with a positive duration
	reads   map[ReadReason]int
	live    map[string]sinkState
	final   map[string]sinkState
	maxLag  map[string]time.Duration
	closed  []string
}

type sinkState struct {
	lag  time.Duration
	rows int
}

func newFakeMetrics() *fakeMetrics {
	return &fakeMetrics{appends: map[AppendResult]int{}, carried: map[AppendResult]int{}, reads: map[ReadReason]int{},
		live: map[string]sinkState{}, final: map[string]sinkState{}, maxLag: map[string]time.Duration{}}
}

func (f *fakeMetrics) AppendFinished(result AppendResult, updates int, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.appends[result]++
	f.carried[result] += updates
	if d > 0 {
		f.timed++
	}
}

func (f *fakeMetrics) ShardRead(reason ReadReason) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads[reason]++
}

func (f *fakeMetrics) SinkState(sink string, lag time.Duration, rows int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.live[sink] = sinkState{lag, rows}
	f.final[sink] = sinkState{lag, rows}
	f.maxLag[sink] = max(f.maxLag[sink], lag)
}

func (f *fakeMetrics) SinkClosed(sink string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.live, sink)
	f.closed = append(f.closed, sink)
}

// summary is what a test case pins of a fakeMetrics.
type summary struct {
	appends  map[AppendResult]int
	appended int // updates written by successful appends
	reads    map[ReadReason]int
	final    sinkState
	maxLag   time.Duration
	live     int
	closed   []string
}

func (f *fakeMetrics) summary(sink string) summary {
	f.mu.Lock()
	defer f.mu.Unlock()
	return summary{appends: maps.Clone(f.appends), appended: f.carried[AppendSucceeded], reads: maps.Clone(f.reads),
		final: f.final[sink], maxLag: f.maxLag[sink], live: len(f.live), closed: slices.Clone(f.closed)}
}

func (f *fakeMetrics) attempts() (total, timed int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.appends {
		total += n
	}
	return total, f.timed
}

// flakyShard fails its first `failures` compare-and-appends with an error
// that is neither a lost race nor a dropped shard (storage unreachable).
type flakyShard struct {
	storeShard
	failures atomic.Int32
}

func (s *flakyShard) CompareAndAppend(ctx context.Context, shard string, expected, upper frontier.Time, updates []Update) error {
	if s.failures.Add(-1) >= 0 {
		return errors.New("storage unavailable")
	}
	return s.storeShard.CompareAndAppend(ctx, shard, expected, upper, updates)
}

func metricsWriter(t *testing.T, st Shard, m Metrics, asOf frontier.Time) *Writer {
	return Start(Config{Shard: "u9", Storage: st, AsOf: asOf, Log: testr.New(t), MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Metrics: m, Name: "u9"})
}

// waitFor polls cond (the writer works on its own goroutine).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func row1(r string, t frontier.Time) []Update {
	return []Update{{Row: []byte(r), Time: t, Diff: 1}}
}

// TestWriterMetrics drives writers through a successful append, a lost
// race between two writers of one shard and failing storage, and checks
// what each reported, including that closing forgets the sink's state.
func TestWriterMetrics(t *testing.T) {
	for _, tc := range []struct {
		name string
		// run drives the writer under test, reporting to m, and closes it.
		run  func(t *testing.T, m Metrics)
		want summary
	}{{
		name: "one append",
		run: func(t *testing.T, m Metrics) {
			st := newStore(t, "u9", 10)
			w := metricsWriter(t, storeShard{st}, m, 10)
			w.Push(append(row1("a", 10), row1("b", 12)...), nil, frontier.At(20))
			waitUpper(t, st, "u9", 20)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		},
		// The frontier was 10 ms ahead of the shard's upper before the
		// append and level with it after; two rows are held in memory.
		want: summary{appends: map[AppendResult]int{AppendSucceeded: 1}, appended: 2, reads: map[ReadReason]int{ReadAtStart: 1},
			final: sinkState{lag: 0, rows: 2}, maxLag: 10 * time.Millisecond, closed: []string{"u9"}},
	}, {
		name: "lost race",
		run: func(t *testing.T, m Metrics) {
			st := newStore(t, "u9", 10)
			// The writer under test learns the shard at upper 10 ...
			w := metricsWriter(t, storeShard{st}, m, 10)
			waitFor(t, "the first read", func() bool { return w.Upper() == frontier.At(10) })
			// ... then another writer of the same view (another replica)
			// appends first.
			other := newFakeMetrics()
			o := metricsWriter(t, storeShard{st}, other, 10)
			o.Push(row1("a", 10), nil, frontier.At(20))
			waitUpper(t, st, "u9", 20)
			if err := o.Close(); err != nil {
				t.Fatal(err)
			}
			if got := other.summary("u9"); got.appends[AppendSucceeded] != 1 || got.appended != 1 {
				t.Errorf("winning writer reported %+v, want one append of one update", got)
			}
			// The loser's append from 10 fails, it re-reads what the
			// winner wrote and appends 20..25 with nothing to correct.
			w.Push(row1("a", 10), nil, frontier.At(25))
			waitUpper(t, st, "u9", 25)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		},
		want: summary{appends: map[AppendResult]int{AppendLostRace: 1, AppendSucceeded: 1}, appended: 0,
			reads: map[ReadReason]int{ReadAtStart: 1, ReadAfterLostRace: 1},
			final: sinkState{lag: 0, rows: 1}, maxLag: 15 * time.Millisecond, closed: []string{"u9"}},
	}, {
		name: "storage errors",
		run: func(t *testing.T, m Metrics) {
			st := &flakyShard{storeShard: storeShard{newStore(t, "u9", 10)}}
			st.failures.Store(2)
			w := metricsWriter(t, st, m, 10)
			w.Push(row1("a", 10), nil, frontier.At(30))
			waitUpper(t, st.st, "u9", 30)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		},
		want: summary{appends: map[AppendResult]int{AppendFailed: 2, AppendSucceeded: 1}, appended: 1,
			reads: map[ReadReason]int{ReadAtStart: 1},
			final: sinkState{lag: 0, rows: 1}, maxLag: 20 * time.Millisecond, closed: []string{"u9"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			m := newFakeMetrics()
			tc.run(t, m)
			if got := m.summary("u9"); fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tc.want) {
				t.Errorf("reported\n %+v\nwant\n %+v", got, tc.want)
			}
			if total, timed := m.attempts(); timed != total {
				t.Errorf("%d of %d appends reported a duration", timed, total)
			}
		})
	}
}

// TestStorageErrorLag: while storage refuses appends the lag reported is
// the distance from the shard's upper to the dataflow's frontier, and it
// grows as the frontier does.
func TestStorageErrorLag(t *testing.T) {
	st := &flakyShard{storeShard: storeShard{newStore(t, "u9", 10)}}
	st.failures.Store(1 << 30)
	m := newFakeMetrics()
	w := metricsWriter(t, st, m, 10)
	defer w.Close()
	for _, f := range []frontier.Time{15, 40} {
		w.Push(nil, nil, frontier.At(f))
		want := sinkState{lag: time.Duration(f-10) * time.Millisecond}
		waitFor(t, fmt.Sprintf("lag %v", want.lag), func() bool {
			m.mu.Lock()
			defer m.mu.Unlock()
			return m.live["u9"] == want
		})
	}
	st.failures.Store(0)
	waitUpper(t, st.st, "u9", 40)
	waitFor(t, "lag 0", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.live["u9"] == sinkState{}
	})
}

// TestFactoryForgetsASinkWithItsLastWriter: two writers of one sink in one
// process (a replaced dataflow's and its successor's) share the sink's
// series; the first to stop must not delete them.
func TestFactoryForgetsASinkWithItsLastWriter(t *testing.T) {
	st := newStore(t, "u9", 10)
	m := newFakeMetrics()
	f := &Factory{Storage: storeShard{st}, Log: testr.New(t), Metrics: m}
	s := plan.SubscribeSink{ID: plan.User(3), Shard: "u9"}
	first, err := f.OpenStorageSink(s, frontier.At(10), func() {})
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.OpenStorageSink(s, frontier.At(10), func() {})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a state of u3", func() bool { return m.summary("u3").live == 1 })
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if got := m.summary("u3"); len(got.closed) != 0 || got.live != 1 {
		t.Fatalf("after the first writer closed: closed %v, live %d; want the sink kept", got.closed, got.live)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if got := m.summary("u3"); fmt.Sprint(got.closed) != "[u3]" || got.live != 0 {
		t.Fatalf("after the last writer closed: closed %v, live %d; want u3 forgotten once", got.closed, got.live)
	}
}

// TestNilMetricsRecordNothing: a Factory without Metrics writes as before.
func TestNilMetricsRecordNothing(t *testing.T) {
	st := newStore(t, "u9", 10)
	f := &Factory{Storage: storeShard{st}, Log: testr.New(t)}
	w, err := f.OpenStorageSink(plan.SubscribeSink{ID: plan.User(3), Shard: "u9"}, frontier.At(10), func() {})
	if err != nil {
		t.Fatal(err)
	}
	w.Push(nil, nil, frontier.At(12))
	waitUpper(t, st, "u9", 12)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
