package controller

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestControllerEnforcesMaxResultSize: each process of a two-process
// replica answers within max_result_size, but the replica's whole answer
// does not: the controller fails the peek with 54000, spilled or not,
// and leaves no spill file behind.
func TestControllerEnforcesMaxResultSize(t *testing.T) {
	h := newHarness(t)
	f := h.addReplica("r1", 2)
	if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
		t.Fatal(err)
	}
	f.reportFrom(0, "u1", frontier.At(3000))
	f.reportFrom(1, "u1", frontier.At(3000))
	h.eventually("readable", func() bool { cs, _ := h.collection("u1"); return cs.Write == "[3000]" })
	var parts [2][]*computepb.RowCount
	var size uint64
	for i := range 40 {
		rc := &computepb.RowCount{Row: row.Pack(row.Int64(int64(i)), row.Text("some text to make it longer")), Count: 1}
		parts[i%2] = append(parts[i%2], rc)
		size += uint64(len(rc.Row))
	}
	f.mu.Lock()
	f.rows["u1"] = [][]*computepb.RowCount{parts[0], parts[1]}
	f.stashChunk = 4
	f.mu.Unlock()
	for _, tc := range []struct {
		name    string
		max     uint64
		spill   bool
		wantErr bool
	}{
		{"spilled over", size - 1, true, true},
		{"in memory over", size - 1, false, true},
		{"spilled at the limit", size, true, false},
		{"unbounded", 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.c.SetParameter(ParamMaxResultSize, strconv.FormatUint(tc.max, 10))
			dir := t.TempDir()
			req := PeekRequest{Cluster: "default", Target: gid("u1")}
			if tc.spill {
				req.SpillDir = dir
			}
			res, err := h.c.Peek(context.Background(), req)
			if tc.wantErr {
				var pe *PeekError
				if !errors.As(err, &pe) || pe.SQLState != "54000" {
					t.Fatalf("got %v, want a 54000 peek error", err)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if res.Spilled != nil {
				if n := len(drainSpilled(t, res.Spilled)); n != 40 {
					t.Fatalf("%d rows, want 40", n)
				}
			}
			if n := spillFiles(t, dir); n != 0 {
				t.Fatalf("%d spill files left", n)
			}
		})
	}
}
