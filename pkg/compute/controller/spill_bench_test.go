package controller_test

import (
	"context"
	goruntime "runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// Sizes of BenchmarkControllerPeekMemory: a full scan of spillKeys rows of
// about spillValueSize bytes.
const (
	spillKeys      = 50_000
	spillValueSize = 1024
)

// ctlHeapPeak samples this process's heap every millisecond until the
// returned function is called, which returns the largest sample.
func ctlHeapPeak() func() uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms goruntime.MemStats
		for {
			goruntime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// BenchmarkControllerPeekMemory measures the controller's peak heap above
// its idle level while one full scan (spillKeys rows of spillValueSize
// bytes, from one real replica process) is answered and its rows consumed
// one at a time, side by side: in memory (PeekResult.Rows, as before) and
// spilled (PeekRequest.SpillDir: stashed chunks appended to a file as they
// arrive, read back row by row, as the SQL layer and pgwire now do). The
// collector runs at GOGC=5 while measuring, so samples track live data.
func BenchmarkControllerPeekMemory(b *testing.B) {
	ctl, _ := hydratedWideKV(b, spillKeys, spillValueSize)
	ctx := context.Background()
	spillDir := b.TempDir()
	measure := func(spill bool) uint64 {
		req := controller.PeekRequest{Cluster: "default", Target: plan.User(1)}
		if spill {
			req.SpillDir = spillDir
		}
		goruntime.GC()
		var base goruntime.MemStats
		goruntime.ReadMemStats(&base)
		stop := ctlHeapPeak()
		res, err := ctl.Peek(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		n, bytes := 0, 0
		if res.Spilled != nil {
			for {
				rc, ok, err := res.Spilled.Next()
				if err != nil {
					b.Fatal(err)
				}
				if !ok {
					break
				}
				n++
				bytes += len(rc.Row)
			}
			res.Spilled.Close()
		} else {
			for _, rc := range res.Rows {
				n++
				bytes += len(rc.Row)
			}
		}
		peak := stop()
		if n != spillKeys || (spill != (res.Spilled != nil)) {
			b.Fatalf("%d rows (spilled %v), want %d", n, res.Spilled != nil, spillKeys)
		}
		return peak - min(peak, base.HeapAlloc)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	var mem, spilled uint64
	for b.Loop() {
		mem = max(mem, measure(false))
		spilled = max(spilled, measure(true))
	}
	b.ReportMetric(float64(mem)/(1<<20), "in-memory-peak-MiB")
	b.ReportMetric(float64(spilled)/(1<<20), "spilled-peak-MiB")
	b.ReportMetric(float64(spillKeys*spillValueSize)/(1<<20), "result-MiB")
}
