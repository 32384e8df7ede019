package controller_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/controller/testparams"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// oneShotCopy is a one-shot read of index u<index> (a kvIndex on
// u<source>): a transient dataflow importing the index and exporting its
// rows as a transient index, as the SQL layer builds for a read that no
// index answers directly.
func oneShotCopy(t *testing.T, ctl *controller.Controller, index, source uint64) controller.Dataflow {
	t.Helper()
	ids := make([]plan.GlobalID, 2)
	for i := range ids {
		ids[i] = ctl.AllocateTransientID()
	}
	build, export := ids[0], ids[1]
	desc := row.NewRelationDesc([]string{"key", "partition", "value"},
		[]row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}, {Type: row.TypeBytes}})
	d := &plan.DataflowDescription{
		ID: export, DebugName: "one-shot copy", Class: plan.ClassOneShotRead, Until: frontier.Closed(),
		IndexImports:   []plan.IndexImport{{ID: plan.User(index), On: plan.User(source), Key: []expr.Expr{expr.Column(0)}, Desc: desc}},
		ObjectsToBuild: []plan.Build{{ID: build, Plan: plan.NewGet(plan.User(source))}},
		IndexExports:   []plan.IndexExport{{ID: export, On: build, Key: []expr.Expr{expr.Column(0), expr.Column(1), expr.Column(2)}}},
	}
	df, err := controller.FromPlan(d)
	if err != nil {
		t.Fatal(err)
	}
	return df
}

// TestOneShotReadRunsWhereTheFlagSays pins that this run's
// TANDEM_TEST_SYSTEM_PARAMETERS reach the replicas, so that `make
// test-flag-on` is not silently a flag-off run: with
// enable_compute_interactive_dataflows on, the replica runs a maintenance
// and an interactive runtime and a one-shot read is answered by the
// interactive one; with it off, the replica runs one (solo) runtime. The
// read's answer is the index's contents either way.
func TestOneShotReadRunsWhereTheFlagSays(t *testing.T) {
	e := newRealEnv(t, nil)
	e.replica("r1", 1, 2)
	const keys = 1000
	start := frontier.Time(time.Now().UnixMilli()) - 1000
	if _, err := e.ctl.CreateDataflow("default", kvIndex(1, 100, keys, start)); err != nil {
		t.Fatal(err)
	}
	e.waitFor("hydrated", 60*time.Second, func() bool { return e.hydrated("r1", plan.User(1)) })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := e.ctl.PeekDataflow(ctx, "default", oneShotCopy(t, e.ctl, 1, 100), controller.Serializable, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, r := range res.Rows {
		n += r.Count
	}
	if n != keys {
		t.Fatalf("one-shot read returned %d rows, want %d", n, keys)
	}

	want := []string{"solo"}
	if testparams.Interactive(t) {
		want = []string{"interactive", "maintenance"}
	}
	st, err := e.orch.Status(ctx, orchestrator.ReplicaID{Cluster: "default", Replica: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	rts, err := testparams.Runtimes(ctx, st.Processes[0].InternalHTTPAddr)
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(rts)); !slices.Equal(got, want) {
		t.Fatalf("replica runs runtimes %v, want %v (%s=%q)", got, want, testparams.EnvVar, testparams.Parameters(t))
	}
	if testparams.Interactive(t) && rts["interactive"] == 0 {
		t.Fatalf("the one-shot read did not run on the interactive runtime: peeks by runtime %v", rts)
	}
	t.Logf("peeks by runtime: %v", rts)
}
