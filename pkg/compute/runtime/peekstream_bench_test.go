package runtime_test

import (
	"bytes"
	"fmt"
	goruntime "runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// Sizes of BenchmarkPeekResultMemory: a full scan returns memRows rows of
// about memRowBytes bytes.
const (
	memRows     = 50_000
	memRowBytes = 1024
)

var wideDesc = row.NewRelationDesc([]string{"k", "payload"}, []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeBytes}})

// heapPeak samples the live heap every millisecond until stop is called
// and returns the largest sample.
func heapPeak() (stop func() uint64) {
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

// BenchmarkPeekResultMemory measures the replica runtime's peak heap above
// its idle level while it answers one full scan of memRows rows of
// memRowBytes bytes (2 workers), side by side: materialised (the whole
// result merged into one response) and streamed (peek_stash_threshold 1
// MiB; the consumer takes each chunk and drops it, as the server's sender
// does once a chunk is written to the stream). The garbage collector runs
// at GOGC=5 while measuring, so the sampled heap is close to live data.
func BenchmarkPeekResultMemory(b *testing.B) {
	h := runtimetest.New(b, runtimetest.Options{Workers: 2, Timeout: time.Minute})
	id, on, srcID := plan.User(13), plan.User(12), plan.User(11)
	h.MustCreate(plan.DataflowDescription{
		ID: plan.Transient(9), DebugName: "wide", Class: plan.ClassMaintained,
		SourceImports:  []plan.SourceImport{{ID: srcID, Desc: wideDesc, Connection: plan.SourceConnection{Kind: plan.SourceTable}}},
		ObjectsToBuild: []plan.Build{{ID: on, Plan: plan.NewGet(srcID)}},
		IndexExports:   []plan.IndexExport{{ID: id, On: on, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:           frontier.At(0), Until: frontier.Closed(),
	})
	tbl := h.Table(srcID)
	payload := bytes.Repeat([]byte{'x'}, memRowBytes)
	var ups []dataflow.Update
	for k := range int64(memRows) {
		ups = append(ups, dataflow.Update{Val: row.Pack(row.Int64(k), row.Bytes(payload)), Time: 1, Diff: 1})
	}
	if err := tbl.Append(ups, frontier.At(5)); err != nil {
		b.Fatal(err)
	}
	ups = nil
	if _, err := h.Peek(id, 4, nil); err != nil { // wait for hydration
		b.Fatal(err)
	}
	for _, rt := range h.RTs {
		if err := rt.UpdateConfiguration(map[string]string{"peek_stash_threshold": fmt.Sprint(1 << 20)}); err != nil {
			b.Fatal(err)
		}
	}
	measure := func(streamable bool) uint64 {
		goruntime.GC()
		var base goruntime.MemStats
		goruntime.ReadMemStats(&base)
		stop := heapPeak()
		uuid := h.StartPeek(id, 4, &runtimetest.PeekRequest{Streamable: streamable})
		n := 0
		if streamable {
			s := streamOf(b, h, uuid)
			chunks, err := h.DrainStreamFunc(s, func(rows int) { n += rows })
			if err != nil || chunks == 0 {
				b.Fatalf("stream: %d chunks, %v", chunks, err)
			}
		} else {
			rows, err := h.AwaitPeek(uuid)
			if err != nil {
				b.Fatal(err)
			}
			n = len(rows)
		}
		peak := stop()
		if n != memRows {
			b.Fatalf("%d rows, want %d", n, memRows)
		}
		return peak - min(peak, base.HeapAlloc)
	}
	// HeapAlloc counts garbage until the next collection; collecting when
	// the heap grows 5% over the live heap makes the peak track live data,
	// in both arms alike.
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	var mat, str uint64
	for b.Loop() {
		mat = max(mat, measure(false))
		str = max(str, measure(true))
	}
	b.ReportMetric(float64(mat)/(1<<20), "materialised-peak-MiB")
	b.ReportMetric(float64(str)/(1<<20), "streamed-peak-MiB")
	b.ReportMetric(float64(memRows*memRowBytes)/(1<<20), "result-MiB")
}
