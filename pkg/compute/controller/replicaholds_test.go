package controller

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/tandemdb/tandem/pkg/compute/controller/testparams"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/storage"
)

// slowReplicaScenario is the load bug: replica r1 is hydrated and running
// ahead, replica r2 joins and receives the table-reading dataflow at an
// as_of, but its first storage read is slow (it reports nothing). While r1
// keeps advancing, well past the read policy's lag, it returns the table
// shard's storage since and the as_of r2 was sent. With r2's hold in place
// since must stay at or before that as_of.
type slowReplicaScenario struct {
	t      *testing.T
	h      *harness
	st     *storage.Store
	r1, r2 *fakeReplica
	asOfR2 frontier.Time
}

// newStorageHarness starts a controller over a real storage store whose
// table u1 holds one row, with a cluster "default" and no replica yet.
func newStorageHarness(t *testing.T, hooks testHooks) (*harness, *storage.Store) {
	t.Helper()
	st, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateShard("u1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(context.Background(), "u1", []storage.RowDiff{{Row: []byte("a"), Diff: 1}}); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, dialer: &fakeDialer{replicas: map[string]*fakeReplica{}}, orch: newFakeOrchestrator()}
	h.c = New(Config{Log: testr.New(t), Orchestrator: h.orch, Dialer: h.dialer, Storage: st, Oracle: st.Oracle(),
		ReadPolicyLag: 20 * time.Millisecond, TickInterval: 5 * time.Millisecond, MinReconnectBackoff: 5 * time.Millisecond,
		Parameters: testparams.Parameters(t)})
	h.c.hooks = hooks
	h.c.Start()
	t.Cleanup(h.c.Close)
	if err := h.c.CreateCluster("default"); err != nil {
		t.Fatal(err)
	}
	return h, st
}

func newSlowReplicaScenario(t *testing.T, hooks testHooks) *slowReplicaScenario {
	t.Helper()
	h, st := newStorageHarness(t, hooks)
	s := &slowReplicaScenario{t: t, h: h, st: st}
	s.r1 = h.addReplica("r1", 1)
	if err := h.c.CreateStorageCollection(gid("u1")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.c.CreateDataflow("default", testDataflow("u2", nil, []string{"u1"})); err != nil {
		t.Fatal(err)
	}
	s.advanceR1(5)
	s.r2 = h.addReplica("r2", 1)
	h.eventually("r2 received the dataflow", func() bool {
		s.r2.mu.Lock()
		defer s.r2.mu.Unlock()
		df, ok := s.r2.dataflows["u2"]
		s.asOfR2 = frontier.Time(df.AsOf)
		return ok
	})
	// r2 is slow: r1 runs on for many read-policy lags.
	s.advanceR1(30)
	return s
}

// advanceR1 lets time pass n ticks, r1 reporting u2 complete up to the
// table's upper each time.
func (s *slowReplicaScenario) advanceR1(n int) {
	for range n {
		if err := s.st.Tick(); err != nil {
			s.t.Fatal(err)
		}
		_, upper, _ := s.st.Frontiers("u1")
		s.r1.report("u2", upper)
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(30 * time.Millisecond) // let the compactor apply what it was given
}

func (s *slowReplicaScenario) storageSince() frontier.Time {
	since, _, _ := s.st.Frontiers("u1")
	return since
}

// TestSlowReplicaKeepsItsTableReadable reproduces "read before since": a
// replica whose first storage read takes longer than the read lag must
// still find the table readable at its dataflow's as_of, and the hold then
// follows what it reports and goes with the replica.
func TestSlowReplicaKeepsItsTableReadable(t *testing.T) {
	s := newSlowReplicaScenario(t, testHooks{})
	if since := s.storageSince(); since > s.asOfR2 {
		t.Fatalf("table since %d passed the as_of %d of a dataflow r2 has not hydrated", since, s.asOfR2)
	}
	// r2's first read finally happens, at its as_of.
	if _, err := s.st.Snapshot(context.Background(), "u1", s.asOfR2); err != nil {
		t.Fatalf("r2's first read: %v", err)
	}
	// r2 reports progress: its hold follows, one below its input frontier
	// (a broken stream is re-listened from there).
	s.r2.report("u2", frontier.At(s.asOfR2+40))
	s.h.eventually("table since follows r2", func() bool { return s.storageSince() == s.asOfR2+39 })
	s.advanceR1(5)
	if since := s.storageSince(); since != s.asOfR2+39 {
		t.Fatalf("table since %d, want r2's reported input frontier minus one %d", since, s.asOfR2+39)
	}
	// A reconnect does not release it: the replica keeps reading storage.
	before := s.h.c.OutstandingReadHolds()
	s.r2.disconnect()
	s.h.eventually("r2 reconnected", func() bool { return s.r2.connected() == 1 })
	s.advanceR1(5)
	if since := s.storageSince(); since > s.asOfR2+39 {
		t.Fatalf("table since %d passed r2's position %d across a reconnect", since, s.asOfR2+39)
	}
	if got := s.h.c.OutstandingReadHolds(); got != before {
		t.Fatalf("outstanding holds %d after reconnect, %d before", got, before)
	}
	// Removing the replica releases its hold: since follows r1 again.
	if err := s.h.c.DropReplica(context.Background(), "default", "r2"); err != nil {
		t.Fatal(err)
	}
	if got := s.h.c.OutstandingReadHolds(); got != before-1 {
		t.Fatalf("outstanding holds %d after dropping r2, want %d", got, before-1)
	}
	s.advanceR1(5)
	s.h.eventually("table since passes r2's old position", func() bool { return s.storageSince() > s.asOfR2+39 })
	// Dropping the dataflow releases r1's hold too.
	if err := s.h.c.DropCollection(gid("u2")); err != nil {
		t.Fatal(err)
	}
	s.h.eventually("only the table's policy hold is left", func() bool { return s.h.c.OutstandingReadHolds() == 1 })
}

// TestSlowReplicaCatchesAMissingHold removes the per-replica holds and
// shows that the test above fails: the table is compacted past the as_of
// of the dataflow r2 has not hydrated, and r2's first read fails with
// "read before since".
func TestSlowReplicaCatchesAMissingHold(t *testing.T) {
	s := newSlowReplicaScenario(t, testHooks{skipReplicaImportHolds: true})
	if since := s.storageSince(); since <= s.asOfR2 {
		t.Fatalf("without replica holds the table since %d stayed at r2's as_of %d: the test above cannot fail", since, s.asOfR2)
	}
	if _, err := s.st.Snapshot(context.Background(), "u1", s.asOfR2); err == nil {
		t.Fatal("without replica holds r2's first read succeeded")
	}
}

// TestReplicaHoldsOnCreateAndAcrossReplicas checks that a dataflow created
// while replicas exist holds its table per replica at the as_of, and that
// the table's since is the meet over replicas.
func TestReplicaHoldsOnCreateAndAcrossReplicas(t *testing.T) {
	s := newSlowReplicaScenario(t, testHooks{})
	// A second dataflow on the same table, created with both replicas up.
	asOf, err := s.h.c.CreateDataflow("default", testDataflow("u3", nil, []string{"u1"}))
	if err != nil {
		t.Fatal(err)
	}
	s.r1.report("u3", frontier.At(asOf+1000))
	s.r2.report("u2", frontier.At(asOf+1000))
	s.advanceR1(5)
	// r2 has not reported u3: the table stays readable at u3's as_of.
	if since := s.storageSince(); since > asOf {
		t.Fatalf("table since %d passed u3's as_of %d that r2 has not hydrated", since, asOf)
	}
	s.r2.report("u3", frontier.At(asOf+10))
	s.h.eventually("since is the meet of the replicas' holds", func() bool { return s.storageSince() == asOf+9 })
	if err := s.h.c.DropReplica(context.Background(), "default", "r2"); err != nil {
		t.Fatal(err)
	}
	s.advanceR1(3)
	s.h.eventually("since follows r1 once r2 is gone", func() bool { return s.storageSince() > asOf+9 })
}
