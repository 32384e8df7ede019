package logging

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

func TestSourceEmitsSnapshotDifferences(t *testing.T) {
	var now atomic.Uint64
	now.Store(1000)
	var current []int64
	snap := func(dst []row.Row) []row.Row {
		for _, v := range current {
			dst = append(dst, row.Pack(row.Int64(v)))
		}
		return dst
	}
	s := NewSource(snap, time.Hour, func() frontier.Time { return frontier.Time(now.Load()) }, func() {})
	defer s.Close()
	show := func(ups []dataflow.Update) string {
		var out []string
		for _, u := range ups {
			out = append(out, fmt.Sprintf("%s@%d%+d", row.Row(u.Val), u.Time, u.Diff))
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	steps := []struct {
		now       uint64
		rows      []int64
		want      string
		wantUpper frontier.Frontier
	}{
		{1000, []int64{1, 2}, "(1)@1000+1 (2)@1000+1", frontier.At(1001)},
		// Before the interval has passed nothing is refreshed.
		{1000 + 3_599_999, []int64{2, 3}, "", frontier.At(1001)},
		{1000 + 3_600_000, []int64{2, 3}, "(1)@3601000-1 (3)@3601000+1", frontier.At(3601001)},
		// A clock going backwards never moves times backwards.
		{500 + 2*3_600_000, []int64{3}, "", frontier.At(3601001)},
		{1000 + 2*3_600_000, []int64{3}, "(2)@7201000-1", frontier.At(7201001)},
	}
	for i, st := range steps {
		now.Store(st.now)
		current = st.rows
		ups, upper, err := s.Poll(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := show(ups); got != st.want || upper != st.wantUpper {
			t.Fatalf("step %d: got %q upper %v, want %q upper %v", i, got, upper, st.want, st.wantUpper)
		}
	}
}

func TestDataflowDescriptionsValidate(t *testing.T) {
	for i, rel := range Relations() {
		d, err := Dataflow(rel, plan.System(uint64(i+1)), time.Second, frontier.At(5))
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
	}
	if _, err := Dataflow("nope", plan.System(1), time.Second, frontier.At(0)); err == nil {
		t.Fatal("unknown relation accepted")
	}
}
