package frontier

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestHoldsFrontierMatchesCounts: after every update of a random sequence
// the frontier is the least time with a positive count and Len the sum of
// counts.
func TestHoldsFrontierMatchesCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	h := NewHolds()
	want := map[Time]int64{}
	var total int64
	for i := range 5000 {
		tm := Time(rng.IntN(64))
		delta := int64(1)
		if want[tm] > 0 && rng.IntN(2) == 0 {
			delta = -1
		}
		if err := h.Update(tm, delta); err != nil {
			t.Fatal(err)
		}
		want[tm] += delta
		if want[tm] == 0 {
			delete(want, tm)
		}
		total += delta
		least := Closed()
		for x := range want {
			if !least.LessEqualTime(x) {
				least = At(x)
			}
		}
		if got := h.Frontier(); got != least || h.Len() != total {
			t.Fatalf("step %d: frontier %v len %d, want %v len %d", i, got, h.Len(), least, total)
		}
	}
}

// TestHoldsCostIndependentOfOutstanding: taking and releasing a hold costs
// a bounded number of heap steps however many other holds are outstanding
// (a read's release must not recount a collection's holds).
func TestHoldsCostIndependentOfOutstanding(t *testing.T) {
	for _, n := range []int{10, 1000, 20000} {
		h := NewHolds()
		if err := h.Update(1, 1); err != nil { // the read policy's hold
			t.Fatal(err)
		}
		order := make([]Time, n)
		for i := range order {
			order[i] = Time(i + 2)
		}
		rand.New(rand.NewPCG(3, 4)).Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		before := h.Ops()
		for _, tm := range order {
			if err := h.Update(tm, 1); err != nil {
				t.Fatal(err)
			}
		}
		for _, tm := range slices.Backward(order) {
			if err := h.Update(tm, -1); err != nil {
				t.Fatal(err)
			}
			if h.Frontier() != At(1) {
				t.Fatalf("n=%d: frontier %v, want [1]", n, h.Frontier())
			}
		}
		if per := float64(h.Ops()-before) / float64(n); per > 4 {
			t.Fatalf("n=%d: %.1f heap steps per hold taken and released, want at most 4", n, per)
		}
	}
}
