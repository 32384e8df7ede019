package render

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// ImportCounters counts how the index imports of built dataflows were read,
// one count per import per worker. Safe for concurrent use.
type ImportCounters struct {
	// Cursor imports were read only by snapshot operators, through cursors
	// over the imported batches (no row update per indexed row).
	Cursor atomic.Uint64
	// Flattened imports became a collection of row updates (Flatten).
	Flattened atomic.Uint64
	// Live imports follow a peer index as it changes (ImportLive).
	Live atomic.Uint64
}

// snapshotTime returns the one time desc's outputs are read at, when they
// are read at no other: a one-shot read (peeked once at its as_of, then
// dropped) or a dataflow whose until is just past its as_of. Such a
// dataflow need not produce changes after its as_of, so an operator may
// read its imports once, at the as_of, and then release them.
func snapshotTime(desc *plan.DataflowDescription) (frontier.Time, bool) {
	t, ok := desc.AsOf.Time()
	if !ok {
		return 0, false
	}
	if desc.Class == plan.ClassOneShotRead || desc.Until.LessEqual(frontier.At(t+1)) {
		return t, true
	}
	return 0, false
}

// snapshotFuel is how many imported (key, value) pairs a snapshot operator
// reads per schedule: a pair costs a cursor step, a decode of the columns
// read and a map lookup, and allocates nothing, so a slice takes about a
// millisecond and the worker interleaves other dataflows between slices.
const snapshotFuel = 1 << 14

// snapshotFlushAt is how many distinct (key, value) pairs a snapshot
// operator consolidates before it sends them on: a high-cardinality group
// key would otherwise hold a map entry per indexed row.
const snapshotFlushAt = 1 << 16

// snapshotSample is how many rows a snapshot operator consolidates before
// it decides whether consolidating pays: when almost all of them are
// distinct pairs it sends the rest on as they come, one slice per
// schedule, and leaves consolidation to the arrangement.
const snapshotSample = 1 << 12

// snapshotTuning sizes a snapshot operator's work; tests shrink it to
// exercise slicing, flushing and streaming on small inputs.
type snapshotTuning struct {
	fuel, sample, flushAt int
}

var defaultSnapshotTuning = snapshotTuning{fuel: snapshotFuel, sample: snapshotSample, flushAt: snapshotFlushAt}

// snapshotStage is one map/filter/project applied to the imported rows,
// innermost first, with its own scratch space.
type snapshotStage struct {
	mfp     preparedMFP
	scratch expr.Scratch
}

// snapshotKeyLogic reads an imported arrangement once, as of the dataflow's
// as_of, through a cursor over its batches: for each row it applies the
// MFPs and the KeySpec of the consuming reduction and sums the multiplicities
// of equal (key, value) pairs, emitting the consolidated keyed updates (and
// error rows) at the as_of when the walk ends. It replaces Flatten, Mfp and
// KeyBy for a reduction over an import: what reaches the reduction is one
// update per distinct (group, arguments), not one per row.
//
// Invariants: it reads the batches only once the import's upper is past
// the as_of and only if every batch (and the trace) is compacted no further
// than the as_of, else it fails the dataflow (ErrCompacted); its trace handle
// holds compaction from build until the walk ends and is then released; its
// output frontier is held at the as_of until everything is sent.
type snapshotKeyLogic struct {
	name   string
	handle *trace.Handle
	asOf   frontier.Time
	stages []snapshotStage
	spec   KeySpec
	// needRow: the key or value is the (mapped) row itself; decode: some
	// expression reads the row's columns.
	needRow, decode bool
	// constant: every row has the same key and value (start sums the
	// batches' multiplicities instead of walking them).
	constant bool
	dec      rowDecoder
	// filter decides the first MFP's leading comparisons on encoded
	// columns, before the row is decoded.
	filter    encodedFilter
	projected []row.Datum // the first MFP's output for a row the filter accepted
	tune      snapshotTuning
	fail      func(error)

	started, done bool
	cl            *batch.CursorList
	datums        []row.Datum
	keyBuf        []row.Datum
	valBuf        []row.Datum
	rowBuf        []byte
	keyBytes      []byte
	kvBuf         []byte
	lastKV        []byte // the pair of the last entry consolidate added

	// seeks, when not nil, are the only index keys whose rows the first
	// MFP can keep (seekKeys); seekPos is the next, inKey: the walk is
	// inside seeks[seekPos].
	seeks   [][]byte
	seekPos int
	inKey   bool
	// fold are the reduction's aggregates when they may be folded
	// (fold.go); folding until a row cannot be, which sets restart.
	fold     []operators.Aggregate
	folding  bool
	restart  bool
	batches  []*batch.Batch
	groups   map[string]int32
	folds    []groupFold
	lastFold int32 // the group of the last row folded
	// recentFolds caches groups by recentSlot of their key: 1 + the
	// group's index, 0 for an empty slot.
	recentFolds [64]int32
	foldArena   []byte
	datumBuf    []byte
	// sampled counts rows consolidated until snapshotSample; streaming:
	// pairs are no longer consolidated here.
	sampled   int
	streaming bool
	index     map[string]int32
	entries   []snapEntry
	arena     []byte
	errRows   map[string]int64
}

