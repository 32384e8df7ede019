package server

import (
	"errors"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

func codecTestDesc() plan.DataflowDescription {
	return plan.DataflowDescription{
		ID: plan.Transient(14), DebugName: "one-shot", Class: plan.ClassOneShotRead,
		IndexImports: []plan.IndexImport{{ID: plan.User(1), On: plan.User(2),
			Desc: row.NewRelationDesc([]string{"a"}, []row.ColumnType{{Type: row.TypeInt64}}),
			Key:  []expr.Expr{expr.Column(0)}}},
		IndexExports: []plan.IndexExport{{ID: plan.Transient(14), On: plan.User(2), Key: []expr.Expr{expr.Column(0)}}},
		AsOf:         frontier.At(5), Until: frontier.Closed(),
	}
}

// A description that converts but does not validate, or whose id converts
// but a later field does not, is refused with its dataflow's name, so that
// the refusal can name it; one without a valid id is refused without one.
func TestPlanCodecNamesInvalidDataflows(t *testing.T) {
	cases := []struct {
		name     string
		mutate   func(d *plan.DataflowDescription)
		wire     func(p *computepb.DataflowDescription)
		wantErr  bool
		wantName string
		// wantErr is the sentinel the refusal wraps.
		wantIs error
	}{
		{name: "valid", mutate: func(*plan.DataflowDescription) {}},
		{name: "until before as_of", mutate: func(d *plan.DataflowDescription) { d.Until = frontier.At(5) }, wantErr: true, wantName: "t14", wantIs: plan.ErrInvalid},
		{name: "unknown export source", mutate: func(d *plan.DataflowDescription) { d.IndexExports[0].On = plan.User(99) }, wantErr: true, wantName: "t14", wantIs: plan.ErrInvalid},
		{name: "no id", wire: func(p *computepb.DataflowDescription) { p.Id = nil }, wantErr: true, wantIs: protocol.ErrDecode},
		{name: "unknown id kind", wire: func(p *computepb.DataflowDescription) { p.Id.Kind = 42 }, wantErr: true, wantIs: protocol.ErrDecode},
		{name: "malformed field after the id", wire: func(p *computepb.DataflowDescription) { p.IndexExports[0].Key[0].Func = "no_such_function" },
			wantErr: true, wantName: "t14", wantIs: protocol.ErrDecode},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := codecTestDesc()
			if tc.mutate != nil {
				tc.mutate(&d)
			}
			b, err := protocol.DataflowToProto(&d)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wire != nil {
				tc.wire(b)
			}
			df, err := PlanCodec{}.Decode(b)
			if !tc.wantErr {
				if err != nil || df.ID != plan.Transient(14) || len(df.Indexes) != 1 || df.Indexes[0] != plan.Transient(14) {
					t.Fatalf("Decode = %+v, %v; want dataflow t14 exporting t14", df, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Decode accepted %s", b)
			}
			var ie *InvalidDataflowError
			name := ""
			if errors.As(err, &ie) {
				name = ie.ID.String()
			}
			if name != tc.wantName {
				t.Fatalf("refusal names %q, want %q (%v)", name, tc.wantName, err)
			}
			if !errors.Is(err, tc.wantIs) {
				t.Fatalf("refusal %v does not wrap %v", err, tc.wantIs)
			}
		})
	}
}

// A create_dataflow refused by the codec carries the dataflow's id (when
// the description named one) and SQLSTATE XX000; the replica keeps serving.
func TestRefusedCreateDataflowCarriesItsID(t *testing.T) {
	h := newHarness(t)
	s := h.ready("n1", &computepb.CreateInstance{}, df1)
	h.rt.expect(t, "create d1")
	cases := []struct {
		name   string
		cmd    *computepb.Command
		wantID string
	}{
		{"invalid plan", createDataflow(testDataflow{Name: "t14", Indexes: []string{"t14"}, Plan: "invalid"}), "t14"},
		{"undecodable plan", &computepb.Command{Kind: &computepb.Command_CreateDataflow{CreateDataflow: &computepb.CreateDataflow{Dataflow: &computepb.DataflowDescription{}}}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.send(tc.cmd)
			e := commandError(t, s.recv(), CodeInvalidPlan)
			if idString(e.GetCollection()) != tc.wantID || e.GetCommand() != "create_dataflow" {
				t.Fatalf("refusal %v, want command create_dataflow id %q", e, tc.wantID)
			}
		})
	}
	h.rt.expectNone(t)
}
