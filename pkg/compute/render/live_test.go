package render

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// fakeLive is a published arrangement the test changes by hand.
type fakeLive struct {
	mu        sync.Mutex
	batches   []*batch.Batch
	upper     frontier.Frontier
	since     frontier.Frontier
	published bool
	dropped   bool
	listeners []func()
	followErr error
	cursors   []frontier.Frontier // where the follower was advanced to
	released  bool
}

func (f *fakeLive) Snapshot() ([]*batch.Batch, frontier.Frontier, bool, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.batches, f.upper, f.published, f.dropped
}

func (f *fakeLive) OnChange(fn func()) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listeners = append(f.listeners, fn)
	return func() {}
}

func (f *fakeLive) Since() frontier.Frontier {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.since
}

func (f *fakeLive) Follow(t frontier.Time) (SharedFollower, error) {
	if f.followErr != nil {
		return nil, f.followErr
	}
	return fakeFollower{f}, nil
}

type fakeFollower struct{ f *fakeLive }

func (h fakeFollower) Advance(to frontier.Frontier) error {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	h.f.cursors = append(h.f.cursors, to)
	return nil
}

func (h fakeFollower) Release() error {
	h.f.mu.Lock()
	defer h.f.mu.Unlock()
	h.f.released = true
	return nil
}

// publish replaces the published state and wakes the listeners.
func (f *fakeLive) publish(t *testing.T, chain [][2]frontier.Time, since frontier.Time, dropped bool) {
	t.Helper()
	var bs []*batch.Batch
	for _, c := range chain {
		var b batch.Builder
		for ts := c[0]; ts < c[1]; ts++ {
			at := ts // advanced to the since where it stays inside the batch
			if since > ts && since < c[1] {
				at = since
			}
			b.Push([]byte(fmt.Sprintf("k%d", ts)), []byte(fmt.Sprintf("r%d", ts)), at, 1)
		}
		bt, err := b.Build(batch.Description{Lower: frontier.At(c[0]), Upper: frontier.At(c[1]), Since: frontier.At(since)})
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, bt)
	}
	f.mu.Lock()
	f.batches, f.since, f.published, f.dropped = bs, frontier.At(since), true, dropped
	if n := len(chain); n > 0 {
		f.upper = frontier.At(chain[n-1][1])
	}
	ls := append([]func(){}, f.listeners...)
	f.mu.Unlock()
	for _, l := range ls {
		l()
	}
}