// snapEntry is one consolidated (key, value) pair, its bytes in the arena.
type snapEntry struct {
	off, klen, vlen int
	diff            int64
}

// SnapshotKeyBy renders the snapshot read of an imported arrangement for a
// reduction (see snapshotKeyLogic): mfps are applied innermost first, then
// spec keys the rows. It returns the keyed stream (ready for Arrange) and
// the stream of evaluation errors, both at asOf only.
func SnapshotKeyBy(b *dataflow.Builder, name string, in *Arranged, asOf frontier.Time, mfps []*expr.MFP, spec KeySpec, fail func(error)) (keyed, errs dataflow.Stream) {
	return snapshotKeyBy(b, name, in, asOf, mfps, spec, defaultSnapshotTuning, nil, nil, fail)
}

func snapshotKeyBy(b *dataflow.Builder, name string, in *Arranged, asOf frontier.Time, mfps []*expr.MFP, spec KeySpec, tune snapshotTuning, seeks [][]byte, fold []operators.Aggregate, fail func(error)) (keyed, errs dataflow.Stream) {
	lg := newSnapshotKeyLogic(name, asOf, mfps, spec, tune, seeks, fold, fail)
	lg.handle = in.Trace.NewHandle("snapshot " + name)
	op := b.AddOperator("SnapshotKeyBy "+name, []dataflow.Connection{{From: in.Stream}}, 2, lg)
	op.SetHold(frontier.At(asOf))
	return op.Stream(0), op.Stream(1)
}

// newSnapshotKeyLogic is the logic of snapshotKeyBy before it is given a
// trace handle.
func newSnapshotKeyLogic(name string, asOf frontier.Time, mfps []*expr.MFP, spec KeySpec, tune snapshotTuning, seeks [][]byte, fold []operators.Aggregate, fail func(error)) *snapshotKeyLogic {
	lg := &snapshotKeyLogic{
		name: name, asOf: asOf, spec: spec,
		needRow: spec.RowKey || (spec.Val == nil && !spec.EmptyVal),
		tune:    tune, fail: fail, seeks: seeks, index: map[string]int32{}, errRows: map[string]int64{},
	}
	for _, m := range mfps {
		lg.stages = append(lg.stages, snapshotStage{mfp: preparedMFP{mfp: m}})
	}
	exprs := append(append([]expr.Expr(nil), spec.Key...), spec.Val...)
	switch {
	case len(mfps) == 1 && !lg.needRow:
		lg.dec = rowDecoder{used: prunedMFPColumns(mfps[0], usedColumns(exprs, nil))}
	case len(mfps) > 0:
		lg.dec = *mfpDecoder(mfps[0])
	default:
		lg.dec = rowDecoder{used: usedColumns(exprs, nil)}
	}
	// The index's rows were encoded by the engine: read them only as far
	// as the last column used, and decide the filter on encoded columns.
	lg.dec.prefix = true
	if len(mfps) > 0 {
		lg.filter = newEncodedFilter(mfps[0])
	}
	lg.decode = len(mfps) > 0 || (!spec.RowKey && slices.Contains(lg.dec.used, true))
	// Keys and values that read no column are the same for every row: the
	// rows need not be walked, only their multiplicities summed.
	lg.constant = len(mfps) == 0 && !lg.needRow && !lg.decode
	if !lg.constant && !spec.RowKey && len(spec.Val) == len(fold) && foldable(fold) {
		lg.fold, lg.folding, lg.groups = fold, true, map[string]int32{}
	}
	return lg
}

