package controller_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/controller/testparams"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/orchestrator"
	"github.com/tandemdb/tandem/pkg/orchestrator/process"
)

// BenchmarkPeekFastPath measures a literal-key index peek end to end
// through the controller and one real replica process (1 process, 2
// workers): timestamp selection, hold, gRPC round trip, merge, release.
func BenchmarkPeekFastPath(b *testing.B) {
	bin := realReplicaB(b)
	orch, err := process.New(process.Config{ReplicaBinary: bin, Log: logr.Discard(), LogDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer orch.Close()
	ctl := controller.New(controller.Config{Log: logr.Discard(), Orchestrator: orch, Parameters: testparams.Parameters(b)})
	ctl.Start()
	defer ctl.Close()
	if err := ctl.CreateCluster("default"); err != nil {
		b.Fatal(err)
	}
	if err := ctl.CreateReplica(context.Background(), orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "default", Replica: "r1"}, Processes: 1, Workers: 2,
		Interactive: testparams.Interactive(b)}); err != nil {
		b.Fatal(err)
	}
	start := frontier.Time(time.Now().UnixMilli()) - 1000
	if _, err := ctl.CreateDataflow("default", kvIndex(1, 100, 10000, start)); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := ctl.Status()
		if len(st.Clusters[0].Replicas) == 1 && slices.Contains(st.Clusters[0].Replicas[0].Hydrated, plan.User(1)) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("not hydrated")
		}
		time.Sleep(10 * time.Millisecond)
	}
	req := controller.PeekRequest{Cluster: "default", Target: plan.User(1), LiteralKeys: [][]byte{row.Pack(row.Int64(42))}}
	lat := make([]time.Duration, 0, 1024)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		res, err := ctl.Peek(context.Background(), req)
		if err != nil || len(res.Rows) != 1 {
			b.Fatalf("peek: %+v, %v", res, err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
}

func realReplicaB(b *testing.B) string {
	b.Helper()
	replicaOnce.Do(buildReplica)
	if replicaErr != nil {
		b.Fatal(replicaErr)
	}
	return replicaBin
}
