package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// BenchmarkPointLookupPeek measures the protocol path of a point lookup:
// a Peek with one literal key on an index of KEY VALUE (100k keys) sent to
// a replica process over loopback gRPC, until its PeekResponse arrives.
// One peek in flight at a time; reports p50 and p99 round trips.
func BenchmarkPointLookupPeek(b *testing.B) {
	for _, workers := range []int{1, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			benchPointLookup(b, workers)
		})
	}
}

func benchPointLookup(b *testing.B, workers int) {
	r := startReplica(b, 1, workers, "--log-level", "warn").Processes[0].GRPCAddr
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	cc, err := grpc.NewClient(r, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Close()
	s, err := computepb.NewComputeClient(cc).CommandStream(ctx, grpc.WaitForReady(true))
	if err != nil {
		b.Fatal(err)
	}
	const keys = 100_000
	start := frontier.Time(time.Now().UnixMilli()-2000) / 1000 * 1000
	src, idx := plan.User(1), plan.User(2)
	desc := plan.DataflowDescription{
		ID: plan.User(3), DebugName: "key_value", Class: plan.ClassMaintained,
		SourceImports: []plan.SourceImport{{ID: src,
			Desc: row.NewRelationDesc([]string{"key", "partition", "value"},
				[]row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}, {Type: row.TypeBytes}}),
			Connection: plan.SourceConnection{Kind: plan.SourceLoadGen, Options: map[string]string{
				"generator": "KEY VALUE", "keys": fmt.Sprint(keys), "tick_ms": "1000", "start": fmt.Sprint(start)}}}},
		IndexExports: []plan.IndexExport{{ID: idx, On: src, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:         frontier.At(start), Until: frontier.Closed(),
	}
	pd, err := protocol.DataflowToProto(&desc)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []*computepb.Command{
		{Kind: &computepb.Command_Hello{Hello: &computepb.Hello{Nonce: "bench"}}},
		{Kind: &computepb.Command_CreateInstance{CreateInstance: &computepb.CreateInstance{}}},
		{Kind: &computepb.Command_CreateDataflow{CreateDataflow: &computepb.CreateDataflow{Dataflow: pd}}},
		{Kind: &computepb.Command_InitializationComplete{InitializationComplete: &computepb.InitializationComplete{}}},
	} {
		if err := s.Send(c); err != nil {
			b.Fatal(err)
		}
	}
	readAt := uint64(start + 1000) // the snapshot tick
	peek := func(i int, key int64) time.Duration {
		uuid := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		begin := time.Now()
		if err := s.Send(&computepb.Command{Kind: &computepb.Command_Peek{Peek: &computepb.Peek{
			Uuid: uuid, Target: protocol.GlobalIDToProto(idx), Timestamp: readAt, LiteralKeys: [][]byte{row.Pack(row.Int64(key))},
		}}}); err != nil {
			b.Fatal(err)
		}
		for {
			r, err := s.Recv()
			if err != nil {
				b.Fatal(err)
			}
			if pr := r.GetPeekResponse(); pr != nil && pr.GetUuid() == uuid {
				if n := len(pr.GetRows().GetRows()); n != 1 {
					b.Fatalf("key %d: %v", key, pr)
				}
				return time.Since(begin)
			}
		}
	}
	// Warm up: the first peek waits for hydration.
	peek(0, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		lat = append(lat, peek(i+1, rng.Int64N(keys)))
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