// prunedMFPColumns returns the input columns m needs when only its output
// columns out are read afterwards: those its expressions and predicates
// read, and those it projects to a read output. A projected column nobody
// reads stays NULL (decoding a bytes or text datum may copy it). A
// projection index may name one of m's expressions rather than an input
// column; marking it as an input column too only decodes more.
func prunedMFPColumns(m *expr.MFP, out columnSet) columnSet {
	var cols []int
	for i, c := range m.Projection {
		if i < len(out) && out[i] {
			cols = append(cols, c)
		}
	}
	return usedColumns(append(append([]expr.Expr(nil), m.Expressions...), m.Predicates...), cols)
}

func (lg *snapshotKeyLogic) Schedule(op *dataflow.Operator) {
	if lg.done {
		return
	}
	if !lg.started {
		if !op.InputFrontier().IsComplete(lg.asOf) {
			return // the import is not sealed at the as_of yet
		}
		if err := lg.start(); err != nil {
			lg.done = true
			lg.fail(fmt.Errorf("%s: %w", lg.name, err))
			return
		}
	}
	if !lg.walk(op) {
		op.Activate()
		return
	}
	if lg.folding {
		lg.emitFolds()
	}
	lg.flush(op)
	lg.sendErrors(op)
	lg.done, lg.cl = true, nil
	lg.handle.Release()
	op.SetHold(frontier.Closed())
}

// start captures the import's batches, refusing them if any was compacted
// past the as_of (its accumulations there would be wrong).
func (lg *snapshotKeyLogic) start() error {
	tr := lg.handle.Trace()
	if since := tr.Since(); !since.LessEqualTime(lg.asOf) {
		return fmt.Errorf("read at %d (since %v): %w", lg.asOf, since, trace.ErrCompacted)
	}
	batches := tr.Snapshot().Batches
	for _, bt := range batches {
		if since := bt.Description().Since; !since.LessEqualTime(lg.asOf) {
			return fmt.Errorf("read at %d (batch since %v): %w", lg.asOf, since, trace.ErrCompacted)
		}
	}
	lg.started = true
	if lg.constant {
		var total int64
		for _, bt := range batches {
			total += bt.AccumulateAll(lg.asOf)
		}
		if total != 0 {
			lg.add(nil, total)
		}
		lg.cl = batch.NewCursorList(nil)
		return nil
	}
	lg.batches = batches
	lg.cl = batch.NewCursorList(batches)
	return nil
}

// walk consolidates up to fuel (key, value) pairs and reports whether the
// import is exhausted.
func (lg *snapshotKeyLogic) walk(op *dataflow.Operator) bool {
	if lg.seeks != nil {
		return lg.walkSeeks(op)
	}
	cl := lg.cl
	for n := 0; cl.KeyValid(); cl.StepKey() {
		if lead, bound := cl.Lead(); lead != nil {
			// Keys only the lead batch holds: walk them on its cursor.
			stopped, fuelOut := lg.walkLead(op, lead, bound, &n)
			if stopped {
				if fuelOut && lg.streaming {
					lg.flush(op)
				}
				return false
			}
			if cl.Resync(); !cl.KeyValid() {
				break
			}
		}
		if stopped, fuelOut := lg.foldKey(&n); stopped {
			if fuelOut && lg.streaming {
				lg.flush(op)
			}
			return false
		}
		if len(lg.entries) >= lg.tune.flushAt {
			lg.flush(op)
		}
	}
	return true
}

// foldKey folds the current key's remaining values at lg.asOf, counting
// each value read in *n. It stops when *n reaches the fuel (fuelOut) or
// when a value makes the fold start again; otherwise it ends at the key's
// last value with stopped false.
func (lg *snapshotKeyLogic) foldKey(n *int) (stopped, fuelOut bool) {
	cl := lg.cl
	for cl.ValValid() {
		if *n >= lg.tune.fuel {
			return true, true
		}
		if m := cl.Accumulate(lg.asOf); m != 0 {
			if lg.add(cl.Val(), m); lg.restart {
				lg.restart = false
				lg.stopFolding()
				return true, false
			}
		}
		cl.StepVal()
		*n++
	}
	return false, false
}

