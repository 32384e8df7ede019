package trace

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// The benchmarks arrange n updates with int64 keys (8-byte big-endian) and
// 16-byte values, one update per key, arriving in random key order in
// batches of batchSize updates, one batch per tick, as an arrange operator
// would see them. n = 10M runs only with TANDEM_BENCH_BIG=1 (use
// -benchtime=1x).

const batchSize = 1 << 16

func sizes() []int {
	s := []int{1 << 20}
	if os.Getenv("TANDEM_BENCH_BIG") != "" {
		s = append(s, 10_000_000)
	}
	return s
}

func name(n int) string {
	if n%1_000_000 == 0 {
		return strconv.Itoa(n/1_000_000) + "M"
	}
	return strconv.Itoa(n)
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// arrange builds a trace of n updates and merges it to completion.
func arrange(b *testing.B, n int) *Trace {
	tr := New(frontier.At(0))
	perm := rand.New(rand.NewPCG(1, 2)).Perm(n)
	var bl batch.Builder
	var k [8]byte
	var v [16]byte
	tick := frontier.Time(0)
	for start := 0; start < n; start += batchSize {
		for _, i := range perm[start:min(start+batchSize, n)] {
			binary.BigEndian.PutUint64(k[:], uint64(i))
			binary.BigEndian.PutUint64(v[:], uint64(i)*0x9E3779B97F4A7C15)
			binary.BigEndian.PutUint64(v[8:], uint64(i))
			bl.Push(k[:], v[:], tick, 1)
		}
		bat, err := bl.Build(batch.Description{Lower: frontier.At(tick), Upper: frontier.At(tick + 1)})
		if err != nil {
			b.Fatal(err)
		}
		if err := tr.Insert(bat); err != nil {
			b.Fatal(err)
		}
		tick++
	}
	for {
		fuel := 1 << 20
		if !tr.Exert(&fuel) {
			return tr
		}
	}
}

// BenchmarkArrange measures arrange throughput: build, insert and merge.
func BenchmarkArrange(b *testing.B) {
	for _, n := range sizes() {
		b.Run(name(n), func(b *testing.B) {
			cpu0 := cpuTime(b)
			var tr *Trace
			for b.Loop() {
				tr = arrange(b, n)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "updates/s")
			b.ReportMetric(float64(n)*float64(b.N)/(cpuTime(b)-cpu0).Seconds(), "updates/cpu-s")
			st := tr.Stats()
			b.ReportMetric(float64(st.Batches), "batches")
		})
	}
}

// BenchmarkRead measures reads over one merged arrangement: point lookups of
// random present keys, full scans, resident heap per update and the
// duration of a full garbage collection with the arrangement live.
func BenchmarkRead(b *testing.B) {
	for _, n := range sizes() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		tr := arrange(b, n)
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		h := tr.NewHandle("bench")
		upper, _ := tr.Upper().Time()
		r, err := tr.ReadAt(upper - 1)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name(n)+"/lookup", func(b *testing.B) {
			// Many lookups per iteration, so -benchtime=1x still measures.
			const lookups = 100_000
			rng := rand.New(rand.NewPCG(3, 4))
			var k [8]byte
			var dst []ValDiff
			cpu0 := cpuTime(b)
			for b.Loop() {
				for range lookups {
					binary.BigEndian.PutUint64(k[:], rng.Uint64N(uint64(n)))
					dst = r.Lookup(k[:], dst[:0])
					if len(dst) != 1 {
						b.Fatalf("lookup found %d values", len(dst))
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lookups), "ns/lookup")
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N*lookups), "cpu-ns/lookup")
		})
		b.Run(name(n)+"/scan", func(b *testing.B) {
			rows := 0
			cpu0 := cpuTime(b)
			for b.Loop() {
				r.Scan(func(_, _ []byte, _ int64) bool { rows++; return true })
			}
			if rows != n*b.N {
				b.Fatalf("scanned %d rows, want %d", rows, n*b.N)
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(rows)/(cpuTime(b)-cpu0).Seconds(), "rows/cpu-s")
		})
		b.Run(name(n)+"/memory", func(b *testing.B) {
			var gc time.Duration
			for b.Loop() {
				start := time.Now()
				runtime.GC()
				gc += time.Since(start)
			}
			st := tr.Stats()
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "heap-bytes/update")
			b.ReportMetric(float64(st.SizeBytes)/float64(n), "batch-bytes/update")
			b.ReportMetric(float64(gc.Microseconds())/float64(b.N)/1000, "gc-ms")
			b.ReportMetric(float64(st.Batches), "batches")
		})
		h.Release()
		runtime.KeepAlive(r)
	}
}
