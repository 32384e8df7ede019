package render

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// keyByNothing keys every row by the same empty key, so a join of two such
// arrangements is their cross product.
func keyByNothing(op *dataflow.Operator) {
	for _, d := range op.Input(0).Take() {
		var out []dataflow.Update
		for _, u := range d.([]dataflow.Update) {
			out = append(out, dataflow.Update{Key: row.Pack(), Val: u.Val, Time: u.Time, Diff: u.Diff})
		}
		op.Output(0).SendUpdates(out)
	}
}

// TestDroppedJoinStopsMidStep drops a cross join's dataflow while its
// worker is inside the join's single step (n*n output rows, all emitted in
// one Schedule call): the step must be abandoned within a few emits rather
// than run to completion, buffering output nobody reads, before the drop
// can take effect.
func TestDroppedJoinStopsMidStep(t *testing.T) {
	const n = 1500 // 2.25M pairs: about a second and 200 MB if not abandoned
	table := NewMemoryTable()
	ws, err := dataflow.New(dataflow.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var (
		started       = make(chan struct{})
		dropRequested = make(chan struct{})
		dropped       = make(chan struct{})
		completed     atomic.Bool
		emitted       atomic.Int64
		failures      []error
		mu            sync.Mutex
	)
	fail := func(err error) { mu.Lock(); failures = append(failures, err); mu.Unlock() }
	built := make(chan error, 1)
	seq := ws.Install("cross", func(b *dataflow.Builder) error {
		src, err := renderSource(b, "t", table.Open, frontier.Minimum(), fail)
		if err != nil {
			return err
		}
		keyed := b.AddOperator("key", []dataflow.Connection{{From: src}}, 1, dataflow.LogicFunc(keyByNothing))
		arr := Arrange(b, "by nothing", keyed.Stream(0), fail)
		var once sync.Once
		step := func(old, fresh [][]*batch.Batch, e *emitter) {
			if len(fresh[0]) == 0 && len(fresh[1]) == 0 {
				JoinStep(old, fresh, e)
				return
			}
			// The step with the data: let the test request the drop
			// while we are inside it.
			once.Do(func() { close(started) })
			<-dropRequested
			JoinStep(old, fresh, e)
			emitted.Store(int64(len(e.ok)))
			completed.Store(true)
		}
		Stateful(b, "cross join", []*Arranged{arr, arr}, step, fail)
		b.OnDrop(func() { close(dropped) })
		return nil
	}, func(_ *dataflow.Worker, err error) { built <- err })
	ctx, cancel := context.WithCancel(context.Background())
	ws.Start(ctx)
	defer func() { cancel(); ws.Stop() }()
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	rows := make([]dataflow.Update, n)
	for i := range rows {
		rows[i] = dataflow.Update{Val: row.Pack(row.Int64(int64(i))), Time: 1, Diff: 1}
	}
	if err := table.Append(rows, frontier.At(2)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the join step never started")
	}
	ws.Drop(seq)
	close(dropRequested)
	select {
	case <-dropped:
	case <-time.After(30 * time.Second):
		t.Fatal("the dataflow was not dropped")
	}
	if completed.Load() {
		t.Fatalf("the join step ran to completion (%d rows buffered) although its dataflow was dropped when it started", emitted.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 {
		t.Fatalf("failures: %v", failures)
	}
}
