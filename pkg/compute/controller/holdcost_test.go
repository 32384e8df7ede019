package controller

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// TestReadHoldCostIndependentOfOutstandingReads: a read's hold, taken and
// released under the controller's lock, costs a bounded number of steps on
// the collection's holds however many other reads hold it at other times,
// and releasing them never moves since back.
func TestReadHoldCostIndependentOfOutstandingReads(t *testing.T) {
	h, _ := setupIndex(t)
	state := func() (ops int64, since frontier.Frontier) {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		col := h.c.collections[gid("u1")]
		return col.holds.Ops(), col.since
	}
	_, since0 := state()
	base, ok := since0.Time()
	if !ok {
		t.Fatal("u1 has no since")
	}
	for _, n := range []int{10, 3000} {
		before, _ := state()
		holds := make([]*ReadHold, n)
		for i := range holds {
			hold, err := h.c.AcquireReadHold(gid("u1"), base+frontier.Time(1+i))
			if err != nil {
				t.Fatal(err)
			}
			holds[i] = hold
		}
		for _, hold := range holds {
			hold.Release()
		}
		after, since := state()
		if since.Less(since0) {
			t.Fatalf("since went back from %v to %v", since0, since)
		}
		if per := float64(after-before) / float64(n); per > 4 {
			t.Fatalf("%d reads: %.1f hold steps per read, want at most 4", n, per)
		}
	}
}
