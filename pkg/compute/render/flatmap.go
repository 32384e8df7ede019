package render

import (
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// flatMapLogic applies a table function to every update: each produced
// row is the input row's bytes followed by the produced datums (rows
// concatenate, see pkg/compute/row), at the input's time and diff, so a
// retraction retracts exactly what the insertion produced. A failing
// call produces no rows and one error row with the input's diff.
type flatMapLogic struct {
	fm *plan.FlatMap
	// call is fm.Call prepared once for every input row.
	call   expr.PreparedCall
	dec    *rowDecoder
	datums []row.Datum
}

// FlatMap renders a table function over an update stream; it returns the
// ok stream and the stream of new errors.
func FlatMap(b *dataflow.Builder, name string, in dataflow.Stream, fm *plan.FlatMap) (ok, errs dataflow.Stream) {
	lg := &flatMapLogic{fm: fm, call: fm.Call.Prepare(), dec: &rowDecoder{used: usedColumns(fm.Call.Args, nil)}}
	op := b.AddOperator("FlatMap "+name, []dataflow.Connection{{From: in}}, 2, lg)
	return op.Stream(0), op.Stream(1)
}

func (lg *flatMapLogic) Schedule(op *dataflow.Operator) {
	for _, d := range op.Input(0).Take() {
		var ok, errs []dataflow.Update
		for _, u := range d.([]dataflow.Update) {
			var err error
			lg.datums, err = lg.dec.decode(row.Row(u.Val), lg.datums)
			if err == nil {
				var outs []row.Row
				outs, err = lg.apply(row.Row(u.Val))
				for _, r := range outs {
					ok = append(ok, dataflow.Update{Val: r, Time: u.Time, Diff: u.Diff})
				}
			}
			if err != nil {
				errs = append(errs, dataflow.Update{Val: ErrorRow(err), Time: u.Time, Diff: u.Diff})
			}
		}
		op.Output(0).SendUpdates(ok)
		op.Output(1).SendUpdates(errs)
	}
}

// apply returns the rows one input row produces, or an error and none.
func (lg *flatMapLogic) apply(in row.Row) ([]row.Row, error) {
	var outs []row.Row
	err := lg.call.Eval(lg.datums, func(ds []row.Datum) error {
		r := make(row.Row, 0, len(in)+16)
		r = row.AppendDatums(append(r, in...), ds...)
		if lg.fm.Ordinality {
			r = row.AppendDatum(r, row.Int64(int64(len(outs)+1)))
		}
		outs = append(outs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return outs, nil
}
