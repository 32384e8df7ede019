package controller

import (
	"context"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/loadgen"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/storage"
)

// TestStrictReadWaitsOnlyForWritesItMustSee checks what a strict
// serializable read waits for, not how long: the time it is sent at. Over
// a real storage oracle, an index u2 on table u1 whose replica reported it
// complete up to a point and then stalled (a maintenance step in
// progress) while storage kept ticking:
//   - with no write since, the read's time is below the index's reported
//     write frontier: the replica answers at once, waiting for no tick and
//     no step;
//   - after a write to u1, the read's time is at or after the write;
//   - strict reads never go back in time, and the oracle's read timestamp
//     is at the last one's time.
//
// Reading at the oracle's latest handed-out time (the old selection) sends
// the first read past the stalled frontier and fails here.
func TestStrictReadWaitsOnlyForWritesItMustSee(t *testing.T) {
	h, st := newStorageHarness(t, testHooks{})
	f := h.addReplica("r1", 1)
	f.rows["u2"] = [][]*computepb.RowCount{{{Row: []byte("a"), Count: 1}}}
	if err := h.c.CreateStorageCollection(gid("u1")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.CreateDataflow("default", testDataflow("u2", nil, []string{"u1"})); err != nil {
		t.Fatal(err)
	}
	// The replica catches up with the table, then stalls.
	_, upper, err := st.Frontiers("u1")
	if err != nil {
		t.Fatal(err)
	}
	f.report("u2", upper)
	h.eventually("u2 reported", func() bool { s, _ := h.collection("u2"); return s.Write == upper.String() })
	stalled, _ := upper.Time()
	for range 5 {
		if err := st.Tick(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if last := st.Oracle().LastTS(); last < stalled {
		t.Fatalf("storage did not tick past the stalled frontier: last %d, stalled %d", last, stalled)
	}
	read := func() frontier.Time {
		t.Helper()
		res, err := h.c.Peek(context.Background(), PeekRequest{Cluster: "default", Target: gid("u2"), Isolation: StrictSerializable})
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Oracle().ReadTS(); got < res.Timestamp {
			t.Fatalf("oracle read timestamp %d behind the strict read at %d", got, res.Timestamp)
		}
		return res.Timestamp
	}
	first := read()
	if first >= stalled {
		t.Fatalf("strict read without writes at %d: not complete below the index's frontier %d (it waits for a step)", first, stalled)
	}
	again := read()
	if again < first {
		t.Fatalf("strict read at %d after one at %d: went back in time", again, first)
	}
	// The index catches up with the ticks, with no write: a strict read is
	// at its latest complete time (fresher, still no wait), so temporal
	// filters over tables are seen to move with the clock.
	_, caught, err := st.Frontiers("u1")
	if err != nil {
		t.Fatal(err)
	}
	f.report("u2", caught)
	h.eventually("u2 caught up", func() bool { s, _ := h.collection("u2"); return s.Write == caught.String() })
	if ct, _ := caught.Time(); ct <= stalled+1 {
		t.Fatalf("ticks did not move the table past the stalled frontier: %d, stalled %d", ct, stalled)
	} else if ts := read(); ts != ct-1 {
		t.Fatalf("strict read at %d with its index complete to %d and nothing written: want %d", ts, ct-1, ct-1)
	}
	w, err := st.Append(context.Background(), "u1", []storage.RowDiff{{Row: []byte("b"), Diff: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if ts := read(); ts < w {
		t.Fatalf("strict read at %d after a write at %d: misses it", ts, w)
	}
}

// TestGeneratorBounds checks the times a load generator imposes on reads
// and new dataflows: never before its first tick (its snapshot), and at
// most its latest tick for a serializable choice, so a read of a generator
// waits for its first tick and for nothing later.
func TestGeneratorBounds(t *testing.T) {
	clock := loadgen.Clock{Start: 10_000, TickMS: 1000}
	for _, tc := range []struct {
		name       string
		now        frontier.Time
		readTS     frontier.Time
		iso        Isolation
		want       frontier.Time
		wantOracle frontier.Time
	}{
		{"serializable before the first tick waits for it", 10_500, 0, Serializable, 11_000, 0},
		{"serializable reads the latest tick", 13_400, 0, Serializable, 13_000, 0},
		{"strict reads the latest tick without waiting for the next", 13_400, 12_500, StrictSerializable, 13_000, 13_000},
		{"strict after a later write reads at the write", 13_400, 13_300, StrictSerializable, 13_300, 13_300},
		{"strict before the first tick waits for it", 10_200, 10_100, StrictSerializable, 11_000, 11_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			o := &appliedOracle{t: tc.readTS}
			h.c.cfg.Oracle = o
			h.c.cfg.Now = func() time.Time { return time.UnixMilli(int64(tc.now)) }
			h.c.mu.Lock()
			got, err := h.c.chooseTimeLocked(nil, []loadgen.Clock{clock}, tc.iso)
			h.c.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("time %d, want %d", got, tc.want)
			}
			if o.t != max(tc.readTS, tc.wantOracle) {
				t.Errorf("oracle read timestamp %d after the read, want %d", o.t, max(tc.readTS, tc.wantOracle))
			}
		})
	}
}

// appliedOracle is an oracle whose read timestamp follows ApplyRead.
type appliedOracle struct{ t frontier.Time }

func (o *appliedOracle) ReadTS() frontier.Time      { return o.t }
func (o *appliedOracle) ApplyRead(ts frontier.Time) { o.t = max(o.t, ts) }
