package peek

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

type upd struct {
	k, v int64
	t    frontier.Time
	d    int64
}

func mkBatch(t *testing.T, lo, hi frontier.Time, ups ...upd) *batch.Batch {
	t.Helper()
	var b batch.Builder
	for _, u := range ups {
		b.Push(row.Pack(row.Int64(u.k)), row.Pack(row.Int64(u.k), row.Int64(u.v)), u.t, u.d)
	}
	bat, err := b.Build(batch.Description{Lower: frontier.At(lo), Upper: frontier.At(hi), Since: frontier.Minimum()})
	if err != nil {
		t.Fatal(err)
	}
	return bat
}

func show(rcs []RowCount) string {
	s := ""
	for _, rc := range rcs {
		s += fmt.Sprintf("%s x%d;", rc.Row, rc.Count)
	}
	return s
}

func keys(ks ...int64) [][]byte {
	out := [][]byte{}
	for _, k := range ks {
		out = append(out, row.Pack(row.Int64(k)))
	}
	return out
}

func TestWalk(t *testing.T) {
	b1 := mkBatch(t, 0, 10, upd{1, 10, 1, 1}, upd{2, 20, 2, 2}, upd{3, 30, 3, 1}, upd{5, 50, 4, 1})
	b2 := mkBatch(t, 10, 20, upd{1, 10, 12, -1}, upd{2, 21, 11, 1}, upd{4, 40, 15, 1})
	bad := mkBatch(t, 20, 30, upd{3, 30, 25, -2})
	firstCol := func(key, val, dst []byte) ([]byte, bool, error) {
		ds, err := row.Row(val).Unpack()
		if err != nil {
			return nil, false, err
		}
		if ds[1].Int64() == 50 {
			return nil, false, nil
		}
		return row.AppendDatums(dst, row.Int64(ds[1].Int64()%2)), true, nil
	}
	boom := errors.New("boom")
	tests := []struct {
		name    string
		batches []*batch.Batch
		at      frontier.Time
		opts    Options
		want    string
		wantErr error
	}{
		{name: "scan before second batch", batches: []*batch.Batch{b1, b2}, at: 9,
			want: "(1, 10) x1;(2, 20) x2;(3, 30) x1;(5, 50) x1;"},
		{name: "scan later", batches: []*batch.Batch{b1, b2}, at: 19,
			want: "(2, 20) x2;(2, 21) x1;(3, 30) x1;(4, 40) x1;(5, 50) x1;"},
		{name: "time between updates", batches: []*batch.Batch{b1, b2}, at: 2,
			want: "(1, 10) x1;(2, 20) x2;"},
		{name: "literal keys with duplicates and misses", batches: []*batch.Batch{b1, b2}, at: 19,
			opts: Options{Keys: keys(4, 2, 9, 2, 0)}, want: "(2, 20) x2;(2, 21) x1;(4, 40) x1;"},
		{name: "no keys matches nothing", batches: []*batch.Batch{b1, b2}, at: 19, opts: Options{Keys: keys()}, want: ""},
		{name: "transform filters and consolidates", batches: []*batch.Batch{b1, b2}, at: 19,
			opts: Options{Transform: firstCol}, want: "(0) x4;(1) x1;"},
		{name: "transform error", batches: []*batch.Batch{b1}, at: 5,
			opts: Options{Transform: func(_, _, _ []byte) ([]byte, bool, error) { return nil, false, boom }}, wantErr: boom},
		{name: "negative multiplicity", batches: []*batch.Batch{b1, b2, bad}, at: 29, wantErr: ErrNegativeMultiplicity},
		{name: "negative multiplicity outside key constraint is not read", batches: []*batch.Batch{b1, b2, bad}, at: 29,
			opts: Options{Keys: keys(4)}, want: "(4, 40) x1;"},
		{name: "max result size", batches: []*batch.Batch{b1, b2}, at: 19, opts: Options{MaxResultBytes: 40}, wantErr: ErrResultTooLarge},
	}
	for _, tt := range tests {
		for _, budget := range []int{0, 1, 2} {
			t.Run(fmt.Sprintf("%s/budget%d", tt.name, budget), func(t *testing.T) {
				w := NewWalk(trace.Read{Batches: tt.batches, Time: tt.at}, tt.opts)
				steps := 0
				for !w.Step(budget) {
					steps++
					if steps > 1000 {
						t.Fatal("walk does not finish")
					}
				}
				got, err := w.Result()
				if tt.wantErr != nil {
					if !errors.Is(err, tt.wantErr) {
						t.Fatalf("got err %v, want %v", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if show(got) != tt.want {
					t.Fatalf("got %s\nwant %s", show(got), tt.want)
				}
			})
		}
	}
}

func TestResultBeforeDone(t *testing.T) {
	w := NewWalk(trace.Read{Batches: []*batch.Batch{mkBatch(t, 0, 10, upd{1, 1, 1, 1}, upd{2, 2, 1, 1})}, Time: 5}, Options{})
	if w.Step(1) {
		t.Fatal("budget 1 over two rows finished at once")
	}
	if _, err := w.Result(); err == nil {
		t.Fatal("result before done")
	}
}

func TestMerge(t *testing.T) {
	a := []RowCount{{Row: row.Pack(row.Int64(1)), Count: 1}, {Row: row.Pack(row.Int64(3)), Count: 2}}
	b := []RowCount{{Row: row.Pack(row.Int64(1)), Count: 2}, {Row: row.Pack(row.Int64(2)), Count: 1}}
	got, err := Merge(0, a, b)
	if err != nil || show(got) != "(1) x3;(2) x1;(3) x2;" {
		t.Fatalf("got %s, %v", show(got), err)
	}
	if _, err := Merge(20, a, b); !errors.Is(err, ErrResultTooLarge) {
		t.Fatalf("got %v", err)
	}
}

// TestWalkChunks: a chunked walk hands over the same multiset of rows as an
// unchunked one, in chunks of bounded size, and keeps the size bound over
// the whole walk.
func TestWalkChunks(t *testing.T) {
	r := chunkTestRead(t, 500)
	whole := NewWalk(r, Options{})
	whole.Step(0)
	want, err := whole.Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{1, 40, 1000, 1 << 20} {
		w := NewWalk(r, Options{ChunkBytes: chunk})
		var got []RowCount
		chunks := 0
		for !w.Step(7) {
			if w.ChunkReady() {
				c := w.TakeChunk()
				size := 0
				for _, rc := range c {
					size += len(rc.Row) + 8
				}
				if size > chunk+len(c[len(c)-1].Row)+8 {
					t.Fatalf("chunk of %d bytes with ChunkBytes %d", size, chunk)
				}
				got = append(got, c...)
				chunks++
			}
		}
		rest, err := w.Result()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rest...)
		merged, err := Merge(0, got)
		if err != nil {
			t.Fatal(err)
		}
		if len(merged) != len(want) {
			t.Fatalf("chunk %d: %d rows, want %d", chunk, len(merged), len(want))
		}
		for i := range want {
			if !bytes.Equal(merged[i].Row, want[i].Row) || merged[i].Count != want[i].Count {
				t.Fatalf("chunk %d: row %d = %v, want %v", chunk, i, merged[i], want[i])
			}
		}
		if chunk < 100 && chunks < 10 {
			t.Fatalf("chunk %d: only %d chunks", chunk, chunks)
		}
	}
	// The bound covers rows already handed over.
	w := NewWalk(r, Options{ChunkBytes: 40, MaxResultBytes: 200})
	for !w.Step(0) {
		w.TakeChunk()
	}
	if _, err := w.Result(); !errors.Is(err, ErrResultTooLarge) {
		t.Fatalf("chunked walk over the bound: %v", err)
	}
}

// chunkTestRead is n keys with several values each over two batches, some
// values retracted, readable at time 20.
func chunkTestRead(t *testing.T, n int) trace.Read {
	var u1, u2 []upd
	for k := range int64(n) {
		u1 = append(u1, upd{k, k, 1, 1}, upd{k, k + 1, 2, 2})
		if k%3 == 0 {
			u2 = append(u2, upd{k, k, 12, -1})
		}
	}
	sortUpds := func(us []upd) []upd {
		slices.SortStableFunc(us, func(a, b upd) int { return cmp.Compare(a.k, b.k) })
		return us
	}
	b1 := mkBatch(t, 0, 10, sortUpds(u1)...)
	b2 := mkBatch(t, 10, 30, sortUpds(u2)...)
	return trace.Read{Batches: []*batch.Batch{b1, b2}, Time: 20}
}

// TestWalkTopK: a walk keeping the top k rows in an order yields, after
// the finishing, exactly what the full walk yields, and never holds more
// than k distinct rows; with duplicates produced by a projection too.
func TestWalkTopK(t *testing.T) {
	r := chunkTestRead(t, 400)
	project := func(key, val, dst []byte) ([]byte, bool, error) {
		ds, err := row.Row(val).Unpack()
		if err != nil {
			return nil, false, err
		}
		// (v % 13, k % 5): many keys map to one output row.
		return append(dst, row.Pack(row.Int64(ds[1].Int64()%13), row.Int64(ds[0].Int64()%5))...), true, nil
	}
	for _, tc := range []struct {
		name      string
		transform Transform
		order     []plan.ColumnOrder
		limit     int64
	}{
		{name: "desc", order: []plan.ColumnOrder{{Column: 1, Desc: true}}, limit: 10},
		{name: "asc limit 1", order: []plan.ColumnOrder{{Column: 0}}, limit: 1},
		{name: "limit 0", order: []plan.ColumnOrder{{Column: 0}}, limit: 0},
		{name: "projected duplicates", transform: project, order: []plan.ColumnOrder{{Column: 0, Desc: true}, {Column: 1}}, limit: 25},
		{name: "limit above the result", transform: project, order: []plan.ColumnOrder{{Column: 1}}, limit: 100000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fin := &plan.Finishing{Order: tc.order, Limit: &tc.limit}
			finish := func(rows []RowCount) string {
				prs := make([]row.RowCount, len(rows))
				for i, rc := range rows {
					prs[i] = row.RowCount{Row: rc.Row, Count: rc.Count}
				}
				out, err := fin.Apply(prs)
				if err != nil {
					t.Fatal(err)
				}
				s := ""
				for _, rc := range out {
					s += fmt.Sprintf("%s x%d;", rc.Row, rc.Count)
				}
				return s
			}
			full := NewWalk(r, Options{Transform: tc.transform})
			full.Step(0)
			want, err := full.Result()
			if err != nil {
				t.Fatal(err)
			}
			w := NewWalk(r, Options{Transform: tc.transform, TopK: &TopK{Limit: tc.limit, Order: tc.order}})
			for !w.Step(13) {
				if int64(len(w.counts)) > max(tc.limit, 0) {
					t.Fatalf("holding %d distinct rows with limit %d", len(w.counts), tc.limit)
				}
			}
			got, err := w.Result()
			if err != nil {
				t.Fatal(err)
			}
			if finish(got) != finish(want) {
				t.Fatalf("top-k walk %s\nwant %s", finish(got), finish(want))
			}
		})
	}
}
