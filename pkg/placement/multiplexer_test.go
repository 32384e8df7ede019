package placement

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
)

// fakeRuntime records commands and, like a real runtime of its role,
// reports frontiers for every dataflow it receives (the non-renderer
// reports an empty copy, the way an unfiltered runtime would) and answers
// every peek it is given.
type fakeRuntime struct {
	name    string
	log     *[]string
	mu      *sync.Mutex
	respond func(runtime.Response)
}

func (f *fakeRuntime) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	*f.log = append(*f.log, f.name+":"+s)
}

func (f *fakeRuntime) CreateDataflow(desc plan.DataflowDescription) error {
	f.record("create " + desc.ID.String())
	for _, e := range desc.IndexExports {
		// A runtime that does not render the dataflow would, if
		// unfiltered, report a frontier stuck at the minimum.
		f.respond(&runtime.Frontiers{ID: e.ID, Write: frontier.Minimum(), Input: frontier.Minimum(), Output: frontier.Minimum()})
	}
	return nil
}
func (f *fakeRuntime) AllowCompaction(id plan.GlobalID, fr frontier.Frontier) error {
	f.record("compact " + id.String())
	return nil
}
func (f *fakeRuntime) UpdateConfiguration(map[string]string) error { return nil }
func (f *fakeRuntime) Peek(p runtime.Peek) {
	f.record("peek " + p.UUID)
	f.respond(&runtime.PeekResponse{UUID: p.UUID})
	f.respond(&runtime.PeekResponse{UUID: p.UUID}) // a buggy duplicate
}
func (f *fakeRuntime) CancelPeek(uuid string) { f.record("cancel " + uuid) }

type harness struct {
	mux  *Multiplexer
	log  []string
	out  []runtime.Response
	mu   sync.Mutex
	m, i *fakeRuntime
}

func newHarness(policy Policy, sealed SealedFunc) *harness {
	h := &harness{}
	var logMu sync.Mutex
	h.mux = mustMultiplexer(NewMultiplexer(func(r runtime.Response) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.out = append(h.out, r)
	}, policy, func(respondFor func(runtime.Role) func(runtime.Response)) (Runtimes, error) {
		h.m = &fakeRuntime{name: "m", log: &h.log, mu: &logMu, respond: respondFor(runtime.Maintenance)}
		h.i = &fakeRuntime{name: "i", log: &h.log, mu: &logMu, respond: respondFor(runtime.Interactive)}
		return Runtimes{Maintenance: h.m, Interactive: h.i, Sealed: sealed}, nil
	}))
	return h
}

func dataflow(id plan.GlobalID, class plan.DataflowClass) plan.DataflowDescription {
	return plan.DataflowDescription{ID: id, IndexExports: []plan.IndexExport{{ID: id}}, Class: class}
}

// checkInvariants returns the first violation of: frontiers of a
// collection only from its renderer (so none stuck at the minimum reach
// the controller for a collection the other runtime renders, here: every
// fake report is minimum, so any report must come from the owner), and
// exactly one PeekResponse per uuid.
func checkInvariants(h *harness, owners map[plan.GlobalID]runtime.Role, reporters map[*runtime.Frontiers]runtime.Role) error {
	seen := map[string]int{}
	for _, r := range h.out {
		switch r := r.(type) {
		case *runtime.PeekResponse:
			seen[r.UUID]++
			if seen[r.UUID] > 1 {
				return fmt.Errorf("peek %s answered %d times", r.UUID, seen[r.UUID])
			}
		case *runtime.Frontiers:
			if reporters[r] != owners[r.ID] {
				return fmt.Errorf("frontiers of %s reported by %v, rendered by %v", r.ID, reporters[r], owners[r.ID])
			}
		}
	}
	return nil
}

