package controller

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// holdScenarios runs peeks along every path (answered, refused, cancelled,
// timed out, unknown target, unreadable time, answered after cancellation
// raced) and returns the paths after which more read holds are outstanding
// than before.
func holdScenarios(t *testing.T, h *harness, f *fakeReplica) []string {
	t.Helper()
	var leaks []string
	check := func(path string, run func()) {
		before := h.c.OutstandingReadHolds()
		run()
		// Releases happen before Peek returns; nothing to wait for.
		if after := h.c.OutstandingReadHolds(); after != before {
			leaks = append(leaks, path)
			t.Logf("path %q: %d holds before, %d after", path, before, after)
		}
	}
	req := PeekRequest{Cluster: "default", Target: gid("u1")}

	check("answered", func() {
		f.mu.Lock()
		f.rows["u1"] = [][]*computepb.RowCount{{{Row: row.Pack(row.Int64(1)), Count: 1}}}
		f.mu.Unlock()
		if _, err := h.c.Peek(context.Background(), req); err != nil {
			t.Fatalf("answered peek: %v", err)
		}
	})
	check("replica error", func() {
		f.mu.Lock()
		f.peekErr = &computepb.PeekError{Sqlstate: "22012", Message: "division by zero"}
		f.mu.Unlock()
		_, err := h.c.Peek(context.Background(), req)
		var pe *PeekError
		if !errors.As(err, &pe) || pe.SQLState != "22012" {
			t.Fatalf("error peek: %v", err)
		}
		f.mu.Lock()
		f.peekErr = nil
		delete(f.rows, "u1")
		f.mu.Unlock()
	})
	check("cancelled", func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := h.c.Peek(ctx, req); done <- err }()
		h.eventually("peek pending on replica", func() bool { return f.pendingPeeks() == 1 })
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled peek: %v", err)
		}
		h.eventually("replica told to cancel", func() bool { return f.pendingPeeks() == 0 })
	})
	check("deadline", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, err := h.c.Peek(ctx, req); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("timed out peek: %v", err)
		}
	})
	check("slow path answered", func() {
		id := h.c.AllocateTransientID().String()
		f.mu.Lock()
		f.rows[id] = [][]*computepb.RowCount{{{Row: row.Pack(row.Int64(2)), Count: 3}}}
		f.mu.Unlock()
		res, err := h.c.PeekDataflow(context.Background(), "default", testDataflow(id, []string{"u1"}, nil), Serializable, nil)
		if err != nil || len(res.Rows) != 1 || res.Rows[0].Count != 3 {
			t.Fatalf("slow path peek: %+v, %v", res, err)
		}
		// The transient dataflow goes once the replica confirmed the drop.
		if !waitFor(func() bool { _, ok := h.collection(id); return !ok }) {
			leaks = append(leaks, "slow path answered: dataflow kept")
		}
	})
	check("slow path cancelled", func() {
		id := h.c.AllocateTransientID().String()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, err := h.c.PeekDataflow(ctx, "default", testDataflow(id, []string{"u1"}, nil), StrictSerializable, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("slow path timed out: %v", err)
		}
		if !waitFor(func() bool { _, ok := h.collection(id); return !ok }) {
			leaks = append(leaks, "slow path cancelled: dataflow kept")
		}
	})
	check("unknown target", func() {
		if _, err := h.c.Peek(context.Background(), PeekRequest{Cluster: "default", Target: gid("u999")}); !errors.Is(err, ErrUnknownCollection) {
			t.Fatalf("unknown target: %v", err)
		}
	})
	check("unreadable hold", func() {
		if _, err := h.c.AcquireReadHold(gid("u1"), 0); !errors.Is(err, ErrNotReadable) {
			t.Fatalf("hold before since: %v", err)
		}
	})
	check("snapshot read and released twice", func() {
		snap, err := h.c.HoldSnapshot(gids("u1", "u999"), nil, Serializable)
		if err != nil {
			t.Fatal(err)
		}
		if !snap.Holds(gid("u1")) || snap.Holds(gid("u999")) {
			t.Fatalf("snapshot holds u1 %v, u999 %v: want the known collection only", snap.Holds(gid("u1")), snap.Holds(gid("u999")))
		}
		f.mu.Lock()
		f.rows["u1"] = [][]*computepb.RowCount{{{Row: row.Pack(row.Int64(1)), Count: 1}}}
		f.mu.Unlock()
		at := snap.Time()
		res, err := h.c.Peek(context.Background(), PeekRequest{Cluster: "default", Target: gid("u1"), AsOf: &at})
		if err != nil || res.Timestamp != at {
			t.Fatalf("peek at the snapshot's time %d: %+v, %v", at, res, err)
		}
		f.mu.Lock()
		delete(f.rows, "u1")
		f.mu.Unlock()
		snap.Release()
		snap.Release()
	})
	check("acquired and released twice", func() {
		hold, err := h.c.AcquireReadHold(gid("u1"), 5000)
		if err != nil {
			t.Fatal(err)
		}
		hold.Release()
		hold.Release()
	})
	return leaks
}

