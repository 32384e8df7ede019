package render

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// frozenShared is a SharedArrangement over a fixed batch chain: what a
// publisher that stopped changing looks like to an importer.
type frozenShared struct {
	batches []*batch.Batch
	upper   frontier.Frontier
}

func (f *frozenShared) Snapshot() ([]*batch.Batch, frontier.Frontier, bool, bool) {
	return f.batches, f.upper, true, false
}

func (f *frozenShared) OnChange(func()) func() { return func() {} }

type frozenImports map[int][2]*frozenShared

func (f frozenImports) Has(plan.GlobalID) bool { return true }

func (f frozenImports) Import(_ plan.GlobalID, worker int) (SharedArrangement, SharedArrangement, bool) {
	s, ok := f[worker]
	return s[0], s[1], ok
}

// heapObjects reads the bytes of heap objects (live and not yet swept)
// without stopping the world.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	return heapObjects()
}

// BenchmarkOneShotReaderMemory measures what one-shot readers of one index
// cost in heap: an index of N rows (int64 key, 1 KiB random value) is built, then
// R reader dataflows (TANDEM_BENCH_READERS, default 16) import it at once
// (locally, as a Solo runtime does, or through shared mirrors, as the
// interactive runtime does) and run a read plan to completion, flattening
// the import or through the snapshot operators. With the collector at GOGC=10 during the readers, the
// sampled peak of heap objects tracks the live peak; reported per reader,
// relative to the index's own live heap. TANDEM_BENCH_ROWS overrides N.
func BenchmarkOneShotReaderMemory(b *testing.B) {
	n := 20_000
	if s := os.Getenv("TANDEM_BENCH_ROWS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("TANDEM_BENCH_ROWS: %v", err)
		}
		n = v
	}
	readers := 16
	if s := os.Getenv("TANDEM_BENCH_READERS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("TANDEM_BENCH_READERS: %v", err)
		}
		readers = v
	}
	plans := []struct {
		name string
		plan func(on plan.GlobalID) plan.Plan
	}{
		{"count", func(on plan.GlobalID) plan.Plan {
			return plan.NewReduce(plan.NewGet(on), nil, plan.Aggregate{Func: plan.AggCountStar})
		}},
		{"filter", func(on plan.GlobalID) plan.Plan {
			// Keeps 1% of the rows, and only their key.
			return plan.NewMfp(plan.NewGet(on), expr.MFP{
				Predicates: []expr.Expr{expr.Lt(expr.Column(0), expr.Literal(row.Int64(int64(n/100))))},
				Projection: []int{0},
			})
		}},
	}
	for _, mode := range []string{"local", "shared"} {
		for _, read := range []string{"flattened", "snapshot"} {
			for _, p := range plans {
				b.Run(mode+"/"+read+"/"+p.name, func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						indexBytes, peak, total := runOneShotReaders(b, n, readers, mode == "shared", read == "snapshot", p.plan)
						b.ReportMetric(float64(indexBytes), "index-B")
						b.ReportMetric(float64(peak)/float64(readers), "peak-B/reader")
						b.ReportMetric(float64(peak)/float64(indexBytes), "peak-all-readers/index")
						b.ReportMetric(float64(peak)/float64(readers)/float64(indexBytes), "peak-per-reader/index")
						b.ReportMetric(float64(total)/float64(readers)/float64(indexBytes), "alloc-per-reader/index")
					}
				})
			}
		}
	}
}

