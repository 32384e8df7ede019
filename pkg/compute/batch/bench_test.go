package batch

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// Benchmarks use the shape: int64 keys encoded as 8-byte big-endian,
// 16-byte values, one update per key, pushed in random order. Sizes above 1M
// run only with TANDEM_BENCH_BIG=1 (and are meant for -benchtime=1x).

func benchSizes(b *testing.B) []int {
	sizes := []int{1 << 20}
	if os.Getenv("TANDEM_BENCH_BIG") != "" {
		sizes = append(sizes, 10_000_000)
	}
	return sizes
}

func sizeName(n int) string {
	if n%1_000_000 == 0 {
		return strconv.Itoa(n/1_000_000) + "M"
	}
	return strconv.Itoa(n)
}

// pushShuffled pushes keys [0, n) in a deterministic random order with
// 16-byte values derived from the key, at time t.
func pushShuffled(bl *Builder, n int, seed uint64, t frontier.Time) {
	r := rand.New(rand.NewPCG(seed, 0))
	perm := r.Perm(n)
	var k [8]byte
	var v [16]byte
	bl.Reserve(n, 24)
	for _, i := range perm {
		binary.BigEndian.PutUint64(k[:], uint64(i))
		binary.BigEndian.PutUint64(v[:], uint64(i)*0x9E3779B97F4A7C15)
		binary.BigEndian.PutUint64(v[8:], uint64(i))
		bl.Push(k[:], v[:], t, 1)
	}
}

func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes(b) {
		b.Run(sizeName(n), func(b *testing.B) {
			var bl Builder
			var out *Batch
			if n <= 1<<20 {
				// Warm the heap once so the timed builds reuse memory, as a
				// long-running replica does, instead of faulting in fresh pages.
				pushShuffled(&bl, n, 1, 1)
				if _, err := bl.Build(desc(0, 2)); err != nil {
					b.Fatal(err)
				}
			}
			cpu0 := cpuTime(b)
			for b.Loop() {
				pushShuffled(&bl, n, 1, 1)
				var err error
				if out, err = bl.Build(desc(0, 2)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "updates/s")
			b.ReportMetric(float64(n)*float64(b.N)/(cpuTime(b)-cpu0).Seconds(), "updates/cpu-s")
			b.ReportMetric(float64(out.SizeBytes())/float64(n), "bytes/update")
		})
	}
}

// BenchmarkMerge merges two batches of n/2 updates each (interleaved keys),
// with and without logical compaction.
func BenchmarkMerge(b *testing.B) {
	for _, n := range benchSizes(b) {
		var bl Builder
		var k [8]byte
		var v [16]byte
		for i := 0; i < n; i += 2 {
			binary.BigEndian.PutUint64(k[:], uint64(i))
			bl.Push(k[:], v[:], 1, 1)
		}
		x, err := bl.Build(desc(0, 2))
		if err != nil {
			b.Fatal(err)
		}
		for i := 1; i < n; i += 2 {
			binary.BigEndian.PutUint64(k[:], uint64(i))
			bl.Push(k[:], v[:], 2, 1)
		}
		y, err := bl.Build(desc(2, 3))
		if err != nil {
			b.Fatal(err)
		}
		for _, since := range []frontier.Time{0, 3} {
			b.Run(sizeName(n)+"/since="+strconv.Itoa(int(since)), func(b *testing.B) {
				cpu0 := cpuTime(b)
				for b.Loop() {
					if _, err := Merge(x, y, frontier.At(since)); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "updates/s")
				b.ReportMetric(float64(n)*float64(b.N)/(cpuTime(b)-cpu0).Seconds(), "updates/cpu-s")
			})
		}
	}
}