func setupIndex(t *testing.T) (*harness, *fakeReplica) {
	h := newHarness(t)
	f := h.addReplica("r1", 1)
	if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
		t.Fatal(err)
	}
	f.report("u1", frontier.At(5000))
	h.eventually("u1 write frontier", func() bool { cs, _ := h.collection("u1"); return cs.Write == "[5000]" })
	return h, f
}

func TestNoReadHoldOutlivesItsRead(t *testing.T) {
	h, f := setupIndex(t)
	baseline := h.c.OutstandingReadHolds()
	if leaks := holdScenarios(t, h, f); len(leaks) > 0 {
		t.Fatalf("read holds leaked on paths %v", leaks)
	}
	if got := h.c.OutstandingReadHolds(); got != baseline {
		t.Fatalf("outstanding holds %d, baseline %d", got, baseline)
	}
	// Dropping the index releases the controller's own holds too.
	if err := h.c.DropCollection(gid("u1")); err != nil {
		t.Fatal(err)
	}
	h.eventually("no holds after drop", func() bool { return h.c.OutstandingReadHolds() == 0 })
}

// TestHoldAccountingCatchesAMissingRelease removes the peek's release and
// checks that the scenario test above would fail.
func TestHoldAccountingCatchesAMissingRelease(t *testing.T) {
	h, f := setupIndex(t)
	h.c.hooks.skipPeekHoldRelease = true
	leaks := holdScenarios(t, h, f)
	for _, want := range []string{"answered", "replica error", "cancelled", "deadline", "slow path answered", "slow path cancelled"} {
		if !slices.Contains(leaks, want) {
			t.Errorf("sabotaged release on path %q went unnoticed (detected: %v)", want, leaks)
		}
	}
}

