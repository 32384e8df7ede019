package render

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// temporalRow is (id, start, end) with start and end timestamptz given in
// micros (NULL when negative).
func temporalRow(id, start, end int64) []row.Datum {
	ts := func(us int64) row.Datum {
		if us < 0 {
			return row.Null()
		}
		return row.TimestampTZ(us)
	}
	return []row.Datum{row.Int64(id), ts(start), ts(end)}
}

// temporalFilter keeps rows with start <= now() < end, and (with eq) the
// rows whose start equals now().
func temporalFilter(input plan.Plan, eq bool) plan.Plan {
	if eq {
		return plan.NewTemporalFilter(input, plan.TemporalBound{Expr: expr.Column(1), Op: plan.TemporalEq})
	}
	return plan.NewTemporalFilter(input,
		plan.TemporalBound{Expr: expr.Column(1), Op: plan.TemporalLte},
		plan.TemporalBound{Expr: expr.Column(2), Op: plan.TemporalGt})
}

// TestTemporalFilterWindows feeds rows once and then only advances the
// input frontier (no writes): each row must appear when its window opens
// and disappear when it closes, retractions must cancel what is left of a
// row's window, and at every time T the output must equal the one-shot
// filter with now() = T over the input as of T (FilterAt).
func TestTemporalFilterWindows(t *testing.T) {
	const ms = 1000 // micros
	type upd struct {
		at       frontier.Time
		diff     int64
		id, s, e int64
	}
	inputs := []upd{
		{1, 1, 1, 5 * ms, 15 * ms},   // visible [5, 15)
		{1, 1, 2, 3 * ms, 30 * ms},   // visible [3, 10): retracted at 10
		{10, -1, 2, 3 * ms, 30 * ms}, //
		{1, 1, 3, 2 * ms, 8 * ms},    // visible [2, 8): retracted at 12, after its window closed
		{12, -1, 3, 2 * ms, 8 * ms},  //
		{1, 1, 4, -1, 20 * ms},       // NULL start: never
		{20, 1, 5, 5 * ms, 15 * ms},  // inserted after its window closed: never
		{20, 1, 6, 0, 25 * ms},       // visible [20, 25)
		{1, 1, 7, 5500, 15500},       // 5.5ms <= now() from 6; 15.5ms > now() through 15
		{1, 2, 8, 4 * ms, 9 * ms},    // multiplicity 2, visible [4, 9)
		{6, -1, 8, 4 * ms, 9 * ms},   // one copy retracted inside the window
		{1, 1, 9, 40 * ms, 50 * ms},  // opens after the last time read
		{3, 1, 10, 0, 1 << 62},       // far future upper: still pending at the end
		{7, 1, 11, 7 * ms, 7 * ms},   // empty window
		{2, 1, 12, 9 * ms, 12 * ms},  // visible [9, 12) ...
		{9, -1, 12, 9 * ms, 12 * ms}, // ... retracted before it opens: never
	}
	named := map[frontier.Time]string{ // for start <= now() < end
		4:  "2 x1; 3 x1; 8 x2; 10 x1",
		5:  "1 x1; 2 x1; 3 x1; 8 x2; 10 x1",
		6:  "1 x1; 2 x1; 3 x1; 7 x1; 8 x1; 10 x1",
		9:  "1 x1; 2 x1; 7 x1; 10 x1",
		10: "1 x1; 7 x1; 10 x1",
		15: "7 x1; 10 x1",
		16: "10 x1",
		22: "6 x1; 10 x1",
		30: "10 x1",
	}
	for _, eq := range []bool{false, true} {
		for _, w := range []int{1, 2} {
			t.Run(fmt.Sprintf("eq=%v/W%d", eq, w), func(t *testing.T) {
				tbl := NewMemoryTable()
				fx := renderFixture(t, w, temporalFilter(plan.NewGet(plan.User(1)), eq), map[plan.GlobalID]*MemoryTable{plan.User(1): tbl})
				var all []dataflow.Update
				for _, u := range inputs {
					all = append(all, dataflow.Update{Val: row.Pack(temporalRow(u.id, u.s, u.e)...), Time: u.at, Diff: u.diff})
				}
				if err := tbl.Append(all, frontier.At(21)); err != nil {
					t.Fatal(err)
				}
				for ts := frontier.Time(0); ts <= 30; ts++ {
					if ts >= 20 {
						// Time passes with no write.
						if err := tbl.Append(nil, frontier.At(ts+1)); err != nil {
							t.Fatal(err)
						}
					}
					got := shortRows(t, fx.read(ts))
					if want := oneShotAt(t, all, ts, eq); got != want {
						t.Errorf("at %d: view has %q, the one-shot filter at %d has %q", ts, got, ts, want)
					}
					if want, ok := named[ts]; ok && !eq && got != want {
						t.Errorf("at %d: got %q, want %q", ts, got, want)
					}
				}
			})
		}
	}
}

