package render

import (
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// mfpLogic applies a prepared MFP to every update: kept rows go to output 0,
// evaluation errors become error rows on output 1 at the same time and diff.
type mfpLogic struct {
	mfp     preparedMFP
	dec     *rowDecoder
	scratch expr.Scratch
	datums  []row.Datum
}

// preparedMFP prepares an MFP for the arity of the rows it meets (plans do
// not carry arities; rows are self-describing).
type preparedMFP struct {
	mfp   *expr.MFP
	prep  *expr.Prepared
	arity int
}

func (p *preparedMFP) evaluate(datums []row.Datum, s *expr.Scratch) ([]row.Datum, bool, error) {
	if p.prep == nil || p.arity != len(datums) {
		prep, err := p.mfp.Prepare(len(datums))
		if err != nil {
			return nil, false, err
		}
		p.prep, p.arity = prep, len(datums)
	}
	return p.prep.Evaluate(datums, s)
}

// MFPTransform returns a peek transform applying m to index rows.
func MFPTransform(m *expr.MFP) func(key, val, dst []byte) ([]byte, bool, error) {
	p := preparedMFP{mfp: m}
	var (
		scratch expr.Scratch
		datums  []row.Datum
		dec     = mfpDecoder(m)
	)
	return func(_, val, dst []byte) ([]byte, bool, error) {
		var err error
		datums, err = dec.decode(row.Row(val), datums)
		if err != nil {
			return nil, false, err
		}
		out, keep, err := p.evaluate(datums, &scratch)
		if err != nil || !keep {
			return nil, false, err
		}
		return row.AppendDatums(dst, out...), true, nil
	}
}

// mfpDecoder decodes the input columns m reads (expressions, predicates,
// projection); the rest stay NULL, which m never looks at.
func mfpDecoder(m *expr.MFP) *rowDecoder {
	exprs := append(append([]expr.Expr(nil), m.Expressions...), m.Predicates...)
	return &rowDecoder{used: usedColumns(exprs, m.Projection)}
}

// MapFilterProject renders an MFP over an update stream; it returns the ok
// stream and the stream of new errors.
func MapFilterProject(b *dataflow.Builder, name string, in dataflow.Stream, mfp *expr.MFP) (ok, errs dataflow.Stream) {
	// Not decoded by prefix (rowDecoder.prefix): a collection's history
	// may hold rows of two arities (ALTER TABLE ADD COLUMN retracts each
	// row and inserts it with the column), which only a full decode reads
	// each as written.
	op := b.AddOperator("Mfp "+name, []dataflow.Connection{{From: in}}, 2, &mfpLogic{mfp: preparedMFP{mfp: mfp}, dec: mfpDecoder(mfp)})
	return op.Stream(0), op.Stream(1)
}

func (lg *mfpLogic) Schedule(op *dataflow.Operator) {
	for _, d := range op.Input(0).Take() {
		in := d.([]dataflow.Update)
		var ok, errs []dataflow.Update
		for _, u := range in {
			var err error
			lg.datums, err = lg.dec.decode(row.Row(u.Val), lg.datums)
			if err != nil {
				errs = append(errs, dataflow.Update{Val: ErrorRow(err), Time: u.Time, Diff: u.Diff})
				continue
			}
			out, keep, err := lg.mfp.evaluate(lg.datums, &lg.scratch)
			switch {
			case err != nil:
				errs = append(errs, dataflow.Update{Val: ErrorRow(err), Time: u.Time, Diff: u.Diff})
			case keep:
				ok = append(ok, dataflow.Update{Val: row.Pack(out...), Time: u.Time, Diff: u.Diff})
			}
		}
		op.Output(0).SendUpdates(ok)
		op.Output(1).SendUpdates(errs)
	}
}

// KeySpec says how to key a row for an arrangement: Key expressions give the
// key columns (or the whole row when RowKey); the value is the whole row,
// the row of Val expressions when Val is non-nil, or empty when EmptyVal.
// A key holds every numeric at its minimal display scale
// (row.NumericKeyRow), so that values SQL calls equal (1.5 and 1.50) are
// one key for joins, grouping, DISTINCT, set operations and index
// lookups; the value keeps the scale. With DisplayKey, a row whose key
// lost a scale also carries the key as written in its value, after the
// Val columns (for an EmptyVal spec the value is then the whole row), so
// that a reduction can show its key as the inputs wrote it
// (operators.ShownKey, operators.AggregateLogicShowingKey).
type KeySpec struct {
	Key        []expr.Expr
	RowKey     bool
	Val        []expr.Expr
	EmptyVal   bool
	DisplayKey bool
}

// appendWrittenKey returns val followed by the key as written when the
// spec keeps display keys and the arranged key (written at minimal
// numeric scales) is shorter than written; val otherwise. It never writes
// into val's backing array.
func (s KeySpec) appendWrittenKey(val, key, written []byte) []byte {
	if !s.DisplayKey || len(key) == len(written) {
		return val
	}
	return append(val[:len(val):len(val)], written...)
}

type keyLogic struct {
	spec   KeySpec
	dec    rowDecoder
	datums []row.Datum
	keyBuf []row.Datum
	valBuf []row.Datum
	// cons sums equal updates within a chunk (keyconsolidate.go);
	// keyScratch and valScratch hold a row's packed key and value there.
	cons                   keyConsolidator
	keyScratch, valScratch []byte
}

// KeyBy evaluates a KeySpec over an update stream; it returns the keyed
// stream (ready for Arrange) and the stream of evaluation errors.
func KeyBy(b *dataflow.Builder, name string, in dataflow.Stream, spec KeySpec) (keyed, errs dataflow.Stream) {
	exprs := append(append([]expr.Expr(nil), spec.Key...), spec.Val...)
	// A full decode, not by prefix: see MapFilterProject.
	lg := &keyLogic{spec: spec, dec: rowDecoder{used: usedColumns(exprs, nil)}}
	op := b.AddOperator("KeyBy "+name, []dataflow.Connection{{From: in}}, 2, lg)
	return op.Stream(0), op.Stream(1)
}

func (lg *keyLogic) Schedule(op *dataflow.Operator) {
	for _, d := range op.Input(0).Take() {
		in := d.([]dataflow.Update)
		var ok, errs []dataflow.Update
		if lg.cons.off {
			ok, errs = lg.keyChunk(in, make([]dataflow.Update, 0, len(in)), nil)
		} else {
			ok, errs = lg.keyChunkConsolidated(in)
		}
		op.Output(0).SendUpdates(ok)
		op.Output(1).SendUpdates(errs)
	}
}

// keyChunk appends the keyed updates of in to ok, and its evaluation
// errors to errs, one row at a time.
func (lg *keyLogic) keyChunk(in, ok, errs []dataflow.Update) ([]dataflow.Update, []dataflow.Update) {
	for _, u := range in {
		key, val, err := lg.keyRow(u.Val, true)
		if err != nil {
			errs = append(errs, dataflow.Update{Val: ErrorRow(err), Time: u.Time, Diff: u.Diff})
			continue
		}
		ok = append(ok, dataflow.Update{Key: key, Val: val, Time: u.Time, Diff: u.Diff})
	}
	return ok, errs
}

// keyRow returns r's key and value under the spec. They may alias r, and
// unless fresh they may be packed into the logic's scratch buffers (valid
// until the next call); fresh packs them into new rows.
func (lg *keyLogic) keyRow(r []byte, fresh bool) (key, val []byte, err error) {
	lg.datums, err = lg.dec.decode(row.Row(r), lg.datums)
	if err == nil {
		lg.keyBuf, err = evalInto(lg.spec.Key, lg.datums, lg.keyBuf)
	}
	val = r
	if err == nil && lg.spec.Val != nil {
		lg.valBuf, err = evalInto(lg.spec.Val, lg.datums, lg.valBuf)
		val = lg.pack(&lg.valScratch, lg.valBuf, fresh)
	}
	if err != nil {
		return nil, nil, err
	}
	if lg.spec.EmptyVal {
		val = nil
	}
	written := r
	if !lg.spec.RowKey {
		written = lg.pack(&lg.keyScratch, lg.keyBuf, fresh)
	}
	key = row.NumericKeyRow(written)
	return key, lg.spec.appendWrittenKey(val, key, written), nil
}

// pack packs ds into a new row when fresh, else into *scratch.
func (lg *keyLogic) pack(scratch *[]byte, ds []row.Datum, fresh bool) []byte {
	if fresh {
		return row.Pack(ds...)
	}
	*scratch = row.AppendDatums((*scratch)[:0], ds...)
	return *scratch
}

// keyErrors keys error rows by themselves (empty values), the layout of an
// error arrangement.
func keyErrors(b *dataflow.Builder, name string, in dataflow.Stream) dataflow.Stream {
	return b.AddOperator("KeyErrors "+name, []dataflow.Connection{{From: in}}, 1, dataflow.LogicFunc(func(op *dataflow.Operator) {
		for _, d := range op.Input(0).Take() {
			in := d.([]dataflow.Update)
			out := make([]dataflow.Update, len(in))
			for i, u := range in {
				out[i] = dataflow.Update{Key: u.Val, Time: u.Time, Diff: u.Diff}
			}
			op.Output(0).Send(out)
		}
	})).Stream(0)
}
