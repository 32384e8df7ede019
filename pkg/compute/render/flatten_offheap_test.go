package render

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// TestFlattenOutputOutlivesOffHeapBatch: the rows Flatten sends downstream
// stay readable after the batch they were read from is gone (its arena
// released off the Go heap): a walk over an arena copies its rows.
func TestFlattenOutputOutlivesOffHeapBatch(t *testing.T) {
	const n = 8192
	want := make([]string, n)
	lg := &flattenLogic{fuel: 1 << 20, asOf: frontier.Minimum(), fresh: []*batch.Batch{offHeapBatch(t, want)}, remaining: n}
	if !lg.walk() {
		t.Fatal("walk with ample fuel did not finish")
	}
	out := lg.out
	lg.fresh, lg.cur, lg.out = nil, nil, nil
	for range 20 {
		runtime.GC()
		runtime.Gosched()
	}
	got, err := readRows(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("flatten emitted %d rows, want %d", len(got), n)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("row %d reads %q after its batch was released, want %q", i, got[i], want[i])
		}
	}
}

// offHeapBatch builds a batch of len(vals) keys whose columns live off the
// Go heap, filling vals with its value rows in key order.
func offHeapBatch(t *testing.T, vals []string) *batch.Batch {
	t.Helper()
	var bl batch.Builder
	for i := range vals {
		var key [8]byte
		binary.BigEndian.PutUint64(key[:], uint64(i))
		vals[i] = fmt.Sprintf("row-%020d", i)
		bl.Push(key[:], []byte(vals[i]), 0, 1)
	}
	b, err := bl.Build(batch.Description{Lower: frontier.At(0), Upper: frontier.At(1), Since: frontier.At(0)})
	if err != nil {
		t.Fatal(err)
	}
	if b.OffHeapBytes() == 0 {
		t.Fatal("the test batch stayed on the Go heap")
	}
	return b
}

// readRows copies the updates' rows, recovering a fault in released memory.
func readRows(out []dataflow.Update) (got []string, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reading flattened rows faulted: %v", r)
		}
	}()
	for _, u := range out {
		got = append(got, string(u.Val))
	}
	return got, nil
}
