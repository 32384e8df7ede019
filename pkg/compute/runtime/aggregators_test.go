package runtime

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

func TestFrontierTrackerMeetClampAndMonotone(t *testing.T) {
	tr := newFrontierTracker[string](2)
	tr.add("u1", frontier.At(10))
	type step struct {
		worker      int
		write       frontier.Frontier
		wantReport  bool
		wantWriteAt frontier.Frontier
	}
	steps := []step{
		{0, frontier.At(3), true, frontier.At(10)}, // first report clamped to as_of
		{1, frontier.At(5), false, frontier.Frontier{}},
		{0, frontier.At(20), false, frontier.Frontier{}}, // worker 1 still at 5
		{1, frontier.At(15), true, frontier.At(15)},
		{1, frontier.At(12), false, frontier.Frontier{}}, // regression ignored
		{1, frontier.Closed(), true, frontier.At(20)},
		{0, frontier.Closed(), true, frontier.Closed()},
	}
	for i, s := range steps {
		got, ok := tr.update("u1", s.worker, s.write, s.write, nil)
		if ok != s.wantReport || (ok && got.Write != s.wantWriteAt) {
			t.Fatalf("step %d: got %v %v, want report=%v write=%v", i, got, ok, s.wantReport, s.wantWriteAt)
		}
	}
	if !tr.remove("u1", nil) || tr.remove("u1", nil) {
		t.Fatal("remove")
	}
	if _, ok := tr.update("u1", 0, frontier.At(99), frontier.At(99), nil); ok {
		t.Fatal("report for a removed collection")
	}
}

func TestPeekAggregatorExactlyOnce(t *testing.T) {
	rows := func(vs ...int64) []peek.RowCount {
		var out []peek.RowCount
		for _, v := range vs {
			out = append(out, peek.RowCount{Row: row.Pack(row.Int64(v)), Count: 1})
		}
		return out
	}
	a := newPeekAggregator(2)
	if err := a.add("p"); err != nil {
		t.Fatal(err)
	}
	if err := a.add("p"); err == nil {
		t.Fatal("duplicate uuid accepted")
	}
	if _, _, _, done := a.finish("p", rows(1), nil, 0); done {
		t.Fatal("answered after one of two workers")
	}
	resp, _, _, done := a.finish("p", rows(2, 1), nil, 0)
	if !done || resp.Error != nil || fmt.Sprint(len(resp.Rows)) != "2" || resp.Rows[0].Count != 2 {
		t.Fatalf("got %+v", resp)
	}
	if _, _, done := a.cancel("p"); done {
		t.Fatal("cancel after the answer produced a second response")
	}
	// Cancel first: the later worker answers are swallowed.
	_ = a.add("q")
	if resp, _, done := a.cancel("q"); !done || !resp.Canceled {
		t.Fatal("cancel")
	}
	if _, _, _, done := a.finish("q", nil, nil, 0); done {
		t.Fatal("answer after cancel")
	}
	// One worker's error fails the peek.
	_ = a.add("r")
	boom := errors.New("boom")
	a.finish("r", nil, boom, 0)
	if resp, _, _, done := a.finish("r", rows(1), nil, 0); !done || !errors.Is(resp.Error, boom) {
		t.Fatalf("got %+v", resp)
	}
}

func TestSubscribeMerger(t *testing.T) {
	m := newSubscribeMerger(2, frontier.At(5))
	r := func(v int64) []byte { return row.Pack(row.Int64(v)) }
	if _, ok := m.report(0, []UpdateRow{{Row: r(1), Time: 5, Diff: 1}, {Row: r(2), Time: 7, Diff: 1}}, frontier.At(8), nil); ok {
		t.Fatal("released before worker 1 advanced")
	}
	b, ok := m.report(1, []UpdateRow{{Row: r(1), Time: 5, Diff: 1}, {Row: r(3), Time: 6, Diff: 1}, {Row: r(3), Time: 6, Diff: -1}}, frontier.At(6), nil)
	if !ok || b.Lower != frontier.At(5) || b.Upper != frontier.At(6) || len(b.Updates) != 1 || b.Updates[0].Diff != 2 {
		t.Fatalf("got %+v %v", b, ok)
	}
	b, ok = m.report(1, nil, frontier.Closed(), nil)
	if !ok || b.Lower != frontier.At(6) || b.Upper != frontier.At(8) || len(b.Updates) != 1 || b.Updates[0].Time != 7 {
		t.Fatalf("got %+v %v", b, ok)
	}
	b, ok = m.report(0, nil, frontier.Closed(), nil)
	if !ok || !b.Upper.IsClosed() || len(b.Updates) != 0 {
		t.Fatalf("got %+v %v", b, ok)
	}
	if _, ok := m.report(0, nil, frontier.Closed(), nil); ok {
		t.Fatal("report after closed")
	}
}
