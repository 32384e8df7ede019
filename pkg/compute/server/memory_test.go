package server

import (
	"strings"
	"sync/atomic"
	"testing"

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
	h.srv.Deliver(&PeekResult{UUID: uuidN(2), Rows: []RowCount{{Row: row.Pack(row.Int64(1)), Count: 1}}})
	if rows := s.recv().GetPeekResponse().GetRows(); len(rows.GetRows()) != 1 {
		t.Fatalf("peek below the limit: %v", rows)
	}
}