func TestSinceFollowsReadPolicyAndCompactionIsSent(t *testing.T) {
	h := newHarness(t)
	f := h.addReplica("r1", 1)
	asOf, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if asOf != 1000 {
		t.Fatalf("as_of %d, want the oracle's 1000 for a dataflow without inputs", asOf)
	}
	// u2 reads u1: created at u1's latest complete time.
	f.report("u1", frontier.At(2000))
	h.eventually("u1 at 2000", func() bool { cs, _ := h.collection("u1"); return cs.Write == "[2000]" })
	if cs, _ := h.collection("u1"); cs.Since != "[1990]" {
		t.Fatalf("u1 since %s, want write-lag [1990]", cs.Since)
	}
	asOf2, err := h.c.CreateDataflow("default", testDataflow("u2", []string{"u1"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if asOf2 != 1999 {
		t.Fatalf("u2 as_of %d, want 1999", asOf2)
	}
	// u1's policy moves on, but u2 holds u1 at u2's since.
	f.report("u1", frontier.At(3000))
	h.eventually("u1 at 3000", func() bool { cs, _ := h.collection("u1"); return cs.Write == "[3000]" })
	if cs, _ := h.collection("u1"); cs.Since != "[1999]" {
		t.Fatalf("u1 since %s, want [1999] (policy at 2990, u2 holds it at u2's since 1999)", cs.Since)
	}
	f.report("u2", frontier.At(3000))
	h.eventually("u2 since advanced", func() bool { cs, _ := h.collection("u2"); return cs.Since == "[2990]" })
	h.eventually("u1 since follows u2", func() bool { cs, _ := h.collection("u1"); return cs.Since == "[2990]" })
	// Replicas were told.
	h.eventually("AllowCompaction u1 [2990] sent", func() bool {
		for _, c := range f.commands() {
			if ac := c.GetAllowCompaction(); ac != nil && printed(ac.GetId()) == "u1" && protocol.FrontierFromProto(ac.GetFrontier()) == frontier.At(2990) {
				return true
			}
		}
		return false
	})
	// u1 cannot go while u2 reads it, even when dropped.
	if err := h.c.DropCollection(gid("u1")); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.collection("u1"); !ok {
		t.Fatal("u1 removed while u2 still reads it")
	}
	if err := h.c.DropCollection(gid("u2")); err != nil {
		t.Fatal(err)
	}
	h.eventually("both gone once replicas reported them closed", func() bool {
		_, ok1 := h.collection("u1")
		_, ok2 := h.collection("u2")
		return !ok1 && !ok2
	})
	if n, _ := h.c.HistorySize("default"); n != 1 {
		t.Fatalf("history after dropping everything has %d commands, want only CreateInstance", n)
	}
}

func TestReconnectReplaysReducedHistoryAndFrontiersNeverRegress(t *testing.T) {
	h := newHarness(t)
	f := h.addReplica("r1", 1)
	if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.CreateDataflow("default", testDataflow("u2", nil, nil)); err != nil {
		t.Fatal(err)
	}
	if err := h.c.DropCollection(gid("u2")); err != nil {
		t.Fatal(err)
	}
	f.report("u1", frontier.At(5000))
	h.eventually("u1 at 5000", func() bool { cs, _ := h.collection("u1"); return cs.Write == "[5000]" })
	before := h.c.Status().Clusters[0].Replicas[0].Epoch

	f.mu.Lock()
	f.log = nil
	f.mu.Unlock()
	f.disconnect()
	h.eventually("reconnected with a new epoch", func() bool {
		r := h.c.Status().Clusters[0].Replicas[0]
		return r.Connected && r.Epoch > before
	})
	h.eventually("history replayed", func() bool {
		k := f.commandKinds()
		return len(k) > 0 && k[len(k)-1] == protocol.KindInitializationComplete
	})
	want := []string{protocol.KindHello, protocol.KindCreateInstance, protocol.KindCreateDataflow, protocol.KindSchedule, protocol.KindInitializationComplete}
	if got := f.commandKinds(); !equalStrings(got, want) {
		t.Fatalf("replayed %v, want %v (u2 dropped, so absent)", got, want)
	}
	// The dataflow is re-based to u1's since.
	f.mu.Lock()
	df := f.dataflows["u1"]
	f.mu.Unlock()
	if df.AsOf != 4990 {
		t.Fatalf("replayed as_of %d, want since 4990", df.AsOf)
	}
	// The new incarnation reports less than before: the collection's
	// frontier does not regress, and the replica is not yet hydrated.
	f.report("u1", frontier.At(4995))
	time.Sleep(20 * time.Millisecond)
	if cs, _ := h.collection("u1"); cs.Write != "[5000]" {
		t.Fatalf("write frontier regressed across reconnect: %s", cs.Write)
	}
	f.report("u1", frontier.At(6000))
	h.eventually("u1 advances again", func() bool { cs, _ := h.collection("u1"); return cs.Write == "[6000]" })
}

func TestStaleEpochResponsesAreIgnored(t *testing.T) {
	h := newHarness(t)
	f := h.addReplica("r1", 1)
	if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
		t.Fatal(err)
	}
	h.c.mu.Lock()
	r := h.c.clusters["default"].replicas["r1"]
	epoch := r.epoch
	h.c.mu.Unlock()
	// A response tagged with an older epoch, as a slow old connection
	// would deliver it.
	h.c.handleResponse(r, epoch-1, 0, frontiersResp("u1", frontier.At(9000)))
	if cs, _ := h.collection("u1"); cs.Write != "[1000]" {
		t.Fatalf("stale response applied: write %s", cs.Write)
	}
	h.c.handleResponse(r, epoch, 0, frontiersResp("u1", frontier.At(9000)))
	if cs, _ := h.collection("u1"); cs.Write != "[9000]" {
		t.Fatalf("current response not applied: write %s", cs.Write)
	}
	_ = f
}

func TestMultiProcessReplicaMergesFrontiersAndPeeks(t *testing.T) {
	h := newHarness(t)
	f := h.addReplica("r1", 2)
	if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
		t.Fatal(err)
	}
	f.reportFrom(0, "u1", frontier.At(3000))
	time.Sleep(20 * time.Millisecond)
	if cs, _ := h.collection("u1"); cs.Write != "[1000]" {
		t.Fatalf("one process's frontier applied alone: %s (want the meet, still [1000])", cs.Write)
	}
	f.reportFrom(1, "u1", frontier.At(2500))
	h.eventually("meet of processes", func() bool { cs, _ := h.collection("u1"); return cs.Write == "[2500]" })

	f.mu.Lock()
	f.rows["u1"] = [][]*computepb.RowCount{
		{{Row: row.Pack(row.Int64(1), row.Text("a")), Count: 2}, {Row: row.Pack(row.Int64(4), row.Text("d")), Count: 1}},
		{{Row: row.Pack(row.Int64(2), row.Text("b")), Count: 1}, {Row: row.Pack(row.Int64(3), row.Text("c")), Count: 1}},
	}
	f.mu.Unlock()
	limit := int64(2)
	res, err := h.c.Peek(context.Background(), PeekRequest{Cluster: "default", Target: gid("u1"), Finishing: &plan.Finishing{
		Order: []plan.ColumnOrder{{Column: 0, Desc: true}}, Limit: &limit, Offset: 1, Project: []int{1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Union ordered desc: 4d, 3c, 2b, 1a x2; offset 1, limit 2: 3c, 2b; projected to column 1.
	want := []string{"('c')x1", "('b')x1"}
	if got := fmtRows(res.Rows); !equalStrings(got, want) {
		t.Fatalf("merged peek %v, want %v", got, want)
	}
	// The replica was asked for offset+limit rows, unprojected.
	for _, c := range f.commands() {
		if p := c.GetPeek(); p != nil {
			if p.GetFinishing().GetLimit() != 3 || p.GetFinishing().GetOffset() != 0 || len(p.GetFinishing().GetProject()) != 0 {
				t.Fatalf("replica finishing %v", p.GetFinishing())
			}
		}
	}
}

func TestFirstReplicaAnswerWinsAndOthersAreCancelled(t *testing.T) {
	h := newHarness(t)
	fast := h.addReplica("fast", 1)
	slow := h.addReplica("slow", 1)
	if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
		t.Fatal(err)
	}
	fast.report("u1", frontier.At(3000))
	h.eventually("u1 at 3000", func() bool { cs, _ := h.collection("u1"); return cs.Write == "[3000]" })
	fast.mu.Lock()
	fast.rows["u1"] = [][]*computepb.RowCount{{{Row: row.Pack(row.Int64(7)), Count: 1}}}
	fast.mu.Unlock()
	res, err := h.c.Peek(context.Background(), PeekRequest{Cluster: "default", Target: gid("u1")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Replica != "fast" || len(res.Rows) != 1 {
		t.Fatalf("result %+v", res)
	}
	h.eventually("slow replica told to cancel", func() bool {
		for _, c := range slow.commands() {
			if c.GetCancelPeek() != nil {
				return true
			}
		}
		return false
	})
	for _, c := range fast.commands() {
		if c.GetCancelPeek() != nil {
			t.Fatal("the answering replica was sent CancelPeek")
		}
	}
}

func TestSubscribeDeliversConsolidatedBatchesAndDropsOnCancel(t *testing.T) {
	h := newHarness(t)
	f := h.addReplica("r1", 1)
	if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
		t.Fatal(err)
	}
	f.report("u1", frontier.At(2000))
	h.eventually("u1 at 2000", func() bool { cs, _ := h.collection("u1"); return cs.Write == "[2000]" })
	df := testDataflow("t1", []string{"u1"}, nil)
	df.IndexExports, df.SubscribeSinks = nil, gids("t1")
	ctx, cancel := context.WithCancel(context.Background())
	sub, err := h.c.Subscribe(ctx, "default", df)
	if err != nil {
		t.Fatal(err)
	}
	send := func(lower, upper frontier.Time, updates ...*computepb.Update) {
		f.mu.Lock()
		p := f.procs[0]
		f.mu.Unlock()
		p.send(&computepb.Response{Kind: &computepb.Response_SubscribeResponse{SubscribeResponse: &computepb.SubscribeResponse{
			Id: protocol.GlobalIDToProto(gid("t1")), Lower: protocol.FrontierToProto(frontier.At(lower)), Upper: protocol.FrontierToProto(frontier.At(upper)),
			Kind: &computepb.SubscribeResponse_Updates{Updates: &computepb.SubscribeUpdates{Updates: updates}}}}})
	}
	a, b := row.Pack(row.Text("a")), row.Pack(row.Text("b"))
	send(1999, 2001, &computepb.Update{Row: a, Time: 1999, Diff: 1}, &computepb.Update{Row: b, Time: 2000, Diff: 1}, &computepb.Update{Row: b, Time: 2000, Diff: 1})
	batch := <-sub.Batches()
	if batch.Lower != frontier.At(1999) || batch.Upper != frontier.At(2001) || len(batch.Updates) != 2 || batch.Updates[1].Diff != 2 {
		t.Fatalf("first batch %+v", batch)
	}
	send(2001, 2005, &computepb.Update{Row: a, Time: 2003, Diff: 1}, &computepb.Update{Row: a, Time: 2003, Diff: -1})
	batch = <-sub.Batches()
	if batch.Lower != frontier.At(2001) || batch.Upper != frontier.At(2005) || len(batch.Updates) != 0 {
		t.Fatalf("second batch %+v (want the cancelling updates consolidated away)", batch)
	}
	// The sink's since follows delivery, so u1 may compact behind it.
	h.eventually("sink since follows delivery", func() bool { cs, _ := h.collection("t1"); return cs.Since == "[2005]" })
	cancel()
	h.eventually("sink dropped on replicas", func() bool {
		for _, c := range f.commands() {
			if ac := c.GetAllowCompaction(); ac != nil && printed(ac.GetId()) == "t1" && ac.GetFrontier().GetClosed() {
				return true
			}
		}
		return false
	})
	if _, open := <-sub.Batches(); open {
		t.Fatal("batches still open after cancel")
	}
}

// waitFor polls cond for up to 30s: generous, because a loaded machine
// (CI runs packages side by side under -race) can delay any goroutine.
func waitFor(cond func() bool) bool {
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func fmtRows(rows []row.RowCount) []string {
	var out []string
	for _, r := range rows {
		out = append(out, row.Row(r.Row).String()+"x"+itoa(uint64(r.Count)))
	}
	return out
}

func itoa(n uint64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
