package render

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// TestFlattenInSlices reads an index through Flatten with tiny fuel, so
// every walk takes many schedules, and checks that (1) the collection read
// equals the index's contents at every time, advanced to as_of, (2) no
// update arrives behind the frontier the consumer already saw (the walk
// holds the frontier at its lower bound), and (3) the walk was sliced.
func TestFlattenInSlices(t *testing.T) {
	tests := []struct {
		workers, fuel int
		asOf          frontier.Time
	}{
		{1, 1, 0}, {1, 3, 2}, {2, 2, 0}, {2, 5, 4}, {2, 1 << 20, 3},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("W%d/fuel%d/asof%d", tc.workers, tc.fuel, tc.asOf), func(t *testing.T) {
			testFlattenInSlices(t, tc.workers, tc.fuel, tc.asOf)
		})
	}
}

func testFlattenInSlices(t *testing.T, workers, fuel int, asOf frontier.Time) {
	src, idxID := plan.User(1), plan.User(2)
	tbl := NewMemoryTable()
	var all []dataflow.Update
	// Times 1..6: inserts of keys, some retracted later.
	for ts := frontier.Time(1); ts <= 6; ts++ {
		var ups []dataflow.Update
		for k := 0; k < 7; k++ {
			ups = append(ups, dataflow.Update{Val: row.Pack(row.Int64(int64(ts)*10+int64(k)), row.Int64(int64(k))), Time: ts, Diff: 1})
		}
		if ts > 2 {
			ups = append(ups, dataflow.Update{Val: row.Pack(row.Int64(int64(ts-2)*10), row.Int64(0)), Time: ts, Diff: -1})
		}
		all = append(all, ups...)
	}
	ws, err := dataflow.New(dataflow.Config{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		failures []error
		indexes  = map[int]*Index{}
		got      []dataflow.Update
		payloads int
		behind   []string
		done     = map[int]bool{}
	)
	fail := func(err error) { mu.Lock(); failures = append(failures, err); mu.Unlock() }
	built := make(chan error, 2*workers)
	ws.Install("index", func(b *dataflow.Builder) error {
		out, err := Build(b, &plan.DataflowDescription{
			SourceImports: []plan.SourceImport{{ID: src}},
			IndexExports:  []plan.IndexExport{{ID: idxID, On: src, Key: []expr.Expr{expr.Column(1)}}},
			AsOf:          frontier.At(0), Until: frontier.Closed(),
		}, Env{Sources: MemorySources{src: tbl}, Fail: fail})
		if err != nil {
			return err
		}
		mu.Lock()
		indexes[b.Worker().Index()] = out.Indexes[idxID]
		mu.Unlock()
		return nil
	}, func(_ *dataflow.Worker, err error) { built <- err })
	ws.Install("reader", func(b *dataflow.Builder) error {
		mu.Lock()
		idx := indexes[b.Worker().Index()]
		mu.Unlock()
		imp := Import(b, "idx", idx.Ok)
		rows := flatten(b, "flatten", imp, frontier.At(asOf), false, fuel, fail)
		seen := frontier.Minimum()
		w := b.Worker().Index()
		b.AddOperator("collect", []dataflow.Connection{{From: rows}}, 0, dataflow.LogicFunc(func(op *dataflow.Operator) {
			mu.Lock()
			defer mu.Unlock()
			for _, d := range op.Input(0).Take() {
				payloads++
				for _, u := range d.([]dataflow.Update) {
					if !seen.LessEqualTime(u.Time) {
						behind = append(behind, fmt.Sprintf("%s at %d behind frontier %v", row.Row(u.Val), u.Time, seen))
					}
					got = append(got, u)
				}
			}
			seen = op.InputFrontier()
			if seen.IsComplete(6) {
				done[w] = true
			}
		}))
		return nil
	}, func(_ *dataflow.Worker, err error) { built <- err })
	ctx, cancel := context.WithCancel(context.Background())
	ws.Start(ctx)
	defer func() { cancel(); ws.Stop() }()
	for range 2 * workers {
		if err := <-built; err != nil {
			t.Fatal(err)
		}
	}
	// The index advances one time at a time while the reader walks, so
	// walks overlap input progress.
	for ts := frontier.Time(1); ts <= 6; ts++ {
		var ups []dataflow.Update
		for _, u := range all {
			if u.Time == ts {
				ups = append(ups, u)
			}
		}
		if err := tbl.Append(ups, frontier.At(ts+1)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(ts%3) * time.Millisecond)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(done)
		mu.Unlock()
		if n == workers {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("reader never reached time 6")
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 {
		t.Fatal(failures)
	}
	if len(behind) > 0 {
		t.Fatalf("updates behind the frontier: %v", behind)
	}
	for ts := asOf; ts <= 6; ts++ {
		want, have := contentAt(all, ts, asOf), contentAt(got, ts, asOf)
		if want != have {
			t.Errorf("at %d: read %q, want %q", ts, have, want)
		}
	}
	// Each payload is one slice: with small fuel the walks were cut up.
	if rows := len(all); fuel < rows && payloads < rows/fuel/2 {
		t.Errorf("%d payloads for %d updates at fuel %d: the walk was not sliced", payloads, rows, fuel)
	}
}

// contentAt renders the collection of ups as of ts, times advanced to asOf
// first: "row xN" sorted.
func contentAt(ups []dataflow.Update, ts, asOf frontier.Time) string {
	sums := map[string]int64{}
	for _, u := range ups {
		if max(u.Time, asOf) <= ts {
			sums[row.Row(u.Val).String()] += u.Diff
		}
	}
	var out []string
	for r, d := range sums {
		if d != 0 {
			out = append(out, fmt.Sprintf("%s x%d", r, d))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}