// runOneShotReaders returns the index's live heap, the peak heap growth
// while the readers ran, and the bytes they allocated.
func runOneShotReaders(b *testing.B, n, readers int, shared, snapshot bool, readPlan func(plan.GlobalID) plan.Plan) (indexBytes, peak, total uint64) {
	b.Helper()
	src, idxID, onID := plan.User(1), plan.User(2), plan.User(1)
	ws, err := dataflow.New(dataflow.Config{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	var failed atomic.Pointer[error]
	fail := func(err error) { failed.CompareAndSwap(nil, &err) }
	ctx, cancel := context.WithCancel(context.Background())
	ws.Start(ctx)
	defer func() { cancel(); ws.Stop() }()

	base := liveHeap()
	tbl := NewMemoryTable()
	// Random values, like the KEY VALUE load generator's: almost every
	// 1 KiB value holds a 0x00 byte, which the row encoding escapes.
	rng := rand.New(rand.NewPCG(1, 2))
	val := make([]byte, 1024)
	ups := make([]dataflow.Update, n)
	for i := range ups {
		for j := 0; j < len(val); j += 8 {
			binary.LittleEndian.PutUint64(val[j:], rng.Uint64())
		}
		ups[i] = dataflow.Update{Val: row.Pack(row.Int64(int64(i)), row.Bytes(val)), Diff: 1}
	}
	if err := tbl.Append(ups, frontier.At(1)); err != nil {
		b.Fatal(err)
	}
	ups = nil
	// The source operator keeps the table (the test's copy of the data)
	// alive; it is not part of the index.
	tableBytes := liveHeap() - base
	var (
		mu  sync.Mutex
		idx *Index
	)
	built := make(chan error, 1)
	hydrated := make(chan struct{}, 1)
	ws.Install("index", func(bl *dataflow.Builder) error {
		desc := &plan.DataflowDescription{
			SourceImports: []plan.SourceImport{{ID: src}},
			IndexExports:  []plan.IndexExport{{ID: idxID, On: src, Key: []expr.Expr{expr.Column(0)}}},
			AsOf:          frontier.At(0), Until: frontier.Closed(),
		}
		out, err := Build(bl, desc, Env{Sources: MemorySources{src: tbl}, Fail: fail})
		if err != nil {
			return err
		}
		mu.Lock()
		idx = out.Indexes[idxID]
		mu.Unlock()
		probe(bl, idx.Ok.Stream, hydrated)
		return nil
	}, func(_ *dataflow.Worker, err error) { built <- err })
	if err := <-built; err != nil {
		b.Fatal(err)
	}
	<-hydrated
	indexBytes = liveHeap() - base - tableBytes
	if path := os.Getenv("TANDEM_BENCH_HEAPPROFILE"); path != "" {
		writeHeapProfile(b, path+".index")
	}
	mu.Lock()
	snap := idx.Ok.Trace.Snapshot()
	errSnap := idx.Err.Trace.Snapshot()
	mu.Unlock()
	imports := frozenImports{0: {
		{batches: snap.Batches, upper: snap.Upper},
		{batches: errSnap.Batches, upper: errSnap.Upper},
	}}

	before := liveHeap()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	old := debug.SetGCPercent(10)
	defer debug.SetGCPercent(old)
	stop := make(chan struct{})
	var peakObjects atomic.Uint64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			if h := heapObjects(); h > peakObjects.Load() {
				peakObjects.Store(h)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	done := make(chan struct{}, readers)
	var seqs []uint64
	for r := 0; r < readers; r++ {
		outID := plan.Transient(uint64(100 + r))
		desc := &plan.DataflowDescription{
			IndexImports:   []plan.IndexImport{{ID: idxID, On: onID, Key: []expr.Expr{expr.Column(0)}}},
			ObjectsToBuild: []plan.Build{{ID: outID, Plan: readPlan(onID)}},
			IndexExports:   []plan.IndexExport{{ID: outID, On: outID}},
			AsOf:           frontier.At(0), Until: frontier.Closed(), Class: plan.ClassOneShotRead,
		}
		seq := ws.Install(fmt.Sprintf("reader %d", r), func(bl *dataflow.Builder) error {
			env := Env{Fail: fail, NoSnapshotReads: !snapshot}
			if shared {
				env.Shared = imports
			} else {
				mu.Lock()
				env.Indexes = map[plan.GlobalID]*Index{idxID: idx}
				mu.Unlock()
			}
			out, err := Build(bl, desc, env)
			if err != nil {
				return err
			}
			probe(bl, out.Indexes[outID].Ok.Stream, done)
			return nil
		}, func(_ *dataflow.Worker, err error) {
			if err != nil {
				fail(err)
			}
		})
		seqs = append(seqs, seq)
	}
	for range readers {
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			b.Fatal("readers did not finish")
		}
		if e := failed.Load(); e != nil {
			b.Fatal(*e)
		}
	}
	close(stop)
	<-sampled
	if path := os.Getenv("TANDEM_BENCH_HEAPPROFILE"); path != "" {
		writeHeapProfile(b, path+".readers")
	}
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	for _, s := range seqs {
		ws.Drop(s)
	}
	if p := peakObjects.Load(); p > before {
		peak = p - before
	}
	return indexBytes, peak, ms1.TotalAlloc - ms0.TotalAlloc
}

func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// probe signals ch once s's frontier passes time 0.
func probe[T any](bl *dataflow.Builder, s dataflow.Stream, ch chan T) {
	sent := false
	bl.AddOperator("probe", []dataflow.Connection{{From: s}}, 0, dataflow.LogicFunc(func(op *dataflow.Operator) {
		if !sent && op.InputFrontier().IsComplete(0) {
			sent = true
			var zero T
			ch <- zero // buffered by the caller
		}
	}))
}
