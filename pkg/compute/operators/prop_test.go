package operators

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// These properties check the incremental machinery against recomputation
// from scratch: for random update histories cut into random batches, with
// random logical compaction of the old batches before each step, the
// accumulated output through every time t equals the operator applied to
// the accumulated input through t. The group logics themselves are
// table-tested in reduce_test.go and cross-checked against an independent
// evaluator in pkg/compute/enginetest.

const propTimes = 12

func genDatum(t *rapid.T, label string) row.Datum {
	n := rapid.IntRange(-1, 4).Draw(t, label)
	if n < 0 {
		return row.Null()
	}
	return row.Int64(int64(n))
}

func genUpdates(t *rapid.T, label string, withVals bool) []kv {
	n := rapid.IntRange(0, 30).Draw(t, label+"_n")
	out := make([]kv, n)
	for i := range out {
		u := kv{
			key: pack(row.Int64(int64(rapid.IntRange(0, 2).Draw(t, "key")))),
			t:   frontier.Time(rapid.IntRange(0, propTimes-1).Draw(t, "time")),
			d:   int64(rapid.SampledFrom([]int{-1, 1, 1, 2}).Draw(t, "diff")),
		}
		if withVals {
			u.val = pack(genDatum(t, "v0"), genDatum(t, "v1"))
		}
		out[i] = u
	}
	return out
}

// genRetyped is genUpdates with each update passed through retype (nil:
// kept as generated).
func genRetyped(t *rapid.T, label string, withVals bool, retype func(kv) kv) []kv {
	upds := genUpdates(t, label, withVals)
	if retype != nil {
		for i := range upds {
			upds[i] = retype(upds[i])
		}
	}
	return upds
}

// genCuts returns batch boundaries 0 = c0 < c1 < ... < ck = propTimes.
func genCuts(t *rapid.T) []frontier.Time {
	cuts := []frontier.Time{0}
	for c := 1; c < propTimes; c++ {
		if rapid.Bool().Draw(t, fmt.Sprintf("cut%d", c)) {
			cuts = append(cuts, frontier.Time(c))
		}
	}
	return append(cuts, propTimes)
}

// batchesAt builds one batch per interval of cuts.
func batchesAt(t *rapid.T, cuts []frontier.Time, upds []kv) []*batch.Batch {
	out := make([]*batch.Batch, len(cuts)-1)
	for i := range out {
		var in []kv
		for _, u := range upds {
			if u.t >= cuts[i] && u.t < cuts[i+1] {
				in = append(in, u)
			}
		}
		out[i] = mkBatch(t, cuts[i], cuts[i+1], in...)
	}
	return out
}

// compacted returns the old batches, possibly merged into one with a random
// logical compaction frontier at or before f0.
func compacted(t *rapid.T, old []*batch.Batch, f0 frontier.Time) []*batch.Batch {
	if len(old) < 2 || !rapid.Bool().Draw(t, "merge") {
		return old
	}
	since := frontier.At(frontier.Time(rapid.IntRange(0, int(f0)).Draw(t, "since")))
	m := old[0]
	for _, b := range old[1:] {
		var err error
		if m, err = batch.Merge(m, b, since); err != nil {
			t.Fatalf("merge: %v", err)
		}
	}
	return []*batch.Batch{m}
}

// timedCollector keeps every emitted update with its time.
type timedCollector struct {
	rows []kv
	errs map[string][]kv
}

func (c *timedCollector) emit(r []byte, t frontier.Time, d int64) {
	c.rows = append(c.rows, kv{key: append(row.Row(nil), r...), t: t, d: d})
}

func (c *timedCollector) emitErr(err error, t frontier.Time, d int64) {
	if c.errs == nil {
		c.errs = map[string][]kv{}
	}
	c.errs[err.Error()] = append(c.errs[err.Error()], kv{t: t, d: d})
}

