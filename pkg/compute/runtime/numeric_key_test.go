package runtime_test

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// TestNumericKeysIgnoreScale checks that arrangement keys hold numerics by
// value: DISTINCT over 1.5, 1.50 and 1.500 keeps one row, and a lookup of
// an index by either scale finds all three rows, which keep their scales.
func TestNumericKeysIgnoreScale(t *testing.T) {
	var (
		nsrc     = plan.User(11)
		distinct = plan.User(12)
		dIndex   = plan.User(13)
		srcIndex = plan.User(14)
	)
	desc := row.NewRelationDesc([]string{"x"}, []row.ColumnType{{Type: row.TypeNumeric}})
	at := func(v string, s int) row.Datum {
		d, err := row.MustNumeric(v).WithNumericScale(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, o := range []runtimetest.Options{{Workers: 1}, {Workers: 2, Processes: 2}} {
		h := runtimetest.New(t, o)
		tbl := h.Table(nsrc)
		h.MustCreate(plan.DataflowDescription{
			ID: plan.Transient(11), DebugName: "numeric keys", Class: plan.ClassMaintained,
			SourceImports:  []plan.SourceImport{{ID: nsrc, Desc: desc, Connection: plan.SourceConnection{Kind: plan.SourceTable}}},
			ObjectsToBuild: []plan.Build{{ID: distinct, Plan: plan.NewDistinct(plan.NewGet(nsrc))}},
			IndexExports: []plan.IndexExport{
				{ID: dIndex, On: distinct, Key: []expr.Expr{expr.Column(0)}},
				{ID: srcIndex, On: nsrc, Key: []expr.Expr{expr.Column(0)}},
			},
			AsOf: frontier.At(0), Until: frontier.Closed(),
		})
		var ups []dataflow.Update
		for _, d := range []row.Datum{at("1.5", 1), at("1.5", 2), at("1.5", 3), at("2", 0)} {
			ups = append(ups, dataflow.Update{Val: row.Pack(d), Time: 1, Diff: 1})
		}
		if err := tbl.Append(ups, frontier.At(2)); err != nil {
			t.Fatal(err)
		}
		if err := h.WaitFrontier(dIndex, frontier.At(2)); err != nil {
			t.Fatal(err)
		}
		if err := h.WaitFrontier(srcIndex, frontier.At(2)); err != nil {
			t.Fatal(err)
		}
		rows, err := h.Peek(dIndex, 1, &runtimetest.PeekRequest{})
		if err != nil || len(rows) != 2 {
			t.Fatalf("%+v: DISTINCT over 1.5, 1.50, 1.500, 2 = %v, %v; want 2 rows", o, rows, err)
		}
		for _, key := range []row.Datum{at("1.5", 1), at("1.5", 2)} {
			rows, err := h.Peek(srcIndex, 1, &runtimetest.PeekRequest{Keys: [][]byte{row.Pack(key)}})
			if err != nil || len(rows) != 3 {
				t.Fatalf("%+v: lookup of %v = %v, %v; want the three scales of 1.5", o, key, rows, err)
			}
			scales := map[int]bool{}
			for _, rc := range rows {
				d, _ := rc.Row.Column(0)
				scales[d.NumericScale()] = true
			}
			if len(scales) != 3 {
				t.Errorf("%+v: lookup of %v lost the rows' scales: %v", o, key, rows)
			}
		}
	}
}
