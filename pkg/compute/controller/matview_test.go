package controller

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/tandemdb/tandem/pkg/storage"
)

// sinkHarness is a controller over real storage holding table u1 and the
// sink shard u2 of a view reading it.
func sinkHarness(t *testing.T, st *storage.Store) *harness {
	t.Helper()
	h := &harness{t: t, dialer: &fakeDialer{replicas: map[string]*fakeReplica{}}, orch: newFakeOrchestrator()}
	h.c = New(Config{Log: testr.New(t), Orchestrator: h.orch, Dialer: h.dialer, Storage: st, Oracle: st.Oracle(),
		ReadPolicyLag: 20 * time.Millisecond, TickInterval: 5 * time.Millisecond, MinReconnectBackoff: 5 * time.Millisecond})
	h.c.Start()
	t.Cleanup(h.c.Close)
	if err := h.c.CreateCluster("default"); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSinkDataflowResumesAtTheShardsUpper checks the as_of of a
// materialized view's dataflow: at the shard's upper when the table is
// readable there (so a restarted view writes only what its shard lacks),
// at the table's since when it was compacted past the upper, and that
// pausing read policies (as recovery does) keeps the table readable at the
// shard's upper although its own policy would have moved past it.
func TestSinkDataflowResumesAtTheShardsUpper(t *testing.T) {
	ctx := context.Background()
	st, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.CreateShard("u1")
	t1, err := st.Append(ctx, "u1", []storage.RowDiff{{Row: []byte("a"), Diff: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateSinkShard("u2", t1); err != nil {
		t.Fatal(err)
	}
	// The table moves on by a second while the view's shard stays at t1.
	for range 10 {
		st.Tick()
		time.Sleep(100 * time.Millisecond)
	}
	sinkDF := func(id string) Dataflow {
		df := testDataflow(id, nil, []string{"u1"})
		df.IndexExports, df.SubscribeSinks = nil, gids(id)
		return df
	}

	// Recovery: policies paused, the view resumes at its shard's upper.
	h := sinkHarness(t, st)
	h.c.PauseReadPolicies()
	if err := h.c.CreateStorageCollection(gid("u1")); err != nil {
		t.Fatal(err)
	}
	if err := h.c.CreateStorageCollection(gid("u2")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond) // ticks advance write frontiers, not sinces
	asOf, err := h.c.CreateSinkDataflow("default", sinkDF("u3"), gid("u2"))
	if err != nil {
		t.Fatal(err)
	}
	h.c.ResumeReadPolicies()
	if asOf != t1 {
		t.Fatalf("view dataflow as_of %d, want the shard's upper %d", asOf, t1)
	}
	// The table's policy moved on, but the dataflow holds it at its as_of.
	h.eventually("table held at the view's as_of", func() bool { s, _, _ := st.Frontiers("u1"); return s == asOf })
	h.c.Close()

	// Without the pause the table's since runs ahead of the shard: the
	// view starts at the since (and its shard keeps its old contents in
	// between).
	h = sinkHarness(t, st)
	if err := h.c.CreateStorageCollection(gid("u1")); err != nil {
		t.Fatal(err)
	}
	if err := h.c.CreateStorageCollection(gid("u2")); err != nil {
		t.Fatal(err)
	}
	h.eventually("table since past the shard's upper", func() bool {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		s, _ := h.c.collections[gid("u1")].since.Time()
		return s > t1
	})
	asOf, err = h.c.CreateSinkDataflow("default", sinkDF("u4"), gid("u2"))
	if err != nil {
		t.Fatal(err)
	}
	h.c.mu.Lock()
	since, _ := h.c.collections[gid("u1")].since.Time()
	h.c.mu.Unlock()
	if asOf <= t1 || asOf > since {
		t.Fatalf("view dataflow as_of %d, want the table's since %d (past the shard's upper %d)", asOf, since, t1)
	}
	if _, err := h.c.CreateSinkDataflow("default", sinkDF("u5"), gid("u99")); err == nil {
		t.Fatal("a sink dataflow for an unknown shard was accepted")
	}
}
