package controller

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestOneShotReadEncodesUntilPastAsOf: a one-shot read's description is
// sent with until = as_of + 1 in whichever class the controller places it
// (the replica reads its imports once, as of the as_of); other dataflows
// keep the until they were built with.
func TestOneShotReadEncodesUntilPastAsOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		class plan.DataflowClass
		sent  computepb.DataflowClass
		want  frontier.Frontier
	}{
		{"one-shot on the interactive runtime", plan.ClassOneShotRead, computepb.DataflowClass_DATAFLOW_CLASS_ONE_SHOT_READ, frontier.At(8)},
		{"one-shot with the flag off", plan.ClassOneShotRead, computepb.DataflowClass_DATAFLOW_CLASS_MAINTAINED, frontier.At(8)},
		{"maintained", plan.ClassMaintained, computepb.DataflowClass_DATAFLOW_CLASS_MAINTAINED, frontier.Closed()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &plan.DataflowDescription{ID: plan.Transient(2), Class: tc.class, Until: frontier.Closed(),
				ObjectsToBuild: []plan.Build{{ID: plan.Transient(1), Plan: plan.NewConstant(row.RelationDesc{Names: []string{"a"}, Types: []row.ColumnType{{Type: row.TypeInt64}}})}},
				IndexExports:   []plan.IndexExport{{ID: plan.Transient(2), On: plan.Transient(1), Key: []expr.Expr{expr.Column(0)}}}}
			df, err := FromPlan(d)
			if err != nil {
				t.Fatal(err)
			}
			body, err := df.Encode(7, tc.sent)
			if err != nil {
				t.Fatal(err)
			}
			got, err := protocol.DataflowFromProto(body)
			if err != nil {
				t.Fatal(err)
			}
			if got.Until != tc.want || got.AsOf != frontier.At(7) {
				t.Fatalf("as_of %v until %v, want [7] and %v", got.AsOf, got.Until, tc.want)
			}
		})
	}
}