func runScenario(seed uint64, unfiltered bool) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	h := newHarness(RoutePolicyFor(rng.IntN(3)), func(plan.GlobalID, frontier.Time) bool { return rng.IntN(2) == 0 })
	h.mux.unfiltered = unfiltered
	owners := map[plan.GlobalID]runtime.Role{}
	reporters := map[*runtime.Frontiers]runtime.Role{}
	// Tag each frontier report with the runtime that produced it.
	for _, f := range []*fakeRuntime{h.m, h.i} {
		rt := runtime.Maintenance
		if f == h.i {
			rt = runtime.Interactive
		}
		inner := f.respond
		f.respond = func(r runtime.Response) {
			if fr, ok := r.(*runtime.Frontiers); ok {
				reporters[fr] = rt
			}
			inner(r)
		}
	}
	var ids []plan.GlobalID
	for step := range 60 {
		switch rng.IntN(3) {
		case 0:
			id, class := plan.User(uint64(step)), plan.ClassMaintained
			if rng.IntN(2) == 0 {
				id, class = plan.Transient(uint64(step)), plan.ClassOneShotRead
			}
			owners[id] = runtime.Maintenance
			if class == plan.ClassOneShotRead {
				owners[id] = runtime.Interactive
			}
			ids = append(ids, id)
			if err := h.mux.CreateDataflow(dataflow(id, class)); err != nil {
				return err
			}
		case 1:
			if len(ids) > 0 {
				h.mux.Peek(runtime.Peek{UUID: fmt.Sprint("p", step), Target: ids[rng.IntN(len(ids))], Timestamp: 5})
			}
		case 2:
			if len(ids) > 0 {
				_ = h.mux.AllowCompaction(ids[rng.IntN(len(ids))], frontier.At(3))
			}
		}
	}
	return checkInvariants(h, owners, reporters)
}

// RoutePolicyFor maps 0..2 to a policy, for randomized tests.
func RoutePolicyFor(i int) Policy {
	return []Policy{RouteMaintenance, RouteInteractive, RouteSealedHint}[i]
}

func TestMultiplexerInvariants(t *testing.T) {
	for seed := range uint64(100) {
		if err := runScenario(seed, false); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// TestMultiplexerInvariantsSabotaged removes the response filter and shows
// the invariant check then fails.
func TestMultiplexerInvariantsSabotaged(t *testing.T) {
	for seed := range uint64(100) {
		if err := runScenario(seed, true); err != nil {
			return
		}
	}
	t.Fatal("the invariant check passed with the response filter removed")
}

func TestCommandsReachMaintenanceFirst(t *testing.T) {
	h := newHarness(RouteMaintenance, nil)
	_ = h.mux.CreateDataflow(dataflow(plan.User(1), plan.ClassMaintained))
	_ = h.mux.AllowCompaction(plan.User(1), frontier.At(4))
	want := []string{"m:create u1", "i:create u1", "m:compact u1", "i:compact u1"}
	if fmt.Sprint(h.log) != fmt.Sprint(want) {
		t.Fatalf("order %v, want %v", h.log, want)
	}
}

func TestPeekRouting(t *testing.T) {
	sealed := func(id plan.GlobalID, t frontier.Time) bool { return t < 10 }
	tests := []struct {
		policy Policy
		target plan.GlobalID
		class  plan.DataflowClass
		time   frontier.Time
		want   string
	}{
		{RouteMaintenance, plan.User(1), plan.ClassMaintained, 5, "m"},
		{RouteInteractive, plan.User(1), plan.ClassMaintained, 5, "i"},
		{RouteSealedHint, plan.User(1), plan.ClassMaintained, 5, "i"},
		{RouteSealedHint, plan.User(1), plan.ClassMaintained, 50, "m"},
		{RouteMaintenance, plan.Transient(2), plan.ClassOneShotRead, 50, "i"},
	}
	for _, tt := range tests {
		h := newHarness(tt.policy, sealed)
		_ = h.mux.CreateDataflow(dataflow(tt.target, tt.class))
		h.log = nil
		h.mux.Peek(runtime.Peek{UUID: "x", Target: tt.target, Timestamp: tt.time})
		if len(h.log) != 1 || h.log[0] != tt.want+":peek x" {
			t.Errorf("%v peek on %s at %d went to %v, want %s", tt.policy, tt.target, tt.time, h.log, tt.want)
		}
	}
}

func TestRenders(t *testing.T) {
	for _, tt := range []struct {
		role  runtime.Role
		class plan.DataflowClass
		want  bool
	}{
		{runtime.Solo, plan.ClassOneShotRead, true},
		{runtime.Solo, plan.ClassMaintained, true},
		{runtime.Maintenance, plan.ClassMaintained, true},
		{runtime.Maintenance, plan.ClassOneShotRead, false},
		{runtime.Maintenance, plan.ClassUnspecified, true},
		{runtime.Interactive, plan.ClassOneShotRead, true},
		{runtime.Interactive, plan.ClassMaintained, false},
	} {
		if got := Renders(tt.role, tt.class); got != tt.want {
			t.Errorf("Renders(%v, %v) = %v", tt.role, tt.class, got)
		}
	}
}