// walkLead folds the rows of lead's keys below bound (every key when
// bound is nil), counting values in *n like foldKey; it stops like foldKey
// (stopped, and fuelOut when the fuel ran out), else it returns with lead
// at bound or past its last key. Keys below bound are in no other batch,
// so no merge of batches is needed: stepping one batch's cursor is a
// third of a filtered aggregate's cost per row through the cursor list.
func (lg *snapshotKeyLogic) walkLead(op *dataflow.Operator, lead *batch.Cursor, bound []byte, n *int) (stopped, fuelOut bool) {
	for ; lead.KeyValid(); lead.StepKey() {
		if bound != nil && bytes.Compare(lead.Key(), bound) >= 0 {
			return false, false
		}
		for ; lead.ValValid(); lead.StepVal() {
			if *n >= lg.tune.fuel {
				return true, true
			}
			*n++
			if m := lead.Accumulate(lg.asOf); m != 0 {
				if lg.add(lead.Val(), m); lg.restart {
					lg.restart = false
					lg.stopFolding()
					return true, false
				}
			}
		}
		if len(lg.entries) >= lg.tune.flushAt {
			lg.flush(op)
		}
	}
	return false, false
}

// walkSeeks is walk over the keys of lg.seeks only (ascending, so the
// cursor only moves forward).
func (lg *snapshotKeyLogic) walkSeeks(op *dataflow.Operator) bool {
	cl := lg.cl
	for n := 0; lg.seekPos < len(lg.seeks); lg.seekPos, lg.inKey = lg.seekPos+1, false {
		if !lg.inKey {
			k := lg.seeks[lg.seekPos]
			if cl.SeekKey(k); !cl.KeyValid() || !bytes.Equal(cl.Key(), k) {
				continue
			}
			lg.inKey = true
		}
		if stopped, _ := lg.foldKey(&n); stopped {
			return false
		}
	}
	return true
}

// add maps, keys and consolidates one imported row of multiplicity m.
func (lg *snapshotKeyLogic) add(r []byte, m int64) {
	var (
		err error
		ok  bool
	)
	datums := lg.datums
	verdict := undecided
	if lg.decode {
		if arity, ok := lg.dec.knownArity(); ok {
			if verdict = lg.filter.decide(r, arity); verdict == rejected {
				return
			}
		}
		if datums, err = lg.dec.decode(row.Row(r), datums[:0]); err != nil {
			lg.addError(err, m)
			return
		}
		lg.datums = datums
	}
	for i := range lg.stages {
		st := &lg.stages[i]
		if i == 0 && verdict == accepted {
			if lg.projected, ok = lg.filter.project(datums, lg.projected); ok {
				datums = lg.projected
				continue
			}
		}
		out, keep, err := st.mfp.evaluate(datums, &st.scratch)
		if err != nil {
			lg.addError(err, m)
			return
		}
		if !keep {
			return
		}
		datums = out
	}
	whole := r
	if lg.needRow && len(lg.stages) > 0 {
		lg.rowBuf = row.AppendDatums(lg.rowBuf[:0], datums...)
		whole = lg.rowBuf
	}
	written := whole
	if !lg.spec.RowKey {
		if lg.keyBuf, err = evalInto(lg.spec.Key, datums, lg.keyBuf); err != nil {
			lg.addError(err, m)
			return
		}
		lg.keyBytes = row.AppendDatums(lg.keyBytes[:0], lg.keyBuf...)
		written = lg.keyBytes
	}
	key := written
	if lg.spec.RowKey || hasNumeric(lg.keyBuf) {
		key = row.NumericKeyRow(written)
	}
	var valDatums []row.Datum
	if lg.spec.Val != nil {
		if lg.valBuf, err = evalInto(lg.spec.Val, datums, lg.valBuf); err != nil {
			lg.addError(err, m)
			return
		}
		valDatums = lg.valBuf
	}
	if lg.folding {
		lg.restart = !lg.foldRow(key, lg.spec.appendWrittenKey(nil, key, written), valDatums, m)
		return
	}
	// kv is uvarint(len(key)) ++ key ++ val: keys are not self-delimiting.
	kv := binary.AppendUvarint(lg.kvBuf[:0], uint64(len(key)))
	kv = append(kv, key...)
	switch {
	case lg.spec.EmptyVal:
	case lg.spec.Val != nil:
		kv = row.AppendDatums(kv, valDatums...)
	default:
		kv = append(kv, whole...)
	}
	kv = lg.spec.appendWrittenKey(kv, key, written)
	lg.kvBuf = kv
	if lg.streaming {
		lg.push(kv, m)
		return
	}
	lg.consolidate(kv, m)
	if lg.sampled++; lg.sampled == lg.tune.sample && len(lg.entries) > lg.sampled-lg.sampled/8 {
		// Almost every pair is distinct (a group key or argument per
		// row): the map would cost more than it saves.
		lg.streaming = true
		clear(lg.index)
	}
}

