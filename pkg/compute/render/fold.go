package render

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Folding. A snapshot read feeding a SQL reduction whose aggregates are all
// count(*), count, sum, avg, min or max (none DISTINCT) folds each group's
// rows into per-aggregate states instead of consolidating (group,
// arguments) pairs, and at the end sends, per group, at most k+2 synthetic
// pairs that the reduction's own logic (operators.AggregateLogic) maps to
// exactly the same output row: N rows in all; for aggregate i, c_i rows
// with a non-null argument, the first carrying the whole sum s_i and the
// others 0 (sum, avg), or all carrying the extreme value (min, max). This
// is exact while every row multiplicity is positive (so no consolidated
// argument is negative), every summed argument is an int64 and every
// partial sum fits one, and no two extremes compare equal with different
// encodings (numeric 1.0 and 1.00). When any of these fails, or the
// groups outgrow tune.flushAt, the walk restarts from the first row
// without folding (pairs, as before), so the answer never depends on it.
//
// One limit: each worker decides alone. A collection with a negative
// multiplicity (never a valid SQL collection: a bug upstream) makes that
// worker restart unfolded while others fold, so its negative rows no
// longer cancel against equal arguments from other workers. The
// reduction then reports its negative-multiplicity error (XX000) for a
// group where the flattened path might have found none.

// foldable reports whether aggs can be folded.
func foldable(aggs []operators.Aggregate) bool {
	if len(aggs) == 0 {
		return false
	}
	for _, a := range aggs {
		switch {
		case a.Distinct:
			return false
		case a.Func == operators.AggCountStar, a.Func == operators.AggCount, a.Func == operators.AggSum,
			a.Func == operators.AggAvg, a.Func == operators.AggMin, a.Func == operators.AggMax:
		default:
			return false
		}
	}
	return true
}

// groupFold is one group's folded state; its key is in the fold arena.
// written is the greatest key as written that lost a numeric scale in
// the arranged key (KeySpec.DisplayKey), nil when none did; every
// synthetic pair carries it, as a row of the group did.
type groupFold struct {
	off, klen int
	rows      int64
	aggs      []aggFold
	written   []byte
}

// aggFold is one aggregate's folded state in a group: n counts the rows
// with a non-null argument, sum their int64 total (sum, avg), best the
// encoding of the extreme (min, max).
type aggFold struct {
	n    int64
	sum  int64
	best []byte
}

// foldRow folds one row (group key, the key as written when it lost a
// numeric scale or nil, arguments, multiplicity m) and reports whether
// folding may go on.
func (lg *snapshotKeyLogic) foldRow(key, written []byte, args []row.Datum, m int64) bool {
	if m <= 0 {
		return false
	}
	// Consecutive rows often fold into one group (always, for a global
	// aggregate): compare with the last before hashing.
	i, ok := lg.lastFold, false
	if int(i) < len(lg.folds) {
		g := &lg.folds[i]
		ok = bytes.Equal(key, lg.foldArena[g.off:g.off+g.klen])
	}
	// Then a small cache by a cheap hash of the key's bytes, which holds
	// every group of a GROUP BY over a few dozen values (rows in key
	// order visit them in turn, so the last group rarely matches), and
	// only then the map.
	slot := &lg.recentFolds[recentSlot(key)]
	if !ok && *slot > 0 && int(*slot-1) < len(lg.folds) {
		g := &lg.folds[*slot-1]
		if bytes.Equal(key, lg.foldArena[g.off:g.off+g.klen]) {
			i, ok = *slot-1, true
		}
	}
	if !ok {
		i, ok = lg.groups[string(key)]
	}
	if !ok {
		if len(lg.folds) >= lg.tune.flushAt {
			return false
		}
		i = int32(len(lg.folds))
		lg.groups[string(key)] = i
		off := len(lg.foldArena)
		lg.foldArena = append(lg.foldArena, key...)
		lg.folds = append(lg.folds, groupFold{off: off, klen: len(key), aggs: make([]aggFold, len(lg.fold))})
	}
	lg.lastFold, *slot = i, i+1
	g := &lg.folds[i]
	if written != nil && bytes.Compare(written, g.written) > 0 {
		g.written = append(g.written[:0], written...)
	}
	var over bool
	if g.rows, over = addInt64(g.rows, m); over {
		return false
	}
	for j, a := range lg.fold {
		if a.Func == operators.AggCountStar || args[j].IsNull() {
			continue
		}
		st := &g.aggs[j]
		st.n += m // at most rows, which did not overflow
		switch a.Func {
		case operators.AggSum, operators.AggAvg:
			if args[j].Type() != row.TypeInt64 {
				return false
			}
			hi, lo := bits.Mul64(absU64(args[j].Int64()), uint64(m))
			if hi != 0 || lo > math.MaxInt64 {
				return false
			}
			p := int64(lo)
			if args[j].Int64() < 0 {
				p = -p
			}
			if st.sum, over = addInt64(st.sum, p); over {
				return false
			}
		case operators.AggMin, operators.AggMax:
			if !lg.foldExtreme(st, args[j], a.Func == operators.AggMax) {
				return false
			}
		}
	}
	return true
}

