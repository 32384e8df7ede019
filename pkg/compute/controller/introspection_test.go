package controller

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// peeksSeen counts the Peek commands a fake replica received for target.
func peeksSeen(f *fakeReplica, target string) int {
	n := 0
	for _, cmd := range f.commands() {
		if p := cmd.GetPeek(); p != nil && peekTarget(p) == target {
			n++
		}
	}
	return n
}

func rowsOf(vals ...int64) [][]*computepb.RowCount {
	var rs []*computepb.RowCount
	for _, v := range vals {
		rs = append(rs, &computepb.RowCount{Row: row.Pack(row.Int64(v)), Count: 1})
	}
	return [][]*computepb.RowCount{rs}
}

func TestIntrospectionReadsGoToOneReplica(t *testing.T) {
	h := newHarness(t)
	ids := map[string]plan.GlobalID{"arrangements": gid("s1"), "peeks": gid("s2")}
	if err := h.c.EnableIntrospection("default", ids, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := h.c.EnableIntrospection("default", ids, time.Second); !errors.Is(err, ErrExists) {
		t.Fatalf("enabling twice: %v, want ErrExists", err)
	}
	r1 := h.addReplica("r1", 1)
	r2 := h.addReplica("r2", 1)

	// Every replica is told, in CreateInstance, which ids to maintain.
	for name, f := range map[string]*fakeReplica{"r1": r1, "r2": r2} {
		ci := f.commands()[1].GetCreateInstance()
		got := map[string]plan.GlobalID{}
		for name, id := range ci.GetLogging().GetIndexes() {
			got[name], _ = protocol.GlobalIDFromProto(id)
		}
		if ci == nil || !maps.Equal(got, ids) || ci.GetLogging().GetIntervalMs() != 500 {
			t.Fatalf("%s: CreateInstance %v, want logging ids %v every 500ms", name, ci, ids)
		}
	}

	// Each replica has its own contents and frontier; r2 never reports s2.
	r1.report("s1", frontier.At(2000))
	r1.report("s2", frontier.At(3000))
	r2.report("s1", frontier.At(5000))
	h.eventually("frontiers reported", func() bool {
		cs, _ := h.collection("s1")
		s2, _ := h.collection("s2")
		return cs.Replicas["r1"] == "[2000]" && cs.Replicas["r2"] == "[5000]" && s2.Replicas["r1"] == "[3000]"
	})
	r1.mu.Lock()
	r1.rows["s1"], r1.rows["s2"] = rowsOf(1), rowsOf(7)
	r1.mu.Unlock()
	r2.mu.Lock()
	r2.rows["s1"] = rowsOf(2)
	r2.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name, target, replica string
		wantReplica           string
		wantTS                frontier.Time
		wantRow               int64
	}{
		{"named r1", "s1", "r1", "r1", 1999, 1},
		{"named r2", "s1", "r2", "r2", 4999, 2},
		{"any connected", "s1", "", "r1", 1999, 1},
		// r2 has not reported s2: a read on r1 must not wait for it.
		{"other replica behind", "s2", "r1", "r1", 2999, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before1, before2 := peeksSeen(r1, tc.target), peeksSeen(r2, tc.target)
			res, err := h.c.Peek(ctx, PeekRequest{Cluster: "default", Target: gid(tc.target), Replica: tc.replica})
			if err != nil {
				t.Fatal(err)
			}
			if res.Replica != tc.wantReplica || res.Timestamp != tc.wantTS {
				t.Fatalf("answered by %s at %d, want %s at %d", res.Replica, res.Timestamp, tc.wantReplica, tc.wantTS)
			}
			if len(res.Rows) != 1 || string(res.Rows[0].Row) != string(row.Pack(row.Int64(tc.wantRow))) {
				t.Fatalf("rows %v, want the one row of %s", res.Rows, tc.wantReplica)
			}
			asked1, asked2 := peeksSeen(r1, tc.target)-before1, peeksSeen(r2, tc.target)-before2
			if want1 := map[bool]int{true: 1}[tc.wantReplica == "r1"]; asked1 != want1 || asked1+asked2 != 1 {
				t.Fatalf("peek sent to r1 %d times and r2 %d times, want only %s once", asked1, asked2, tc.wantReplica)
			}
		})
	}

	if _, err := h.c.Peek(ctx, PeekRequest{Cluster: "default", Target: gid("s1"), Replica: "nope"}); !errors.Is(err, ErrUnknownReplica) {
		t.Fatalf("peek on a missing replica: %v, want ErrUnknownReplica", err)
	}
	if n := h.c.OutstandingReadHolds(); n != 2 {
		t.Fatalf("%d read holds outstanding, want the 2 read policies", n)
	}

	// A read pending on a replica that is dropped fails instead of hanging
	// (no other replica may answer it).
	r1.mu.Lock()
	delete(r1.rows, "s1")
	r1.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := h.c.Peek(ctx, PeekRequest{Cluster: "default", Target: gid("s1"), Replica: "r1"})
		done <- err
	}()
	h.eventually("peek pending on r1", func() bool { return r1.pendingPeeks() == 1 })
	if err := h.c.DropReplica(ctx, "default", "r1"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrUnknownReplica) {
		t.Fatalf("peek on a dropped replica: %v, want ErrUnknownReplica", err)
	}
	if n := peeksSeen(r2, "s1"); n != 1 {
		t.Fatalf("r2 saw %d peeks of s1, want only its own one", n)
	}
}

func TestIntrospectionCollectionsGoWithTheCluster(t *testing.T) {
	h := newHarness(t)
	if err := h.c.EnableIntrospection("default", map[string]plan.GlobalID{"arrangements": gid("s1")}, time.Second); err != nil {
		t.Fatal(err)
	}
	if got := h.c.IntrospectionIDs("default"); got["arrangements"] != gid("s1") {
		t.Fatalf("IntrospectionIDs = %v", got)
	}
	if err := h.c.DropCluster(context.Background(), "default"); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.collection("s1"); ok {
		t.Fatal("introspection collection outlived its cluster")
	}
	if err := h.c.CreateCluster("default"); err != nil {
		t.Fatal(err)
	}
	if err := h.c.EnableIntrospection("default", map[string]plan.GlobalID{"arrangements": gid("s1")}, time.Second); err != nil {
		t.Fatalf("re-enable on a re-created cluster: %v", err)
	}
}
