package controller

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

var invalidPlan = &computepb.PeekError{Sqlstate: "XX000", Message: "invalid dataflow: invalid dataflow t9 (one-shot): build 0: unknown id u99"}

// wantRefusal checks that err is the refusal itself, not the replica's
// "unknown index" echo.
func wantRefusal(t *testing.T, err error) {
	t.Helper()
	var pe *PeekError
	if !errors.As(err, &pe) || pe.SQLState != invalidPlan.GetSqlstate() || pe.Message != invalidPlan.GetMessage() {
		t.Fatalf("peek error %v, want the refusal %q (SQLSTATE %s)", err, invalidPlan.GetMessage(), invalidPlan.GetSqlstate())
	}
}

// pendingPeeks counts the controller's pending peeks of the cluster.
func (h *harness) pendingPeeks() int {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	return len(h.c.clusters["default"].peeks)
}

// refusedOn reports whether replica name recorded a refusal of export id.
func (h *harness) refusedOn(name, id string) bool {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	r := h.c.clusters["default"].replicas[name]
	_, ok := r.refused[gid(id)]
	return ok
}

// A one-shot read whose dataflow the replicas refuse fails with the
// refusal's SQLSTATE and message, once, whether the peek was pending when
// the refusal arrived or was sent after it, with one or several processes
// and replicas; the controller forgets the refusal with the dataflow and
// keeps serving.
func TestRefusedOneShotDataflowFailsItsReadWithTheRefusal(t *testing.T) {
	cases := []struct {
		name      string
		replicas  int
		processes int
		// deferred: the refusal arrives while the peek is pending and the
		// replica never answers it; otherwise it comes as the dataflow is
		// created and the replica answers the peek "unknown index".
		deferred bool
	}{
		{"pending when refused", 1, 1, true},
		{"pending when refused, two processes", 1, 2, true},
		{"pending when refused, two replicas", 2, 1, true},
		{"refused as created", 1, 2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			var fakes []*fakeReplica
			var names []string
			for i := range tc.replicas {
				names = append(names, fmt.Sprintf("r%d", i+1))
				fakes = append(fakes, h.addReplica(names[i], tc.processes))
			}
			if _, err := h.c.CreateDataflow("default", testDataflow("u1", nil, nil)); err != nil {
				t.Fatal(err)
			}
			for _, f := range fakes {
				f.report("u1", frontier.At(5000))
			}
			h.eventually("u1 readable", func() bool { cs, _ := h.collection("u1"); return cs.Write == "[5000]" })
			for _, f := range fakes {
				f.mu.Lock()
				f.refuse, f.deferRefusal = invalidPlan, tc.deferred
				f.mu.Unlock()
			}
			id := h.c.AllocateTransientID().String()
			// Generous: only a failing run (a peek the refusal did not end)
			// waits this long.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := h.c.PeekDataflow(ctx, "default", testDataflow(id, []string{"u1"}, nil), Serializable, nil)
			wantRefusal(t, err)
			if n := h.pendingPeeks(); n != 0 {
				t.Fatalf("%d peeks still pending after the refusal", n)
			}
			// The dataflow goes, and its refusal with it.
			h.eventually("refused dataflow forgotten", func() bool {
				_, ok := h.collection(id)
				return !ok && !h.refusedOn(names[0], id)
			})
			// The controller still serves reads of what the replicas built.
			for _, f := range fakes {
				f.mu.Lock()
				f.refuse = nil
				f.rows["u1"] = make([][]*computepb.RowCount, tc.processes)
				f.mu.Unlock()
			}
			if _, err := h.c.Peek(context.Background(), PeekRequest{Cluster: "default", Target: gid("u1")}); err != nil {
				t.Fatalf("peek after a refusal: %v", err)
			}
		})
	}
}

// A peek sent after the replica refused the dataflow of its target (here
// a maintained index) fails with the refusal, not "unknown index"; the
// refusal lasts for the connection and a peek of a built index is
// unaffected.
func TestPeekAfterRefusalFailsWithTheRefusal(t *testing.T) {
	h, f := setupIndex(t)
	f.mu.Lock()
	f.refuse = invalidPlan
	f.mu.Unlock()
	if _, err := h.c.CreateDataflow("default", testDataflow("u2", nil, nil)); err != nil {
		t.Fatal(err)
	}
	h.eventually("refusal recorded", func() bool { return h.refusedOn("r1", "u2") })
	for range 2 {
		_, err := h.c.Peek(context.Background(), PeekRequest{Cluster: "default", Target: gid("u2"), Replica: "r1"})
		wantRefusal(t, err)
	}
	f.mu.Lock()
	f.peekErr = &computepb.PeekError{Sqlstate: "22012", Message: "division by zero"}
	f.mu.Unlock()
	var pe *PeekError
	if _, err := h.c.Peek(context.Background(), PeekRequest{Cluster: "default", Target: gid("u1")}); !errors.As(err, &pe) || pe.SQLState != "22012" {
		t.Fatalf("peek of a built index: %v, want its own error 22012", err)
	}
}
