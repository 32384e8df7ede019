package server

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

func TestMemoryGuardCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		guard *MemoryGuard
		want  bool // refused
	}{
		{"no guard", nil, false},
		{"no limit", &MemoryGuard{Used: func() uint64 { return 1 << 40 }}, false},
		{"below", &MemoryGuard{Limit: 1000, Used: func() uint64 { return 899 }}, false},
		{"at the threshold", &MemoryGuard{Limit: 1000, Used: func() uint64 { return 900 }}, false},
		{"above", &MemoryGuard{Limit: 1000, Used: func() uint64 { return 901 }}, true},
		{"custom fraction", &MemoryGuard{Limit: 1000, Fraction: 0.5, Used: func() uint64 { return 501 }}, true},
		{"real memory, huge limit", &MemoryGuard{Limit: 1 << 50}, false},
		{"real memory, tiny limit", &MemoryGuard{Limit: 1}, true},
	} {
		err := tc.guard.Check()
		if (err != nil) != tc.want {
			t.Errorf("%s: %v, want refused %v", tc.name, err, tc.want)
		}
		if err != nil && sqlstate(err) != CodeOutOfMemory {
			t.Errorf("%s: code %s", tc.name, sqlstate(err))
		}
	}
}

// TestPeekRefusedNearMemoryLimit: above the guard's threshold a peek is
// answered with 53200 without reaching the runtime; below it, served.
func TestPeekRefusedNearMemoryLimit(t *testing.T) {
	var used atomic.Uint64
	used.Store(950)
	h := newHarnessConfig(t, Config{Memory: &MemoryGuard{Limit: 1000, Used: used.Load}})
	s := h.ready("n1", &computepb.CreateInstance{}, df1)
	h.rt.expect(t, "create d1")
	s.send(peekCmd(uuidN(1), "u1", 6))
	resp := s.recv().GetPeekResponse()
	if e := resp.GetError(); e.GetSqlstate() != CodeOutOfMemory || !strings.Contains(e.GetMessage(), "memory limit") {
		t.Fatalf("peek near the limit: %v", resp)
	}
	h.rt.expectNone(t)
	used.Store(100)
	s.send(peekCmd(uuidN(2), "u1", 6))
	h.rt.expect(t, "peek "+uuidN(2))
	h.srv.Deliver(&PeekResult{UUID: uuidN(2), Rows: []row.RowCount{{Row: row.Pack(row.Int64(1)), Count: 1}}})
	if rows := s.recv().GetPeekResponse().GetRows(); len(rows.GetRows()) != 1 {
		t.Fatalf("peek below the limit: %v", rows)
	}
}

// TestDataflowRefusedNearMemoryLimit: with Dataflows set, above the
// threshold a create_dataflow (sent while running, or replayed at
// initialization) is refused with 53200 naming the dataflow, without
// reaching the runtime, and serving continues; below it, or without
// Dataflows, the dataflow is created.
func TestDataflowRefusedNearMemoryLimit(t *testing.T) {
	df2 := testDataflow{Name: "d2", Indexes: []string{"u2"}, AsOf: 5, Plan: "p2"}
	for _, tc := range []struct {
		name      string
		dataflows bool
		replayed  bool // sent before init_complete
		refused   bool
	}{
		{name: "running", dataflows: true, refused: true},
		{name: "replayed at initialization", dataflows: true, replayed: true, refused: true},
		{name: "reads only", dataflows: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var used atomic.Uint64
			used.Store(950)
			h := newHarnessConfig(t, Config{Memory: &MemoryGuard{Limit: 1000, Used: used.Load, Dataflows: tc.dataflows}})
			var s *stream
			if tc.replayed {
				s = h.ready("n1", &computepb.CreateInstance{}, df2)
			} else {
				used.Store(100)
				s = h.ready("n1", &computepb.CreateInstance{})
				used.Store(950)
				s.send(createDataflow(df2))
			}
			if !tc.refused {
				h.rt.expect(t, "create d2")
				return
			}
			e := commandError(t, s.recv(), CodeOutOfMemory)
			if idString(e.GetCollection()) != "u2" || !strings.Contains(e.GetMessage(), "refusing a new dataflow") {
				t.Fatalf("refusal %v, want it to name d2 and say a dataflow was refused", e)
			}
			h.rt.expectNone(t)
			used.Store(100)
			s.send(createDataflow(testDataflow{Name: "d3", Indexes: []string{"u3"}, AsOf: 5, Plan: "p3"}))
			h.rt.expect(t, "create d3")
		})
	}
}

// TestMemoryReportedToTheController: with Report set (a process of a
// multi-process replica) the process refuses no dataflow itself: it
// reports its memory first on each connection and then only when it
// crosses the threshold, so the controller can hold new dataflows back
// for all processes alike.
func TestMemoryReportedToTheController(t *testing.T) {
	var used atomic.Uint64
	used.Store(950)
	h := newHarnessConfig(t, Config{Memory: &MemoryGuard{Limit: 1000, Used: used.Load, Report: true, Interval: time.Millisecond}})
	s := h.ready("n1", &computepb.CreateInstance{})
	wantStatus := func(near bool, n uint64) {
		t.Helper()
		m := s.recv().GetMemoryStatus()
		if m == nil || m.GetNearLimit() != near || m.GetUsedBytes() != n || m.GetLimitBytes() != 1000 {
			t.Fatalf("memory status %v, want near_limit %v with %d of 1000 bytes", m, near, n)
		}
	}
	wantStatus(true, 950)
	s.send(createDataflow(testDataflow{Name: "d2", Indexes: []string{"u2"}, AsOf: 5, Plan: "p2"}))
	h.rt.expect(t, "create d2") // the controller decides, not the process
	used.Store(951)
	s.expectNone() // still near: nothing new to report
	used.Store(100)
	wantStatus(false, 100)
	used.Store(990)
	wantStatus(true, 990)
}

// TestMemoryReportedWithoutALimit: a reporting process without a memory
// limit still reports on every connection (limit 0, never near it), since
// the controller sends a multi-process replica no dataflow before each of
// its processes reported; it then samples nothing and reports nothing
// more.
func TestMemoryReportedWithoutALimit(t *testing.T) {
	h := newHarnessConfig(t, Config{Memory: &MemoryGuard{Used: func() uint64 { return 5000 }, Report: true, Interval: time.Millisecond}})
	s := h.ready("n1", &computepb.CreateInstance{})
	m := s.recv().GetMemoryStatus()
	if m == nil || m.GetNearLimit() || m.GetLimitBytes() != 0 || m.GetUsedBytes() != 5000 {
		t.Fatalf("memory status %v, want 5000 bytes used of no limit, not near it", m)
	}
	s.send(createDataflow(testDataflow{Name: "d1", Indexes: []string{"u1"}, AsOf: 5, Plan: "p1"}))
	h.rt.expect(t, "create d1")
	s.expectNone()
}
