package trace

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// oneKeyBatches returns n batches, each holding vals distinct values of the
// key "k" (interleaved across batches, so the values of all n must be
// sorted together).
func oneKeyBatches(t *testing.T, n, vals int) []*batch.Batch {
	out := make([]*batch.Batch, n)
	for i := range out {
		var bl batch.Builder
		for j := range vals {
			bl.Push([]byte("k"), fmt.Appendf(nil, "value-%08d", j*n+i), frontier.Time(i), 1)
		}
		b, err := bl.Build(batch.Description{Lower: frontier.At(frontier.Time(i)), Upper: frontier.At(frontier.Time(i + 1))})
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// accumulateFaults runs AccumulateKey with faults turned into panics and
// reports a fault as an error.
func accumulateFaults(batches []*batch.Batch) (n int, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("AccumulateKey faulted: %v", r)
		}
	}()
	return len(AccumulateKey(batches, []byte("k"), 10, nil)), nil
}

// TestAccumulateKeyHoldsBatchesWhileSorting: AccumulateKey sorts and sums
// the values of several batches after its last use of any batch. A caller
// that passes batches nobody else holds (as a reader of a snapshot a
// publisher has since replaced does) must not see their arenas released
// under that sort: under poison (batch.SetPoison) with collections running
// throughout, the call completes. Without its runtime.KeepAlive a
// collection during the sort releases the batches and the next comparison
// faults.
func TestAccumulateKeyHoldsBatchesWhileSorting(t *testing.T) {
	batch.SetPoison(true)
	t.Cleanup(func() { batch.SetPoison(false) })
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	for range 3 {
		n, err := accumulateFaults(oneKeyBatches(t, 4, 20000))
		if err != nil {
			t.Fatal(err)
		}
		if n != 80000 {
			t.Fatalf("AccumulateKey returned %d values, want 80000", n)
		}
	}
}
