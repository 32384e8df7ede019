package scripttest

import (
	"slices"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

func TestSplitRows(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  bool
	}{
		{"(1) (2)x3", []string{"(1)", "(2)x3"}, false},
		{"('a b', NULL) (2)", []string{"('a b', NULL)", "(2)"}, false},
		{"('x)y')", []string{"('x)y')"}, false},
		{"", nil, false},
		{"(1", nil, true},
		{"1)", nil, true},
	}
	for _, tt := range tests {
		got, err := splitRows(tt.in)
		if (err != nil) != tt.err || !slices.Equal(got, tt.want) {
			t.Errorf("splitRows(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if n := countRows([]string{"(1)", "(2)x3", "('a)x2')"}); n != 5 {
		t.Errorf("countRows = %d, want 5", n)
	}
}

func TestExpandAndRest(t *testing.T) {
	rn := &runner{vars: map[string]int64{"START": 1000}}
	got, err := rn.expand("peek p u1 ${START+500} ${START-1} ${START}")
	if err != nil || got != "peek p u1 1500 999 1000" {
		t.Fatalf("expand = %q, %v", got, err)
	}
	if _, err := rn.expand("${NOPE}"); err == nil {
		t.Fatal("unknown variable expanded")
	}
	if r := restAfter("expect c1 rows p1 (1) ('a b')", 4); r != "(1) ('a b')" {
		t.Fatalf("restAfter = %q", r)
	}
}

// TestInvariantChecks feeds responses that break the protocol's promises
// to the checker and expects each to be reported.
func TestInvariantChecks(t *testing.T) {
	fr := func(id string, write frontier.Frontier) *computepb.Response {
		w := &computepb.Frontier{Closed: write.IsClosed()}
		if tm, ok := write.Time(); ok {
			w.Time = uint64(tm)
		}
		return &computepb.Response{Kind: &computepb.Response_Frontiers{Frontiers: &computepb.Frontiers{Id: wireID(id), Write: w}}}
	}
	peek := func(uuid string, r *computepb.PeekResponse) *computepb.Response {
		r.Uuid = uuid
		return &computepb.Response{Kind: &computepb.Response_PeekResponse{PeekResponse: r}}
	}
	rows := &computepb.PeekResponse{Result: &computepb.PeekResponse_Rows{Rows: &computepb.PeekRows{}}}
	canceled := &computepb.PeekResponse{Result: &computepb.PeekResponse_Canceled{Canceled: &computepb.PeekCanceled{}}}
	chunk := func(seq uint64, final bool) *computepb.PeekResponse {
		return &computepb.PeekResponse{Result: &computepb.PeekResponse_Stashed{Stashed: &computepb.StashedChunk{Sequence: seq, Final: final}}}
	}
	tests := []struct {
		name      string
		responses []*computepb.Response
		violation string
	}{
		{"advancing frontiers", []*computepb.Response{fr("u1", frontier.At(1)), fr("u1", frontier.At(2)), fr("u1", frontier.Closed())}, ""},
		{"regressing frontier", []*computepb.Response{fr("u1", frontier.At(2)), fr("u1", frontier.At(1))}, "did not advance"},
		{"repeated frontier", []*computepb.Response{fr("u1", frontier.At(2)), fr("u1", frontier.At(2))}, "did not advance"},
		{"one response", []*computepb.Response{peek("a", rows)}, ""},
		{"two responses", []*computepb.Response{peek("a", rows), peek("a", rows)}, "second response"},
		{"canceled unasked", []*computepb.Response{peek("a", canceled)}, "without a CancelPeek"},
		{"chunks in order", []*computepb.Response{peek("a", chunk(0, false)), peek("a", chunk(1, true))}, ""},
		{"chunk skipped", []*computepb.Response{peek("a", chunk(0, false)), peek("a", chunk(2, true))}, "want 1"},
		{"after final chunk", []*computepb.Response{peek("a", chunk(0, true)), peek("a", rows)}, "second response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &stream{frontiers: map[string]*[3]frontier.Frontier{}, reported: map[string]*[3]bool{},
				terminal: map[string]bool{}, stashSeq: map[string]uint64{}, cancelled: map[string]bool{}}
			for _, r := range tt.responses {
				st.check(r)
			}
			v := strings.Join(st.violations, "; ")
			if tt.violation == "" && v != "" || tt.violation != "" && !strings.Contains(v, tt.violation) {
				t.Fatalf("violations %q, want %q", v, tt.violation)
			}
		})
	}
}
