package placement

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
)

// holdingTarget is a runtime that takes peeks and answers none by itself:
// the scenario decides when, and from where, answers arrive.
type holdingTarget struct {
	nullTarget
	rt    runtime.Role
	asked map[string]runtime.Role
}

func (h *holdingTarget) Peek(p runtime.Peek) { h.asked[p.UUID] = h.rt }

// peekScenario routes random peeks over indexes of both classes under a
// random policy and then delivers, in random order, for each peek: its
// answer from the runtime that was asked, a duplicate of it, an answer from
// the runtime that was not asked (while the peek is pending or after), and
// one more from the wrong runtime for an earlier uuid. It returns the first uuid that left the
// multiplexer other than exactly once, or whose answer came from the wrong
// runtime.
func peekScenario(seed uint64, unfiltered bool) error {
	rng := rand.New(rand.NewPCG(seed, 11))
	var out []runtime.PeekResponse
	asked := map[string]runtime.Role{}
	mux := mustMultiplexer(NewMultiplexer(func(r runtime.Response) {
		if p, ok := r.(*runtime.PeekResponse); ok {
			out = append(out, *p)
		}
	}, RoutePolicyFor(rng.IntN(3)), func(func(runtime.Role) func(runtime.Response)) (Runtimes, error) {
		return Runtimes{Maintenance: &holdingTarget{rt: runtime.Maintenance, asked: asked}, Interactive: &holdingTarget{rt: runtime.Interactive, asked: asked},
			Sealed: func(plan.GlobalID, frontier.Time) bool { return rng.IntN(2) == 0 }}, nil
	}))
	mux.unfiltered = unfiltered
	var ids []plan.GlobalID
	for i := range 4 {
		id, class := plan.User(uint64(i)), plan.ClassMaintained
		if i%2 == 1 {
			id, class = plan.Transient(uint64(i)), plan.ClassOneShotRead
		}
		ids = append(ids, id)
		if err := mux.CreateDataflow(dataflow(id, class)); err != nil {
			return err
		}
	}
	type answer struct {
		from runtime.Role
		uuid string
		err  error // marks an answer from the wrong runtime
	}
	var answers []answer
	var uuids []string
	for i := range 40 {
		uuid := fmt.Sprint("p", i)
		uuids = append(uuids, uuid)
		mux.Peek(runtime.Peek{UUID: uuid, Target: ids[rng.IntN(len(ids))], Timestamp: 5})
		right := asked[uuid]
		answers = append(answers,
			answer{from: right, uuid: uuid},
			answer{from: right, uuid: uuid},
			answer{from: 1 - right, uuid: uuid, err: errWrongRuntime},
		)
		other := fmt.Sprint("p", rng.IntN(i+1))
		answers = append(answers, answer{from: 1 - asked[other], uuid: other, err: errWrongRuntime})
	}
	rng.Shuffle(len(answers), func(i, j int) { answers[i], answers[j] = answers[j], answers[i] })
	for _, a := range answers {
		mux.ResponderFor(a.from)(&runtime.PeekResponse{UUID: a.uuid, Error: a.err})
	}
	count := map[string]int{}
	for _, r := range out {
		count[r.UUID]++
		if r.Error != nil {
			// Only the asked runtime's answers carry no error here.
			return fmt.Errorf("peek %s: a stray answer left the multiplexer", r.UUID)
		}
	}
	for _, uuid := range uuids {
		if count[uuid] != 1 {
			return fmt.Errorf("peek %s left the multiplexer %d times", uuid, count[uuid])
		}
	}
	return nil
}

var errWrongRuntime = errors.New("stray answer")

// TestExactlyOnePeekResponsePerUUID checks the peek half of the
// multiplexer's invariants on its own, with its sabotage run: the response
// filter removed, duplicates and stray answers reach the controller.
// (TestMultiplexerInvariantsSabotaged fails on a frontier report first, so
// it does not show that the peek check has teeth.)
func TestExactlyOnePeekResponsePerUUID(t *testing.T) {
	for _, tt := range []struct {
		name      string
		sabotaged bool
	}{{"filtered", false}, {"sabotaged", true}} {
		t.Run(tt.name, func(t *testing.T) {
			failed := 0
			var first error
			for seed := range uint64(50) {
				if err := peekScenario(seed, tt.sabotaged); err != nil {
					failed++
					if first == nil {
						first = err
					}
				}
			}
			switch {
			case !tt.sabotaged && failed > 0:
				t.Fatalf("%d of 50 seeds broke exactly-once: %v", failed, first)
			case tt.sabotaged && failed == 0:
				t.Fatal("no seed broke exactly-once with the response filter removed; the check has no teeth")
			}
		})
	}
}
