package runtime_test

import (
	"maps"
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
	at := func(v string, s int) row.Datum { return numericAt(t, v, s) }
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

// TestNumericGroupsShowLargestScale checks that a maintained GROUP BY,
// DISTINCT and EXCEPT ALL (Threshold) show a group's key at the largest
// display scale among its rows, and show the next one when those rows
// are retracted, while 1.5, 1.50 and 1.500 stay one group.
func TestNumericGroupsShowLargestScale(t *testing.T) {
	var (
		nsrc                      = plan.User(21)
		grouped, distinct, except = plan.User(22), plan.User(23), plan.User(24)
		gIndex, dIndex, eIndex    = plan.User(25), plan.User(26), plan.User(27)
	)
	desc := row.NewRelationDesc([]string{"x"}, []row.ColumnType{{Type: row.TypeNumeric}})
	at := func(v string, s int) row.Datum { return numericAt(t, v, s) }
	// shown peeks an index and returns its rows as text, the count of
	// a grouped row after a bar.
	shown := func(h *runtimetest.Harness, id plan.GlobalID, time frontier.Time) map[string]int64 {
		rows, err := h.Peek(id, time, &runtimetest.PeekRequest{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, rc := range rows {
			ds, err := rc.Row.Unpack()
			if err != nil {
				t.Fatal(err)
			}
			s := ds[0].String()
			if len(ds) > 1 {
				s += "|" + ds[1].String()
			}
			out[s] += rc.Count
		}
		return out
	}
	for _, o := range []runtimetest.Options{{Workers: 1}, {Workers: 2, Processes: 2}} {
		h := runtimetest.New(t, o)
		tbl := h.Table(nsrc)
		src := plan.NewGet(nsrc)
		// x EXCEPT ALL (x where x = 2): the 2s cancel, the 1.5s stay.
		twos := plan.NewMfp(src, expr.MFP{Predicates: []expr.Expr{expr.Eq(expr.Column(0), expr.Literal(at("2", 0)))}, Projection: []int{0}})
		h.MustCreate(plan.DataflowDescription{
			ID: plan.Transient(21), DebugName: "numeric groups", Class: plan.ClassMaintained,
			SourceImports: []plan.SourceImport{{ID: nsrc, Desc: desc, Connection: plan.SourceConnection{Kind: plan.SourceTable}}},
			ObjectsToBuild: []plan.Build{
				{ID: grouped, Plan: plan.NewReduce(src, []expr.Expr{expr.Column(0)}, plan.Aggregate{Func: plan.AggCountStar})},
				{ID: distinct, Plan: plan.NewDistinct(src)},
				{ID: except, Plan: plan.NewThreshold(plan.NewUnion(src, plan.NewNegate(twos)))},
			},
			IndexExports: []plan.IndexExport{
				{ID: gIndex, On: grouped, Key: []expr.Expr{expr.Column(0)}},
				{ID: dIndex, On: distinct, Key: []expr.Expr{expr.Column(0)}},
				{ID: eIndex, On: except, Key: []expr.Expr{expr.Column(0)}},
			},
			AsOf: frontier.At(0), Until: frontier.Closed(),
		})
		write := func(time frontier.Time, diff int64, ds ...row.Datum) {
			var ups []dataflow.Update
			for _, d := range ds {
				ups = append(ups, dataflow.Update{Val: row.Pack(d), Time: time, Diff: diff})
			}
			if err := tbl.Append(ups, frontier.At(time+1)); err != nil {
				t.Fatal(err)
			}
			for _, id := range []plan.GlobalID{gIndex, dIndex, eIndex} {
				if err := h.WaitFrontier(id, frontier.At(time+1)); err != nil {
					t.Fatal(err)
				}
			}
		}
		check := func(time frontier.Time, wantGrouped, wantDistinct, wantExcept map[string]int64) {
			t.Helper()
			for _, c := range []struct {
				id   plan.GlobalID
				want map[string]int64
			}{{gIndex, wantGrouped}, {dIndex, wantDistinct}, {eIndex, wantExcept}} {
				if got := shown(h, c.id, time); !maps.Equal(got, c.want) {
					t.Errorf("%+v: at %d, %v shows %v, want %v", o, time, c.id, got, c.want)
				}
			}
		}
		write(1, 1, at("1.5", 1), at("1.5", 3), at("1.5", 2), at("2", 0), at("2", 1))
		check(1, map[string]int64{"1.500|3": 1, "2.0|2": 1}, map[string]int64{"1.500": 1, "2.0": 1}, map[string]int64{"1.500": 3})
		write(2, -1, at("1.5", 3), at("2", 1))
		check(2, map[string]int64{"1.50|2": 1, "2|1": 1}, map[string]int64{"1.50": 1, "2": 1}, map[string]int64{"1.50": 2})
		write(3, 1, at("1.5", 1))
		check(3, map[string]int64{"1.50|3": 1, "2|1": 1}, map[string]int64{"1.50": 1, "2": 1}, map[string]int64{"1.50": 3})
	}
}

// numericAt is the numeric v at display scale s.
func numericAt(t *testing.T, v string, s int) row.Datum {
	t.Helper()
	d, err := row.MustNumeric(v).WithNumericScale(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