// oneShotAt filters the input accumulated as of ts with now() = ts as a
// literal, the way a one-shot query at ts evaluates the predicate.
func oneShotAt(t *testing.T, ups []dataflow.Update, ts frontier.Time, eq bool) string {
	t.Helper()
	acc := map[string]int64{}
	for _, u := range ups {
		if u.Time <= ts {
			acc[string(u.Val)] += u.Diff
		}
	}
	m := temporalFilter(plan.Plan{}, eq).TemporalFilter.FilterAt(3, uint64(ts))
	counts := map[int64]int64{}
	for k, n := range acc {
		ds, err := row.Row(k).Unpack()
		if err != nil {
			t.Fatal(err)
		}
		if _, keep, err := m.Evaluate(ds, nil); err == nil && keep && n != 0 {
			counts[ds[0].Int64()] += n
		}
	}
	return idCounts(counts)
}

// shortRows rewrites the fixture's "(id, start, end) xN" rows to
// idCounts' form, so that both sides compare ids and multiplicities.
func shortRows(t *testing.T, s string) string {
	t.Helper()
	counts := map[int64]int64{}
	if s != "" {
		for _, r := range strings.Split(s, "; ") {
			var id, n int64
			if _, err := fmt.Sscanf(r[:strings.Index(r, ",")], "(%d", &id); err != nil {
				t.Fatalf("row %q: %v", r, err)
			}
			if _, err := fmt.Sscanf(r[strings.LastIndex(r, " x"):], " x%d", &n); err != nil {
				t.Fatalf("row %q: %v", r, err)
			}
			counts[id] += n
		}
	}
	return idCounts(counts)
}

// idCounts spells counts as "id xN; ..." in id order.
func idCounts(counts map[int64]int64) string {
	ids := make([]int64, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fmt.Sprintf("%d x%d", id, counts[id])
	}
	return strings.Join(out, "; ")
}

// TestTemporalPendingStaysBounded updates one row 10000 times inside its
// window, each version with its own end: the exits that retractions
// cancel must not stay pending, so the operator keeps one pending update
// (the live version's exit) and a heap bounded by the live times, not
// two entries per update (operations counted, no clock).
func TestTemporalPendingStaysBounded(t *testing.T) {
	const hour = 3_600_000 // ms
	lg := &temporalLogic{tf: temporalFilter(plan.Plan{}, false).TemporalFilter, dec: &rowDecoder{used: usedColumns(nil, []int{0, 1, 2})}}
	version := func(i int64) dataflow.Update {
		return dataflow.Update{Val: row.Pack(temporalRow(1, 0, (hour+i)*1000)...)}
	}
	var sent []dataflow.Update
	apply := func(u dataflow.Update, at frontier.Time, diff int64) {
		u.Time, u.Diff = at, diff
		var err error
		lg.datums, err = lg.dec.decode(row.Row(u.Val), lg.datums)
		if err != nil {
			t.Fatal(err)
		}
		v, err := lg.tf.Validity(lg.datums)
		if err != nil {
			t.Fatal(err)
		}
		sent = lg.admit(sent, u, v)
	}
	apply(version(0), 1, 1)
	for i := int64(1); i <= 10_000; i++ {
		apply(version(i-1), frontier.Time(i+1), -1)
		apply(version(i), frontier.Time(i+1), 1)
	}
	pairs, slots := lg.pending.entries()
	if pairs != 1 || slots > 2+64 {
		t.Fatalf("after 10000 updates: %d pending updates in %d heap slots, want 1 in at most 66", pairs, slots)
	}
	// Everything before the last version's end is released, then its exit.
	out := lg.pending.release(nil, frontier.At(hour+10_000))
	if len(out) != 0 {
		t.Fatalf("released %d updates before the live version's end", len(out))
	}
	out = lg.pending.release(nil, frontier.At(hour+10_001))
	if len(out) != 1 || out[0].Diff != -1 || out[0].Time != hour+10_000 || string(out[0].Val) != string(version(10_000).Val) {
		t.Fatalf("released %+v, want the live version's exit at %d", out, hour+10_000)
	}
	if _, held := lg.pending.min(); held {
		t.Fatal("pending updates left after their release")
	}
	if len(sent) != 20_001 {
		t.Fatalf("sent %d updates at once, want each version's entry and retraction (20001)", len(sent))
	}
}
