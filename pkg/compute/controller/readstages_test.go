package controller

import (
	"context"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/readtrace"
)

// TestReadRecordsControllerStagesOnce: a fast-path and a one-shot read
// each add the controller's stages (admission, timestamp, controller,
// replica) to the statement's trace exactly once, and no other stage.
func TestReadRecordsControllerStagesOnce(t *testing.T) {
	h, f := setupIndex(t)
	f.mu.Lock()
	f.autoReport = true
	f.rows["u1"] = [][]*computepb.RowCount{{{Row: row.Pack(row.Int64(1)), Count: 1}}}
	f.mu.Unlock()
	for _, kind := range []readKind{readPeek, readOneShot} {
		t.Run(kind.String(), func(t *testing.T) {
			tr := readtrace.New()
			ctx := readtrace.With(context.Background(), tr)
			if kind == readOneShot {
				id := h.c.AllocateTransientID().String()
				f.mu.Lock()
				f.rows[id] = [][]*computepb.RowCount{{}}
				f.mu.Unlock()
				if _, err := h.c.PeekDataflow(ctx, "default", testDataflow(id, []string{"u1"}, nil), Serializable, nil); err != nil {
					t.Fatal(err)
				}
			} else if _, err := h.c.Peek(ctx, PeekRequest{Cluster: "default", Target: gid("u1"), Isolation: Serializable}); err != nil {
				t.Fatal(err)
			}
			for _, s := range readtrace.Stages() {
				want := 0
				switch s {
				case readtrace.Admission, readtrace.Timestamp, readtrace.Controller, readtrace.Replica:
					want = 1
				}
				if got := tr.Count(s); got != want {
					t.Errorf("stage %s recorded %d times, want %d", s, got, want)
				}
			}
		})
	}
}
