package batch

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// TestBuildInSteps: a build in steps (StartBuild, then BuildStep with a
// limit) gives exactly the batch one Build gives; each step consumes at
// least its limit (unless it finishes) and at most its limit plus one
// key's updates less one, so a step's work, writing fresh memory, is
// bounded by the limit, not by the run; the builder is reusable after.
func TestBuildInSteps(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	const n = 20_000
	upds := make([]update, 0, n)
	perKey := map[string]int{}
	for range n {
		// Repeats and cancellations, and keys of up to a few dozen updates.
		k := fmt.Sprintf("k%05d", r.IntN(n/8))
		upds = append(upds, update{k, fmt.Sprint(r.IntN(3)), frontier.Time(r.IntN(4)), int64(r.IntN(3) - 1)})
		if upds[len(upds)-1].diff != 0 {
			perKey[k]++
		}
	}
	keyMax := 0
	for _, c := range perKey {
		keyMax = max(keyMax, c)
	}
	want := contents(build(t, upds, desc(0, 4)))
	for _, limit := range []int{1, 100, 4096, n} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			var bl Builder
			for round := range 2 { // the second round reuses the builder
				for _, u := range upds {
					bl.Push([]byte(u.key), []byte(u.val), u.t, u.diff)
				}
				pushed := bl.Len()
				if err := bl.StartBuild(desc(0, 4)); err != nil {
					t.Fatal(err)
				}
				if !bl.Building() {
					t.Fatal("not building after StartBuild")
				}
				if err := bl.StartBuild(desc(0, 4)); !errors.Is(err, ErrBuilding) {
					t.Fatalf("a second StartBuild: %v, want ErrBuilding", err)
				}
				var got *Batch
				steps, consumed := 0, 0
				for got == nil {
					l := limit
					b, err := bl.BuildStep(&l)
					if err != nil {
						t.Fatal(err)
					}
					did := limit - l
					consumed += did
					steps++
					if did > limit+keyMax-1 {
						t.Fatalf("round %d: a step consumed %d updates, limit %d (one key holds at most %d)", round, did, limit, keyMax)
					}
					if b == nil && did < limit {
						t.Fatalf("round %d: an unfinished step consumed %d updates, limit %d", round, did, limit)
					}
					got = b
				}
				if consumed != pushed {
					t.Errorf("round %d: steps consumed %d updates, %d pushed", round, consumed, pushed)
				}
				if minSteps := pushed / (limit + keyMax); steps < minSteps {
					t.Errorf("round %d: %d steps, want at least %d", round, steps, minSteps)
				}
				checkInvariants(t, got)
				if g := contents(got); !slices.Equal(g, want) {
					t.Fatalf("round %d: built in steps %d updates, one Build %d; they differ", round, len(g), len(want))
				}
				if bl.Building() || bl.Len() != 0 {
					t.Fatalf("round %d: builder not reset after the last step", round)
				}
			}
			if _, err := bl.BuildStep(nil); !errors.Is(err, ErrNotBuilding) {
				t.Fatalf("BuildStep without a build: %v, want ErrNotBuilding", err)
			}
		})
	}
}
