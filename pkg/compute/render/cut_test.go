package render

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// TestInputCutMatchesTimes checks, for random batch boundaries (as a trace
// sealed them) and random step boundaries (as an operator stepped), that
// every step's fresh batches hold exactly the updates with times in
// [f0, f1) and its old batches exactly those before f0.
func TestInputCutMatchesTimes(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for iter := 0; iter < 200; iter++ {
		// Updates at times in [0, 100).
		type u struct {
			k    int64
			t    frontier.Time
			diff int64
		}
		var ups []u
		for i := 0; i < 60; i++ {
			ups = append(ups, u{int64(rng.Intn(6)), frontier.Time(rng.Intn(100)), int64(rng.Intn(3) + 1)})
		}
		bounds := randomBounds(rng, 100)
		var bs []*batch.Batch
		for i := 0; i+1 < len(bounds); i++ {
			var b batch.Builder
			for _, x := range ups {
				if bounds[i].LessEqualTime(x.t) && !bounds[i+1].LessEqualTime(x.t) {
					b.Push(row.Pack(row.Int64(x.k)), nil, x.t, x.diff)
				}
			}
			bat, err := b.Build(batch.Description{Lower: bounds[i], Upper: bounds[i+1], Since: frontier.Minimum()})
			if err != nil {
				t.Fatal(err)
			}
			bs = append(bs, bat)
		}
		steps := randomBounds(rng, 100)
		var c inputCut
		for s := 0; s+1 < len(steps); s++ {
			f0, f1 := steps[s], steps[s+1]
			old, fresh, err := c.cut(bs, f0, f1)
			if err != nil {
				t.Fatal(err)
			}
			sum := func(list []*batch.Batch, lo, hi frontier.Frontier) string {
				m := map[string]int64{}
				for _, b := range list {
					cur := b.Cursor()
					for ; cur.KeyValid(); cur.StepKey() {
						for ; cur.ValValid(); cur.StepVal() {
							cur.ForEachUpdate(func(tt frontier.Time, d int64) {
								m[fmt.Sprintf("%s@%d", row.Row(cur.Key()), tt)] += d
							})
						}
					}
				}
				return fmt.Sprint(m)
			}
			want := func(lo, hi frontier.Frontier) string {
				m := map[string]int64{}
				for _, x := range ups {
					if lo.LessEqualTime(x.t) && !hi.LessEqualTime(x.t) {
						m[fmt.Sprintf("%s@%d", row.Pack(row.Int64(x.k)), x.t)] += x.diff
					}
				}
				return fmt.Sprint(m)
			}
			if got, w := sum(fresh, f0, f1), want(f0, f1); got != w {
				t.Fatalf("iter %d step [%v, %v) batches %v: fresh %s, want %s", iter, f0, f1, bounds, got, w)
			}
			if got, w := sum(old, frontier.Minimum(), f0), want(frontier.Minimum(), f0); got != w {
				t.Fatalf("iter %d step [%v, %v) batches %v: old %s, want %s", iter, f0, f1, bounds, got, w)
			}
		}
	}
}

// randomBounds returns increasing frontiers from [0] to closed.
func randomBounds(rng *rand.Rand, max int) []frontier.Frontier {
	out := []frontier.Frontier{frontier.Minimum()}
	t := 0
	for {
		t += 1 + rng.Intn(max/3)
		if t >= max || rng.Intn(6) == 0 {
			return append(out, frontier.Closed())
		}
		out = append(out, frontier.At(frontier.Time(t)))
	}
}
