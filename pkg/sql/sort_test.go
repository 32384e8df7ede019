package sql

import (
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/planner"
)

// TestExternalSortMatchesInMemory: whatever the run size (everything in
// memory, a few runs, one row per run), the external sort yields exactly
// what the in-memory stable sort of finish yields, ties in arrival order
// included, and leaves no file behind.
func TestExternalSortMatchesInMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var in []RowDiff
	for i := range 500 {
		a := row.Int64(int64(rng.IntN(20)))
		if rng.IntN(10) == 0 {
			a = row.Null()
		}
		in = append(in, RowDiff{Row: row.Pack(a, row.Text(string(rune('a'+rng.IntN(5)))), row.Int64(int64(i))), Diff: int64(1 + rng.IntN(3))})
	}
	orders := map[string][]plan.ColumnOrder{
		"a":                 {{Column: 0}},
		"a desc nulls last": {{Column: 0, Desc: true, NullsLast: true}},
		"b, a desc":         {{Column: 1}, {Column: 0, Desc: true}},
	}
	for name, order := range orders {
		want, err := expand(in, &memBudget{})
		if err != nil {
			t.Fatal(err)
		}
		want = finish(want, &planner.Finishing{Order: order, Project: []int{0, 1, 2}})
		for _, runBytes := range []uint64{0, 4 << 10, 1} {
			dir := t.TempDir()
			x := newExternalSort(order, dir, runBytes)
			for _, d := range in {
				if err := x.add(d); err != nil {
					t.Fatal(err)
				}
			}
			spilled := x.runs() > 0
			if spilled != (runBytes > 0) {
				t.Fatalf("%s, runs of %d bytes: %d runs on disk", name, runBytes, x.runs())
			}
			pr, err := x.sorted()
			if err != nil {
				t.Fatal(err)
			}
			diffs, err := CollectRows(pr)
			if err != nil {
				t.Fatal(err)
			}
			got, err := expand(diffs, &memBudget{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, func(a, b []row.Datum) bool {
				return row.Pack(a...).String() == row.Pack(b...).String()
			}) {
				t.Fatalf("%s, runs of %d bytes: order differs from the in-memory sort", name, runBytes)
			}
			if es, _ := os.ReadDir(dir); len(es) != 0 {
				t.Fatalf("%s: %d files left in the spill directory", name, len(es))
			}
		}
	}
}

func TestMemBudget(t *testing.T) {
	for _, tc := range []struct {
		limit uint64
		takes []uint64
		fail  int // index of the take that fails, -1 for none
	}{
		{limit: 0, takes: []uint64{1 << 40, 1 << 40}, fail: -1},
		{limit: 100, takes: []uint64{50, 50}, fail: -1},
		{limit: 100, takes: []uint64{50, 50, 1}, fail: 2},
	} {
		b := &memBudget{limit: tc.limit}
		failed := -1
		for i, n := range tc.takes {
			if err := b.take(n); err != nil {
				if failed < 0 {
					failed = i
				}
				if code := err.(interface{ SQLState() string }).SQLState(); code != "53200" {
					t.Fatalf("code %s", code)
				}
			}
		}
		if failed != tc.fail {
			t.Fatalf("limit %d takes %v: failed at %d, want %d", tc.limit, tc.takes, failed, tc.fail)
		}
	}
}
