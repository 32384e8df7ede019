package controller_test

import (
	"context"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/orchestrator"
	"github.com/tandemdb/tandem/pkg/orchestrator/process"
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
	bin := realReplicaB(b)
	orch, err := process.New(process.Config{ReplicaBinary: bin, Log: logr.Discard(), LogDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer orch.Close()
	ctl := controller.New(controller.Config{Log: logr.Discard(), Orchestrator: orch})
	ctl.Start()
	defer ctl.Close()
	if err := ctl.CreateCluster("default"); err != nil {
		b.Fatal(err)
	}
	if err := ctl.CreateReplica(context.Background(), orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "default", Replica: "r1"}, Processes: 1, Workers: 2}); err != nil {
		b.Fatal(err)
	}
	start := frontier.Time(time.Now().UnixMilli()) - 1000
	if _, err := ctl.CreateDataflow("default", wideKVIndex(1, 100, spillKeys, spillValueSize, start)); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(120 * time.Second)
	for {
		st := ctl.Status()
		if len(st.Clusters[0].Replicas) == 1 && slices.Contains(st.Clusters[0].Replicas[0].Hydrated, "u1") {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("not hydrated")
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx := context.Background()
	spillDir := b.TempDir()
	measure := func(spill bool) uint64 {
		req := controller.PeekRequest{Cluster: "default", Target: "u1"}
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
