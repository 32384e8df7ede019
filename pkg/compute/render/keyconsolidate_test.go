package render

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// newTestKeyLogic keys rows (a, b) by a with value 10 / b (so b = 0 is an
// evaluation error).
func newTestKeyLogic() *keyLogic {
	spec := KeySpec{Key: []expr.Expr{expr.Column(0)}, Val: []expr.Expr{expr.Div(expr.Literal(row.Int64(10)), expr.Column(1))}}
	return &keyLogic{spec: spec, dec: rowDecoder{used: usedColumns(append(append([]expr.Expr(nil), spec.Key...), spec.Val...), nil)}}
}

// rowsOf returns n updates of rows (i % keys, i % vals + 1) at times 1 and
// 2, alternating, with diffs +1, and a -1 for every fifth row (some
// triples cancel), plus one row whose value fails to evaluate.
func rowsOf(n, keys, vals int) []dataflow.Update {
	var ups []dataflow.Update
	for i := range n {
		d := int64(1)
		if i%5 == 4 {
			d = -1
		}
		ups = append(ups, dataflow.Update{Val: row.Pack(row.Int64(int64(i%keys)), row.Int64(int64(i%vals+1))), Time: frontier.Time(1 + i%2), Diff: d})
	}
	return append(ups, dataflow.Update{Val: row.Pack(row.Int64(0), row.Int64(0)), Time: 1, Diff: 1})
}

func showUpdates(ups []dataflow.Update) []string {
	ups = consolidateUpdates(slices.Clone(ups))
	out := make([]string, len(ups))
	for i, u := range ups {
		out[i] = fmt.Sprintf("%x/%x@%d:%d", u.Key, u.Val, u.Time, u.Diff)
	}
	return out
}

// TestKeyByConsolidatesChunks: a chunk keyed with consolidation holds one
// update per distinct (key, value, time), with the summed multiplicity and
// none that cancelled, and accumulates to what keying row by row gives; a
// KeyBy whose chunks do not shrink keys row by row after a few chunks.
func TestKeyByConsolidatesChunks(t *testing.T) {
	cases := []struct {
		name            string
		n, keys, vals   int
		wantAtMost      int
		wantConsolidate bool
	}{
		{"few groups", 4000, 3, 4, 3 * 4 * 2, true},
		{"distinct rows", 4000, 4000, 4000, 4000, false},
		{"a small chunk", 100, 100, 1, 100, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := rowsOf(tc.n, tc.keys, tc.vals)
			plain := newTestKeyLogic()
			plain.cons.off = true
			wantOk, wantErrs := plain.keyChunk(in, nil, nil)
			lg := newTestKeyLogic()
			for chunk := range consolidateGiveUp + 1 {
				ok, errs := lg.keyChunkConsolidated(in)
				if len(ok) > tc.wantAtMost {
					t.Fatalf("chunk %d: %d updates out of %d, want at most %d", chunk, len(ok), len(in), tc.wantAtMost)
				}
				if got, want := showUpdates(ok), showUpdates(wantOk); !slices.Equal(got, want) {
					t.Fatalf("chunk %d accumulates to\n%v\nwant\n%v", chunk, got, want)
				}
				if len(errs) != len(wantErrs) || len(errs) != 1 {
					t.Fatalf("chunk %d: %d errors, want %d (and 1)", chunk, len(errs), len(wantErrs))
				}
			}
			if lg.cons.off == tc.wantConsolidate {
				t.Fatalf("after %d chunks consolidation is off: %v, want %v", consolidateGiveUp+1, lg.cons.off, !tc.wantConsolidate)
			}
		})
	}
}
