package storage

import (
	"context"
	"testing"
)

// TestAppendCompletesEveryTableAtItsTime checks the read side of a write:
// once Append returns, the oracle's read timestamp is the write's time and
// every table (not only the one written) is complete at it, so a strict
// serializable read at ReadTS waits for no table's next tick. Ticks move
// uppers but not ReadTS.
func TestAppendCompletesEveryTableAtItsTime(t *testing.T) {
	st, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range []string{"u1", "u2"} {
		if err := st.CreateShard(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.CreateSinkShard("u3", 0); err != nil {
		t.Fatal(err)
	}
	before := st.Oracle().ReadTS()
	if err := st.Tick(); err != nil {
		t.Fatal(err)
	}
	if got := st.Oracle().ReadTS(); got != before {
		t.Fatalf("a tick moved ReadTS from %d to %d", before, got)
	}
	ts, err := st.Append(context.Background(), "u1", []RowDiff{{Row: []byte("a"), Diff: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Oracle().ReadTS(); got != ts {
		t.Fatalf("ReadTS %d after a write at %d", got, ts)
	}
	for _, id := range []string{"u1", "u2"} {
		_, upper, err := st.Frontiers(id)
		if err != nil {
			t.Fatal(err)
		}
		if !upper.IsComplete(ts) {
			t.Errorf("table %s upper %v: not complete at the write's time %d", id, upper, ts)
		}
	}
	// A sink's upper is its writer's alone.
	if _, upper, _ := st.Frontiers("u3"); upper.IsComplete(ts) {
		t.Errorf("sink u3 upper %v moved with a table write", upper)
	}
}