// accumulate returns row text -> multiplicity through time t.
func accumulate(upds []kv, t frontier.Time) map[string]int64 {
	m := map[string]int64{}
	for _, u := range upds {
		if u.t <= t {
			m[rowText(u.key)] += u.d
		}
	}
	for k, v := range m {
		if v == 0 {
			delete(m, k)
		}
	}
	return m
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestReduceGroupsMatchesRecomputation(t *testing.T) {
	type named struct {
		name   string
		vals   bool
		logic  func() GroupLogic
		retype func(kv) kv
	}
	ops := []named{
		{"aggregates", true, func() GroupLogic {
			return AggregateLogic([]Aggregate{
				{Func: AggCountStar}, {Func: AggCount, Column: 1}, {Func: AggSum}, {Func: AggMin, Column: 1},
				{Func: AggMax}, {Func: AggAvg, Column: 1}, {Func: AggCount, Column: 0, Distinct: true},
			})
		}, nil},
		{"text and float aggregates", true, func() GroupLogic {
			return AggregateLogic([]Aggregate{
				{Func: AggStringAgg, Column: 0, Sep: 2}, {Func: AggStringAgg, Column: 0, Sep: 0, Distinct: true},
				{Func: AggStringAgg, Column: 0, Sep: 2, Order: []row.ColumnOrder{{Column: 1, Desc: true, NullsLast: true}}},
				{Func: AggVarSamp, Column: 1}, {Func: AggStddevPop, Column: 1, Distinct: true},
			})
		}, textFloatVals},
		{"distinct", false, DistinctLogic, nil},
		{"threshold", false, ThresholdLogic, nil},
		{"topk", true, func() GroupLogic {
			return TopKLogic(TopKSpec{Order: []row.ColumnOrder{{Column: 1, Desc: true, NullsLast: true}}, Limit: 2, Offset: 1})
		}, nil},
	}
	for _, op := range ops {
		t.Run(op.name, rapid.MakeCheck(func(t *rapid.T) {
			upds := genRetyped(t, "in", op.vals, op.retype)
			cuts := genCuts(t)
			bs := batchesAt(t, cuts, upds)
			var out timedCollector
			logic := op.logic()
			for i := range bs {
				ReduceGroups(compacted(t, bs[:i], cuts[i]), bs[i:i+1], logic, out.emit, out.emitErr)
			}
			oracle := op.logic()
			for tm := frontier.Time(0); tm < propTimes; tm++ {
				want, wantErrs := map[string]int64{}, map[string]int64{}
				byKey := map[string][]ValDiff{}
				for _, u := range upds {
					if u.t <= tm {
						byKey[string(u.key)] = append(byKey[string(u.key)], ValDiff{Val: u.val, Diff: u.d})
					}
				}
				for k, in := range byKey {
					in = Consolidate(in)
					if len(in) == 0 {
						continue
					}
					rows, err := oracle([]byte(k), in)
					if err != nil {
						wantErrs[err.Error()]++
						continue
					}
					for _, r := range rows {
						want[rowText(r.Val)] += r.Diff
					}
				}
				if got := accumulate(out.rows, tm); !equalCounts(got, want) {
					t.Fatalf("rows at %d:\n got  %v\n want %v", tm, got, want)
				}
				gotErrs := map[string]int64{}
				for e, us := range out.errs {
					for _, u := range us {
						if u.t <= tm {
							gotErrs[e] += u.d
						}
					}
					if gotErrs[e] == 0 {
						delete(gotErrs, e)
					}
				}
				if !equalCounts(gotErrs, wantErrs) {
					t.Fatalf("errors at %d:\n got  %v\n want %v", tm, gotErrs, wantErrs)
				}
			}
		}))
	}
}

// TestJoinMatchesRecomputation also cuts the two inputs at different
// frontiers: each step consumes the next batch of the left input, of the
// right input, or of both, as a runtime does when one input's arrangement
// runs ahead of the other's.
func TestJoinMatchesRecomputation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		left, right := genUpdates(t, "left", true), genUpdates(t, "right", true)
		lcuts, rcuts := genCuts(t), genCuts(t)
		lb, rb := batchesAt(t, lcuts, left), batchesAt(t, rcuts, right)
		var out timedCollector
		li, ri := 0, 0
		for li < len(lb) || ri < len(rb) {
			side := rapid.IntRange(0, 2).Draw(t, "side")
			nl, nr := li, ri
			if li < len(lb) && (side != 1 || ri == len(rb)) {
				nl++
			}
			if ri < len(rb) && (side != 0 || li == len(lb)) {
				nr++
			}
			// Either trace may be compacted up to the meet of the two
			// cuts: no fresh update on the other side is earlier.
			meet := min(rcuts[ri], lcuts[li])
			Join(JoinInput{
				LeftOld: compacted(t, lb[:li], meet), LeftFresh: lb[li:nl],
				RightOld: compacted(t, rb[:ri], meet), RightFresh: rb[ri:nr],
			}, out.emit)
			li, ri = nl, nr
		}
		for tm := frontier.Time(0); tm < propTimes; tm++ {
			want := map[string]int64{}
			for _, l := range left {
				for _, r := range right {
					if l.t <= tm && r.t <= tm && string(l.key) == string(r.key) {
						want[rowText(append(append(row.Row(nil), l.val...), r.val...))] += l.d * r.d
					}
				}
			}
			for k, v := range want {
				if v == 0 {
					delete(want, k)
				}
			}
			if got := accumulate(out.rows, tm); !equalCounts(got, want) {
				t.Fatalf("join at %d:\n got  %v\n want %v", tm, got, want)
			}
		}
	})
}

// textFloatVals turns a generated value (v0, v1) of small integers into
// (text v0, float64 v1 / 4, separator), NULLs kept, for the text and
// float aggregates.
func textFloatVals(u kv) kv {
	ds, err := row.Row(u.val).Unpack()
	if err != nil {
		panic(err)
	}
	t, f, sep := row.Null(), row.Null(), row.Text(",")
	if !ds[0].IsNull() {
		t = row.Text(fmt.Sprint("v", ds[0].Int64()))
		if ds[0].Int64() == 0 {
			sep = row.Null()
		}
	}
	if !ds[1].IsNull() {
		f = row.Float64(float64(ds[1].Int64()) / 4)
	}
	u.val = pack(t, f, sep)
	return u
}