// TestImportLiveFollowsAndRefuses drives one live import over a hand-made
// published arrangement: it emits the snapshot as of its as_of and then
// each batch published after its cursor, advancing its follower, and it
// fails its dataflow with ErrLiveImportLost (never emitting wrong rows)
// when the published since passed its cursor or the chain was merged
// across it.
func TestImportLiveFollowsAndRefuses(t *testing.T) {
	type step struct {
		chain   [][2]frontier.Time
		since   frontier.Time
		dropped bool
	}
	tests := []struct {
		name      string
		followErr error
		steps     []step
		// want: the rows emitted ("row@time", sorted), the final output
		// frontier, and whether the dataflow failed.
		want     string
		frontier frontier.Frontier
		failed   bool
	}{
		{name: "snapshot then follows", steps: []step{
			{chain: [][2]frontier.Time{{0, 3}, {3, 5}}},
			{chain: [][2]frontier.Time{{0, 5}, {5, 6}, {6, 8}}, since: 4},
		}, want: "r0@2 r1@2 r2@2 r3@3 r4@4 r5@5 r6@6 r7@7", frontier: frontier.At(8)},
		{name: "merged across the cursor", steps: []step{
			{chain: [][2]frontier.Time{{0, 5}}},
			{chain: [][2]frontier.Time{{0, 8}}, since: 4},
		}, want: "r0@2 r1@2 r2@2 r3@3 r4@4", frontier: frontier.At(5), failed: true},
		{name: "since past the cursor", steps: []step{
			{chain: [][2]frontier.Time{{0, 5}}},
			{chain: [][2]frontier.Time{{0, 5}, {5, 8}}, since: 6},
		}, want: "r0@2 r1@2 r2@2 r3@3 r4@4", frontier: frontier.At(5), failed: true},
		{name: "since past the as_of", steps: []step{
			{chain: [][2]frontier.Time{{0, 5}}, since: 3},
		}, frontier: frontier.At(2), failed: true},
		{name: "follow refused", followErr: errors.New("compacted"), steps: []step{
			{chain: [][2]frontier.Time{{0, 5}}},
		}, frontier: frontier.At(2), failed: true},
		{name: "dropped: stops without failing", steps: []step{
			{chain: [][2]frontier.Time{{0, 5}}},
			{chain: [][2]frontier.Time{{0, 5}, {5, 8}}, dropped: true},
		}, want: "r0@2 r1@2 r2@2 r3@3 r4@4", frontier: frontier.At(5)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakeLive{upper: frontier.Minimum(), since: frontier.Minimum(), followErr: tc.followErr}
			errSrc := &fakeLive{upper: frontier.Minimum(), since: frontier.Minimum()}
			run := runLive(t, src, errSrc, frontier.At(2))
			for _, s := range tc.steps {
				errSrc.publish(t, [][2]frontier.Time{{0, s.chain[len(s.chain)-1][1]}}, 0, s.dropped)
				errSrc.mu.Lock()
				errSrc.batches = nil // an empty error arrangement
				errSrc.mu.Unlock()
				src.publish(t, s.chain, s.since, s.dropped)
				run.settle(t)
			}
			got, f, failures := run.result()
			if got != tc.want || f != tc.frontier || (len(failures) > 0) != tc.failed {
				t.Fatalf("rows %q frontier %v failures %v; want %q, %v, failed=%v", got, f, failures, tc.want, tc.frontier, tc.failed)
			}
			for _, err := range failures {
				if tc.followErr == nil && !errors.Is(err, ErrLiveImportLost) {
					t.Fatalf("failure %v is not ErrLiveImportLost", err)
				}
			}
			if !tc.failed && tc.frontier.Less(frontier.Closed()) {
				if n := len(src.cursors); n == 0 || src.cursors[n-1] != tc.frontier {
					t.Fatalf("follower advanced to %v, want the cursor %v last", src.cursors, tc.frontier)
				}
			}
			run.drop()
			if tc.followErr == nil {
				deadline := time.Now().Add(10 * time.Second)
				for {
					src.mu.Lock()
					released := src.released
					src.mu.Unlock()
					if released {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the dataflow's drop did not release the follower")
					}
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
}

// liveRun is one live import on a one-worker dataflow with a collector.
type liveRun struct {
	ws       *dataflow.Workers
	seq      uint64
	mu       sync.Mutex
	rows     []string
	frontier frontier.Frontier
	failures []error
	steps    int
}

func runLive(t *testing.T, ok, errs LiveShared, asOf frontier.Frontier) *liveRun {
	t.Helper()
	ws, err := dataflow.New(dataflow.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := &liveRun{ws: ws, frontier: frontier.Minimum()}
	fail := func(err error) { r.mu.Lock(); r.failures = append(r.failures, err); r.mu.Unlock() }
	built := make(chan error, 1)
	r.seq = ws.Install("live", func(b *dataflow.Builder) error {
		rows, _, _ := ImportLive(b, "x", ok, errs, asOf, fail)
		b.AddOperator("collect", []dataflow.Connection{{From: rows}}, 0, dataflow.LogicFunc(func(op *dataflow.Operator) {
			r.mu.Lock()
			defer r.mu.Unlock()
			for _, d := range op.Input(0).Take() {
				for _, u := range d.([]dataflow.Update) {
					r.rows = append(r.rows, fmt.Sprintf("%s@%d", u.Val, u.Time))
				}
			}
			r.frontier = op.InputFrontier()
			r.steps++
		}))
		return nil
	}, func(_ *dataflow.Worker, err error) { built <- err })
	ctx, cancel := context.WithCancel(context.Background())
	ws.Start(ctx)
	t.Cleanup(func() { cancel(); ws.Stop() })
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	return r
}

// drop drops the dataflow (between the worker's steps).
func (r *liveRun) drop() { r.ws.Drop(r.seq) }

// settle waits until the collector has not been scheduled for a while:
// the import has done what the last publication allows.
func (r *liveRun) settle(t *testing.T) {
	t.Helper()
	last := -1
	for range 200 {
		time.Sleep(5 * time.Millisecond)
		r.mu.Lock()
		n := r.steps
		r.mu.Unlock()
		if n == last {
			return
		}
		last = n
	}
	t.Fatal("the live import never settled")
}

func (r *liveRun) result() (string, frontier.Frontier, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rows := append([]string(nil), r.rows...)
	sort.Strings(rows)
	return strings.Join(rows, " "), r.frontier, append([]error(nil), r.failures...)
}
