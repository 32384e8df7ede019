package controller_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/controller/testparams"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/orchestrator"
	"github.com/tandemdb/tandem/pkg/orchestrator/process"
)

// Sizes of BenchmarkLookupsBehindLargeScan: a full scan returns
// stallKeys rows of about stallValueSize bytes each.
const (
	stallKeys      = 50_000
	stallValueSize = 512
	stallLookups   = 200
)

// wideKVIndex is kvIndex with values of valueSize bytes.
func wideKVIndex(id, source uint64, keys, valueSize int, start frontier.Time) controller.Dataflow {
	d := &plan.DataflowDescription{
		ID: plan.User(id), DebugName: "wide kv index", Class: plan.ClassMaintained, Until: frontier.Closed(),
		SourceImports: []plan.SourceImport{{
			ID: plan.User(source),
			Desc: row.NewRelationDesc([]string{"key", "partition", "value"},
				[]row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}, {Type: row.TypeBytes}}),
			Connection: plan.SourceConnection{Kind: plan.SourceLoadGen, Options: map[string]string{
				"generator": "KEY VALUE", "keys": strconv.Itoa(keys), "tick_ms": "1000",
				"start": strconv.FormatUint(uint64(start), 10), "updates_per_tick": "1",
				"value_size": strconv.Itoa(valueSize),
			}},
		}},
		IndexExports: []plan.IndexExport{{ID: plan.User(id), On: plan.User(source), Key: []expr.Expr{expr.Column(0)}}},
	}
	df, err := controller.FromPlan(d)
	if err != nil {
		panic(err)
	}
	return df
}

// BenchmarkLookupsBehindLargeScan measures, side by side in one run,
// point-lookup latency through the controller and one real replica process
// (1 process, 2 workers) on a quiet system and while full scans of the same
// index (stallKeys rows, about stallKeys*stallValueSize bytes) run back to
// back. The lookups are issued every 5 ms from one goroutine; the reported
// ratio is behind-scan p99 over quiet p99. It is the response-path stall of
// docs/benchmarks.md (scans): the walk of a scan is short, so a lookup that
// waits seconds waits on the way back (replica stream, controller).
func BenchmarkLookupsBehindLargeScan(b *testing.B) {
	ctl, orch := hydratedWideKV(b, stallKeys, stallValueSize)
	ctx := context.Background()
	lookups := func() []time.Duration {
		lat := make([]time.Duration, 0, stallLookups)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for i := range stallLookups {
			<-tick.C
			req := controller.PeekRequest{Cluster: "default", Target: plan.User(1), LiteralKeys: [][]byte{row.Pack(row.Int64(int64(i * 97 % stallKeys)))}}
			t0 := time.Now()
			res, err := ctl.Peek(ctx, req)
			if err != nil || len(res.Rows) != 1 {
				b.Fatalf("lookup: %d rows, %v", len(res.Rows), err)
			}
			lat = append(lat, time.Since(t0))
		}
		return lat
	}
	scan := controller.PeekRequest{Cluster: "default", Target: plan.User(1)}
	if res, err := ctl.Peek(ctx, scan); err != nil || len(res.Rows) != stallKeys {
		b.Fatalf("warm-up scan: %d rows, %v", len(res.Rows), err)
	}
	var quiet, behind, scans []time.Duration
	for b.Loop() {
		quiet = append(quiet, lookups()...)
		sctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var mu sync.Mutex
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sctx.Err() == nil {
				t0 := time.Now()
				res, err := ctl.Peek(sctx, scan)
				if sctx.Err() != nil {
					return
				}
				if err != nil || len(res.Rows) != stallKeys {
					b.Errorf("scan: %d rows, %v", len(res.Rows), err)
					return
				}
				mu.Lock()
				scans = append(scans, time.Since(t0))
				mu.Unlock()
			}
		}()
		profiled := profileReplica(b, orch)
		behind = append(behind, lookups()...)
		stop()
		wg.Wait()
		profiled()
	}
	pct := func(lat []time.Duration, p int) float64 {
		if len(lat) == 0 {
			return 0
		}
		s := slices.Clone(lat)
		slices.Sort(s)
		return float64(s[min(len(s)-1, len(s)*p/100)].Microseconds()) / 1000
	}
	b.ReportMetric(pct(quiet, 50), "quiet-p50-ms")
	b.ReportMetric(pct(quiet, 99), "quiet-p99-ms")
	b.ReportMetric(pct(quiet, 100), "quiet-max-ms")
	b.ReportMetric(pct(behind, 50), "behind-p50-ms")
	b.ReportMetric(pct(behind, 99), "behind-p99-ms")
	b.ReportMetric(pct(behind, 100), "behind-max-ms")
	b.ReportMetric(pct(scans, 50), "scan-p50-ms")
	b.ReportMetric(float64(len(scans)), "scans")
	if q := pct(quiet, 99); q > 0 {
		b.ReportMetric(pct(behind, 99)/q, "p99-ratio")
	}
	b.Log(fmt.Sprintf("%d quiet and %d behind-scan lookups, %d scans", len(quiet), len(behind), len(scans)))
}

// profileReplica, when TANDEM_BENCH_REPLICA_PROFILE names a file, starts a
// 2 s CPU profile of the replica's process (its /debug/pprof endpoint) and
// returns a function that waits for it and writes it there.
func profileReplica(b *testing.B, orch *process.Orchestrator) func() {
	path := os.Getenv("TANDEM_BENCH_REPLICA_PROFILE")
	if path == "" {
		return func() {}
	}
	st, err := orch.Status(context.Background(), orchestrator.ReplicaID{Cluster: "default", Replica: "r1"})
	if err != nil || len(st.Processes) == 0 {
		b.Fatalf("replica status: %+v, %v", st, err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + st.Processes[0].InternalHTTPAddr + "/debug/pprof/profile?seconds=2")
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(path)
		if err != nil {
			done <- err
			return
		}
		_, err = io.Copy(f, resp.Body)
		done <- errors.Join(err, f.Close())
	}()
	return func() {
		if err := <-done; err != nil {
			b.Errorf("replica profile: %v", err)
		}
	}
}

// hydratedWideKV starts a controller with one real replica process (1
// process, 2 workers, the run's system parameters) and returns it once
// index u1 of keys rows of valueSize bytes has hydrated; everything is
// closed when the benchmark ends.
func hydratedWideKV(b *testing.B, keys, valueSize int) (*controller.Controller, *process.Orchestrator) {
	b.Helper()
	bin := realReplicaB(b)
	orch, err := process.New(process.Config{ReplicaBinary: bin, Log: logr.Discard(), LogDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { orch.Close() })
	ctl := controller.New(controller.Config{Log: logr.Discard(), Orchestrator: orch, Parameters: testparams.Parameters(b)})
	ctl.Start()
	b.Cleanup(ctl.Close)
	if err := ctl.CreateCluster("default"); err != nil {
		b.Fatal(err)
	}
	if err := ctl.CreateReplica(context.Background(), orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "default", Replica: "r1"}, Processes: 1, Workers: 2,
		Interactive: testparams.Interactive(b)}); err != nil {
		b.Fatal(err)
	}
	start := frontier.Time(time.Now().UnixMilli()) - 1000
	if _, err := ctl.CreateDataflow("default", wideKVIndex(1, 100, keys, valueSize, start)); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(120 * time.Second)
	for {
		st := ctl.Status()
		if len(st.Clusters[0].Replicas) == 1 && slices.Contains(st.Clusters[0].Replicas[0].Hydrated, plan.User(1)) {
			return ctl, orch
		}
		if time.Now().After(deadline) {
			b.Fatal("not hydrated")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