// hasNumeric reports whether any of ds is a numeric or an array of them,
// the types whose key encoding may differ from their value's
// (row.NumericKeyRow, Datum.NumericKey).
func hasNumeric(ds []row.Datum) bool {
	for _, d := range ds {
		if t := d.Type(); t == row.TypeNumeric || t == row.TypeNumericArray {
			return true
		}
	}
	return false
}

// evalInto evaluates exprs over datums into dst[:0] (the key and value
// expressions of KeyBy and of the snapshot readers).
func evalInto(exprs []expr.Expr, datums, dst []row.Datum) ([]row.Datum, error) {
	dst = dst[:0]
	for i := range exprs {
		if e := &exprs[i]; e.Op == expr.OpColumn && e.Index >= 0 && e.Index < len(datums) {
			dst = append(dst, datums[e.Index]) // the common case, without a call
			continue
		}
		v, err := exprs[i].Eval(datums)
		if err != nil {
			return dst, err
		}
		dst = append(dst, v)
	}
	return dst, nil
}

func (lg *snapshotKeyLogic) consolidate(kv []byte, m int64) {
	// Consecutive rows often share a pair (a low-cardinality group
	// key): compare with the last one before hashing.
	if n := len(lg.entries); n > 0 && bytes.Equal(kv, lg.lastKV) {
		lg.entries[n-1].diff += m
		return
	}
	i, ok := lg.index[string(kv)]
	if !ok {
		lg.index[string(kv)] = int32(len(lg.entries))
		lg.push(kv, m)
		lg.lastKV = append(lg.lastKV[:0], kv...)
		return
	}
	lg.entries[i].diff += m
}

// push appends the pair kv to the entries, its bytes to the arena.
func (lg *snapshotKeyLogic) push(kv []byte, m int64) {
	klen, n := binary.Uvarint(kv)
	off := len(lg.arena)
	lg.arena = append(lg.arena, kv[n:]...)
	lg.entries = append(lg.entries, snapEntry{off: off, klen: int(klen), vlen: len(kv) - n - int(klen), diff: m})
}

func (lg *snapshotKeyLogic) addError(err error, m int64) {
	lg.errRows[string(ErrorRow(err))] += m
}

// flush sends the consolidated pairs at the as_of and starts a new arena
// (the sent updates point into the old one).
func (lg *snapshotKeyLogic) flush(op *dataflow.Operator) {
	if len(lg.entries) == 0 {
		return
	}
	out := make([]dataflow.Update, 0, len(lg.entries))
	for _, e := range lg.entries {
		if e.diff == 0 {
			continue
		}
		k := lg.arena[e.off : e.off+e.klen : e.off+e.klen]
		v := lg.arena[e.off+e.klen : e.off+e.klen+e.vlen : e.off+e.klen+e.vlen]
		out = append(out, dataflow.Update{Key: k, Val: v, Time: lg.asOf, Diff: e.diff})
	}
	op.Output(0).SendUpdates(out)
	clear(lg.index)
	lg.entries = lg.entries[:0]
	lg.arena = nil
}

func (lg *snapshotKeyLogic) sendErrors(op *dataflow.Operator) {
	var out []dataflow.Update
	for r, d := range lg.errRows {
		if d != 0 {
			out = append(out, dataflow.Update{Val: []byte(r), Time: lg.asOf, Diff: d})
		}
	}
	op.Output(1).SendUpdates(out)
}

// Drop releases the operator's trace handle.
func (lg *snapshotKeyLogic) Drop() { lg.handle.Release() }
