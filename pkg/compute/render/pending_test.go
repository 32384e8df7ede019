package render

import (
	"slices"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

func timedUpdates(times ...frontier.Time) []dataflow.Update {
	out := make([]dataflow.Update, len(times))
	for i, t := range times {
		out[i] = dataflow.Update{Val: []byte{byte(i)}, Time: t, Diff: 1}
	}
	return out
}

// TestPendingUpdatesKeepArrivalsWithoutCopying: an arrangement's pending
// updates keep the slices they arrived in (taking in a slice copies none
// of what is pending, so a step costs what arrived in it, not what is
// pending), splitting at a frontier moves whole slices and copies only one
// that straddles it, and take consumes in arrival order without writing to
// the (read-only) slices.
func TestPendingUpdatesKeepArrivalsWithoutCopying(t *testing.T) {
	a, b, c := timedUpdates(1, 1, 1), timedUpdates(1, 5, 2), timedUpdates(6, 7)
	var p pendingUpdates
	for _, s := range [][]dataflow.Update{a, b, nil, c} {
		p.add(s)
	}
	if p.n != 8 || len(p.chunks) != 3 || &p.chunks[0][0] != &a[0] || &p.chunks[2][0] != &c[0] {
		t.Fatalf("pending after three arrivals: %d updates in %d slices; want 8 in the 3 slices as they arrived", p.n, len(p.chunks))
	}
	if got := p.newest(4); !slices.EqualFunc(got, append(b[1:], c...), sameUpdate) {
		t.Errorf("newest(4) = %v", got)
	}
	ready := p.splitBefore(frontier.At(5))
	if ready.n != 5 || &ready.chunks[0][0] != &a[0] || ready.chunks[1][0].Time != 1 || ready.chunks[1][1].Time != 2 {
		t.Errorf("ready before 5: %+v; want a's slice itself, then b's updates at 1 and 2", ready.chunks)
	}
	if p.n != 3 || p.chunks[0][0].Time != 5 || &p.chunks[1][0] != &c[0] {
		t.Errorf("kept at or after 5: %+v; want b's update at 5, then c's slice itself", p.chunks)
	}
	var order []frontier.Time
	ready.take(4, func(u dataflow.Update) { order = append(order, u.Time) })
	if !slices.Equal(order, []frontier.Time{1, 1, 1, 1}) || ready.n != 1 || len(ready.chunks) != 1 {
		t.Errorf("take(4): %v, left %d in %d slices", order, ready.n, len(ready.chunks))
	}
	if a[0].Val == nil || b[0].Val == nil {
		t.Error("take wrote to a slice it was given")
	}
	ready.take(1, func(dataflow.Update) {})
	if ready.n != 0 || ready.chunks != nil {
		t.Errorf("all taken: %d left in %v", ready.n, ready.chunks)
	}
	if got := p.flatten(); len(got) != 3 || &got[1] == &c[0] {
		t.Errorf("flatten must copy: %v", got)
	}
}

func sameUpdate(x, y dataflow.Update) bool {
	return x.Time == y.Time && x.Diff == y.Diff && string(x.Val) == string(y.Val)
}

// TestPendingBytesPerUpdate: a run's reservation is estimated from the
// oldest pending updates, across slices, an eighth over their mean; no
// update, no estimate.
func TestPendingBytesPerUpdate(t *testing.T) {
	sized := func(n, keyLen, valLen int) []dataflow.Update {
		out := make([]dataflow.Update, n)
		for i := range out {
			out[i] = dataflow.Update{Key: make([]byte, keyLen), Val: make([]byte, valLen), Diff: 1}
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		chunks [][]dataflow.Update
		sample int
		want   int
	}{
		{"empty", nil, 64, 0},
		{"one slice", [][]dataflow.Update{sized(10, 8, 56)}, 64, 64 + 8 + 1},
		{"across slices", [][]dataflow.Update{sized(2, 8, 8), sized(2, 8, 40)}, 4, 32 + 4 + 1},
		{"only the sample", [][]dataflow.Update{sized(4, 8, 8), sized(100, 8, 1000)}, 4, 16 + 2 + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p pendingUpdates
			for _, c := range tc.chunks {
				p.add(c)
			}
			if got := p.bytesPerUpdate(tc.sample); got != tc.want {
				t.Errorf("bytesPerUpdate(%d) = %d, want %d", tc.sample, got, tc.want)
			}
		})
	}
}
