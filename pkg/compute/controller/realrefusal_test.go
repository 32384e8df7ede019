package controller_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// End to end with a real replica (two processes): a one-shot read whose
// dataflow the replica's validation refuses fails with the refusal
// (XX000, naming the cause), not with "unknown index" of its transient
// export; the replica keeps serving.
func TestRealReplicaRefusedOneShotReadReportsTheRefusal(t *testing.T) {
	e := newRealEnv(t, nil)
	e.replica("r1", 2, 1)
	start := frontier.Time(time.Now().UnixMilli()) - 1000
	if _, err := e.ctl.CreateDataflow("default", kvIndex(1, 100, 100, start)); err != nil {
		t.Fatal(err)
	}
	e.waitFor("r1 hydrated", 90*time.Second, func() bool { return e.hydrated("r1", plan.User(1)) })

	id := e.ctl.AllocateTransientID()
	kv := row.NewRelationDesc([]string{"key", "partition", "value"},
		[]row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}, {Type: row.TypeBytes}})
	// The export is of a collection the dataflow neither imports nor
	// builds: the replica's validation refuses it.
	df, err := controller.FromPlan(&plan.DataflowDescription{
		ID: id, DebugName: "refused read", Class: plan.ClassOneShotRead,
		IndexImports: []plan.IndexImport{{ID: plan.User(1), On: plan.User(100), Key: []expr.Expr{expr.Column(0)}, Desc: kv}},
		IndexExports: []plan.IndexExport{{ID: id, On: plan.User(99), Key: []expr.Expr{expr.Column(0)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err = e.ctl.PeekDataflow(ctx, "default", df, controller.Serializable, nil)
	var pe *controller.PeekError
	if !errors.As(err, &pe) || pe.SQLState != "XX000" || !strings.Contains(pe.Message, "invalid dataflow") || !strings.Contains(pe.Message, "u99") {
		t.Fatalf("refused one-shot read: %v; want the replica's refusal (XX000, invalid dataflow, naming u99)", err)
	}
	if _, err := e.ctl.Peek(ctx, controller.PeekRequest{Cluster: "default", Target: plan.User(1)}); err != nil {
		t.Fatalf("peek after the refusal: %v", err)
	}
}