// recentSlot picks a key's slot in snapshotKeyLogic.recentFolds from its
// length and its last and middle bytes, where small encoded keys differ.
func recentSlot(key []byte) int {
	n := len(key)
	if n == 0 {
		return 0
	}
	h := uint(key[n-1]) ^ uint(key[n/2])<<3 ^ uint(n)*0x9e
	return int(h % uint(len(snapshotKeyLogic{}.recentFolds)))
}

// foldExtreme keeps the least (greatest when max) argument in st.best; a
// tie between different encodings cannot be folded exactly.
func (lg *snapshotKeyLogic) foldExtreme(st *aggFold, d row.Datum, max bool) bool {
	lg.datumBuf = row.AppendDatums(lg.datumBuf[:0], d)
	if st.best == nil {
		st.best = append([]byte(nil), lg.datumBuf...)
		return true
	}
	best, err := row.Row(st.best).Column(0)
	if err != nil {
		return false
	}
	c := row.Compare(d, best)
	switch {
	case c == 0:
		return bytes.Equal(lg.datumBuf, st.best)
	case (c > 0) == max:
		st.best = append(st.best[:0], lg.datumBuf...)
	}
	return true
}

func addInt64(a, b int64) (int64, bool) {
	s := a + b
	return s, (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0)
}

func absU64(a int64) uint64 {
	if a < 0 {
		return uint64(-a)
	}
	return uint64(a)
}

// stopFolding restarts the walk from the first row without folding.
func (lg *snapshotKeyLogic) stopFolding() {
	lg.folding = false
	lg.groups, lg.folds, lg.foldArena = nil, nil, nil
	lg.recentFolds = [len(lg.recentFolds)]int32{}
	clear(lg.errRows)
	lg.cl = batch.NewCursorList(lg.batches)
	lg.seekPos, lg.inKey = 0, false
}

// emitFolds turns every group's state into its synthetic pairs.
func (lg *snapshotKeyLogic) emitFolds() {
	var vals []row.Datum
	for gi := range lg.folds {
		g := &lg.folds[gi]
		key := lg.foldArena[g.off : g.off+g.klen]
		// Rows 1..N; the arguments change only after row 1 and after each
		// c_i.
		cuts := []int64{1, min(2, g.rows+1), g.rows + 1}
		for _, st := range g.aggs {
			cuts = append(cuts, st.n+1)
		}
		sortInt64s(cuts)
		for ci := 0; ci+1 < len(cuts); ci++ {
			from, to := cuts[ci], cuts[ci+1]
			if from >= to || from > g.rows {
				continue
			}
			vals = vals[:0]
			for j, a := range lg.fold {
				vals = append(vals, foldedArg(a.Func, &g.aggs[j], from))
			}
			kv := append(appendPair(lg.kvBuf[:0], key, vals), g.written...)
			lg.kvBuf = kv
			lg.push(kv, to-from)
		}
	}
	lg.groups, lg.folds, lg.foldArena = nil, nil, nil
	lg.recentFolds = [len(lg.recentFolds)]int32{}
}

// foldedArg is aggregate f's argument in synthetic row j (1-based).
func foldedArg(f operators.AggFunc, st *aggFold, j int64) row.Datum {
	if f == operators.AggCountStar || j > st.n {
		return row.Null()
	}
	switch f {
	case operators.AggSum, operators.AggAvg:
		if j == 1 {
			return row.Int64(st.sum)
		}
		return row.Int64(0)
	case operators.AggMin, operators.AggMax:
		d, err := row.Row(st.best).Column(0)
		if err != nil {
			return row.Null() // unreachable: best was encoded here
		}
		return d
	}
	return row.Int64(0) // count: any non-null argument
}

func appendPair(kv, key []byte, vals []row.Datum) []byte {
	kv = binary.AppendUvarint(kv, uint64(len(key)))
	kv = append(kv, key...)
	return row.AppendDatums(kv, vals...)
}

func sortInt64s(s []int64) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
