package operators

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// benchBatch builds a batch of n updates over keys [0, keys) with random
// int64 values, times spread over [lower, lower+times).
func benchBatch(b *testing.B, rng *rand.Rand, n, keys int, lower, times frontier.Time) *batch.Batch {
	b.Helper()
	var bl batch.Builder
	for range n {
		k := row.Pack(row.Int64(int64(rng.IntN(keys))))
		v := row.Pack(row.Int64(rng.Int64N(1_000_000)))
		bl.Push(k, v, lower+frontier.Time(rng.IntN(int(times))), 1)
	}
	bat, err := bl.Build(batch.Description{Lower: frontier.At(lower), Upper: frontier.At(lower + times), Since: frontier.At(0)})
	if err != nil {
		b.Fatal(err)
	}
	return bat
}

// BenchmarkReduceCountSum measures count(*)/sum(v) GROUP BY k. "hydrate"
// reduces a snapshot at one time into empty state; "update" applies a batch
// of changes spread over 10 times to groups of ~10 rows each. Throughput is
// fresh input updates per second.
func BenchmarkReduceCountSum(b *testing.B) {
	logic := AggregateLogic([]Aggregate{{Func: AggCountStar}, {Func: AggSum}})
	cases := []struct {
		name             string
		old, fresh, keys int
		freshTimes       frontier.Time
	}{
		{"hydrate/1M_rows_100k_keys", 0, 1_000_000, 100_000, 1},
		{"update/10k_changes_on_1M_rows", 1_000_000, 10_000, 100_000, 10},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			var old []*batch.Batch
			if c.old > 0 {
				old = []*batch.Batch{benchBatch(b, rng, c.old, c.keys, 0, 100)}
			}
			fresh := []*batch.Batch{benchBatch(b, rng, c.fresh, c.keys, 100, c.freshTimes)}
			var outputs int
			emit := func([]byte, frontier.Time, int64) { outputs++ }
			emitErr := func(err error, _ frontier.Time, _ int64) { b.Fatal(err) }
			// Both arms in one run: the whole step, and the resumable
			// step on the default fuel (16,384) as a maintained reduction
			// runs it, resumed until done.
			b.Run("whole", func(b *testing.B) {
				cpu0 := processCPU()
				for b.Loop() {
					ReduceGroups(old, fresh, logic, emit, emitErr)
				}
				reportThroughput(b, c.fresh, processCPU()-cpu0)
			})
			b.Run("resumable", func(b *testing.B) {
				eval := AggregateEval([]Aggregate{{Func: AggCountStar}, {Func: AggSum}})
				cpu0 := processCPU()
				for b.Loop() {
					var p Progress
					for !ReduceGroupsResumable(old, fresh, eval, emit, emitErr, 16_384, &p) {
					}
				}
				reportThroughput(b, c.fresh, processCPU()-cpu0)
			})
			_ = outputs
		})
	}
}

// BenchmarkJoin measures an equi-join on an int64 key. "hydrate" joins two
// fresh snapshots (1:10 fan-out); "update" joins a batch of changes to one
// side against 1M old rows of the other. Throughput is fresh input updates
// per second; outputs/s is also reported.
func BenchmarkJoin(b *testing.B) {
	cases := []struct {
		name                      string
		leftOld, leftFresh, right int
		keys                      int
	}{
		{"hydrate/100k_x_1M", 0, 100_000, 1_000_000, 100_000},
		{"update/10k_changes_vs_1M", 100_000, 10_000, 1_000_000, 100_000},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			in := JoinInput{LeftFresh: []*batch.Batch{benchBatch(b, rng, c.leftFresh, c.keys, 100, 10)}}
			right := []*batch.Batch{benchBatch(b, rng, c.right, c.keys, 0, 100)}
			fresh := c.leftFresh
			if c.leftOld > 0 {
				in.LeftOld = []*batch.Batch{benchBatch(b, rng, c.leftOld, c.keys, 0, 100)}
				in.RightOld = right
			} else {
				// Hydration: both sides are fresh in the same step.
				in.RightFresh = []*batch.Batch{benchBatch(b, rng, c.right, c.keys, 100, 10)}
				fresh += c.right
			}
			var outputs int
			emit := func([]byte, frontier.Time, int64) { outputs++ }
			cpu0 := processCPU()
			for b.Loop() {
				outputs = 0
				Join(in, emit)
			}
			reportThroughput(b, fresh, processCPU()-cpu0)
			b.ReportMetric(float64(outputs)*float64(b.N)/b.Elapsed().Seconds(), "outputs/s")
		})
	}
}

// reportThroughput reports fresh input updates per wall second and per CPU
// second (the latter is what to compare on a shared machine).
func reportThroughput(b *testing.B, perOp int, cpu time.Duration) {
	total := float64(perOp) * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds(), "updates/s")
	if cpu > 0 {
		b.ReportMetric(total/cpu.Seconds(), "updates/cpu-s")
	}
	b.ReportMetric(0, "ns/op")
}
