package controller

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

func spillFiles(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// TestSpilledPeek: a stashed answer of a two-process replica, with a spill
// directory, comes back as a SpilledRows over a file, with the finishing
// applied as rows are read; the file is gone once closed. With an order
// the rows are read back into Rows at once. Without a spill directory the
// same answer arrives in Rows.
func TestSpilledPeek(t *testing.T) {
	h := newHarness(t)
	f := h.addReplica("r1", 2)
	if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
		t.Fatal(err)
	}
	f.reportFrom(0, "u1", frontier.At(3000))
	f.reportFrom(1, "u1", frontier.At(3000))
	h.eventually("readable", func() bool { cs, _ := h.collection("u1"); return cs.Write == "[3000]" })
	r := func(k int64, s string, n uint64) *computepb.RowCount {
		return &computepb.RowCount{Row: row.Pack(row.Int64(k), row.Text(s)), Count: n}
	}
	f.mu.Lock()
	f.rows["u1"] = [][]*computepb.RowCount{
		{r(1, "a", 2), r(4, "d", 1), r(5, "e", 1), r(7, "g", 1), r(8, "h", 1)},
		{r(2, "b", 1), r(3, "c", 1), r(6, "f", 3)},
	}
	f.stashChunk = 2
	f.mu.Unlock()
	limit := int64(4)
	for _, tc := range []struct {
		name      string
		finishing *plan.Finishing
		spill     bool
		want      []string
		count     int64 // when want is nil: the rows' total multiplicity
	}{
		{name: "all", spill: true, want: []string{"(1, 'a')x2", "(4, 'd')x1", "(5, 'e')x1", "(7, 'g')x1", "(8, 'h')x1", "(2, 'b')x1", "(3, 'c')x1", "(6, 'f')x3"}},
		{name: "offset limit project", spill: true, finishing: &plan.Finishing{Offset: 1, Limit: &limit, Project: []int{1}},
			count: 4},
		{name: "ordered", spill: true, finishing: &plan.Finishing{Order: []plan.ColumnOrder{{Column: 0, Desc: true}}, Limit: &limit},
			want: []string{"(8, 'h')x1", "(7, 'g')x1", "(6, 'f')x2"}},
		{name: "no spill", want: []string{"(1, 'a')x2", "(4, 'd')x1", "(5, 'e')x1", "(7, 'g')x1", "(8, 'h')x1", "(2, 'b')x1", "(3, 'c')x1", "(6, 'f')x3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			req := PeekRequest{Cluster: "default", Target: gid("u1"), Finishing: tc.finishing}
			if tc.spill {
				req.SpillDir = dir
			}
			res, err := h.c.Peek(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			rows := res.Rows
			if res.Spilled != nil {
				if orderLen(tc.finishing) > 0 || !tc.spill {
					t.Fatal("spilled although the rows must be ordered or no spill was asked for")
				}
				if spillFiles(t, dir) != 1 {
					t.Fatalf("%d spill files while reading, want 1", spillFiles(t, dir))
				}
				rows = drainSpilled(t, res.Spilled)
			} else if tc.spill && orderLen(tc.finishing) == 0 {
				t.Fatal("a stashed answer with a spill directory came back in memory")
			}
			if tc.spill && spillFiles(t, dir) != 0 {
				t.Fatalf("%d spill files left", spillFiles(t, dir))
			}
			if tc.want == nil {
				var n int64
				for _, rc := range rows {
					n += rc.Count
					if ds, err := row.Row(rc.Row).Unpack(); err != nil || len(ds) != 1 {
						t.Fatalf("row %s not projected to one column", row.Row(rc.Row))
					}
				}
				if n != tc.count {
					t.Fatalf("%d rows, want %d", n, tc.count)
				}
				return
			}
			got := fmtRows(rows)
			// Processes' chunks interleave in any order: compare as sets.
			if len(got) != len(tc.want) || !sameSet(got, tc.want) && orderLen(tc.finishing) == 0 {
				t.Fatalf("rows %v, want %v", got, tc.want)
			}
			if orderLen(tc.finishing) > 0 && !equalStrings(got, tc.want) {
				t.Fatalf("rows %v, want %v", got, tc.want)
			}
		})
	}
	// A peek abandoned while its chunks arrive leaves no file behind.
	t.Run("abandoned mid-stash", func(t *testing.T) {
		dir := t.TempDir()
		f.mu.Lock()
		f.stashStall = true
		f.mu.Unlock()
		defer func() { f.mu.Lock(); f.stashStall = false; f.mu.Unlock() }()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := h.c.Peek(ctx, PeekRequest{Cluster: "default", Target: gid("u1"), SpillDir: dir})
			done <- err
		}()
		h.eventually("first chunks spilled", func() bool { return spillFiles(t, dir) == 1 })
		time.Sleep(20 * time.Millisecond)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("abandoned peek: %v", err)
		}
		if n := spillFiles(t, dir); n != 0 {
			t.Fatalf("%d spill files left after the peek was abandoned", n)
		}
	})
}

func sameSet(a, b []string) bool {
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// TestSpilledOneShotPeek: a slow-path read (a one-shot dataflow) with a
// spill directory spills its stashed answer like an index peek does, and
// the file goes when the reader closes it.
func TestSpilledOneShotPeek(t *testing.T) {
	h := newHarness(t)
	f := h.addReplica("r1", 2)
	if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
		t.Fatal(err)
	}
	f.reportFrom(0, "u1", frontier.At(3000))
	f.reportFrom(1, "u1", frontier.At(3000))
	h.eventually("readable", func() bool { cs, _ := h.collection("u1"); return cs.Write == "[3000]" })
	id := h.c.AllocateTransientID().String()
	var want []string
	f.mu.Lock()
	f.rows[id] = make([][]*computepb.RowCount, 2)
	for i := range 10 {
		rc := &computepb.RowCount{Row: row.Pack(row.Int64(int64(i))), Count: 1}
		f.rows[id][i%2] = append(f.rows[id][i%2], rc)
		want = append(want, fmtRows([]row.RowCount{{Row: rc.Row, Count: 1}})...)
	}
	f.stashChunk = 2
	f.mu.Unlock()
	dir := t.TempDir()
	res, err := h.c.PeekDataflowOn(context.Background(), "default", "", testDataflow(id, []string{"u1"}, nil), Serializable, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.Spilled == nil {
		t.Fatalf("a stashed one-shot answer came back in memory: %d rows", len(res.Rows))
	}
	rows := drainSpilled(t, res.Spilled)
	if got := fmtRows(rows); !sameSet(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	if n := spillFiles(t, dir); n != 0 {
		t.Fatalf("%d spill files left", n)
	}
}

// drainSpilled reads a spilled result to its end and closes it.
func drainSpilled(t *testing.T, s *SpilledRows) []row.RowCount {
	t.Helper()
	defer s.Close()
	var rows []row.RowCount
	for {
		rc, ok, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return rows
		}
		rows = append(rows, rc)
	}
}

func orderLen(f *plan.Finishing) int {
	if f == nil {
		return 0
	}
	return len(f.Order)
}
