package server

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
)

// TestEngineEndToEnd drives the real runtime through the server over gRPC
// in one process (so the race detector sees the whole path): a COUNTER
// index is built, hydrates, answers a point lookup and a scan, and closes
// when dropped.
func TestEngineEndToEnd(t *testing.T) {
	var rt *runtime.Runtime
	srv, err := NewWithBackend(Config{Codec: PlanCodec{}, Log: logr.Discard()}, func(deliver func(Event)) (Backend, error) {
		return NewEngine(deliver, logr.Discard(), func(respond func(runtime.Response)) (runtime.Commands, error) {
			var err error
			rt, err = runtime.New(runtime.Config{Workers: 2, Processes: 1, Role: runtime.Solo,
				Sources: render.SourceKinds{plan.SourceLoadGen: render.LoadGenerators{}}, Respond: respond})
			return rt, err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rt.Start(ctx)
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer()
	computepb.RegisterComputeServer(gs, srv)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = srv.Run(ctx) }()
	go func() { defer wg.Done(); _ = gs.Serve(lis) }()
	cc, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cc.Close()
		cancel()
		gs.Stop()
		wg.Wait()
		rt.Stop()
	}()
	h := &harness{t: t, srv: srv, cc: cc, client: computepb.NewComputeClient(cc)}

	const tick = 20
	start := frontier.Time(time.Now().UnixMilli()) - 10*tick
	desc := plan.DataflowDescription{
		ID: plan.User(1), DebugName: "counter", Class: plan.ClassMaintained,
		SourceImports: []plan.SourceImport{{ID: plan.User(2),
			Desc: row.NewRelationDesc([]string{"counter"}, []row.ColumnType{{Type: row.TypeInt64}}),
			Connection: plan.SourceConnection{Kind: plan.SourceLoadGen, Options: map[string]string{
				"generator": "COUNTER", "tick_ms": fmt.Sprint(tick), "start": fmt.Sprint(start)}}}},
		IndexExports: []plan.IndexExport{{ID: plan.User(3), On: plan.User(2), Key: []expr.Expr{expr.Column(0)}}},
		AsOf:         frontier.At(start), Until: frontier.Closed(),
	}
	pd, err := protocol.DataflowToProto(&desc)
	if err != nil {
		t.Fatal(err)
	}
	s := h.open("n1")
	s.send(createInstance(&computepb.CreateInstance{}),
		&computepb.Command{Kind: &computepb.Command_CreateDataflow{CreateDataflow: &computepb.CreateDataflow{Dataflow: pd}}},
		initDone())
	peek := &computepb.Peek{Uuid: uuidN(1), Target: protocol.GlobalIDToProto(plan.User(3)), Timestamp: uint64(start + 5*tick),
		LiteralKeys: [][]byte{row.Pack(row.Int64(4)), row.Pack(row.Int64(7))}}
	s.send(&computepb.Command{Kind: &computepb.Command_Peek{Peek: peek}})
	var hydrated, answered bool
	for !hydrated || !answered {
		r := s.recv()
		switch {
		case r.GetFrontiers() != nil:
			if w := r.GetFrontiers().GetWrite(); w != nil && w.GetTime() < uint64(start) {
				t.Fatalf("frontier %v below as_of %d", w, start)
			}
		case r.GetStatus() != nil:
			hydrated = true
		case r.GetPeekResponse() != nil:
			rows := r.GetPeekResponse().GetRows().GetRows()
			if len(rows) != 1 || row.Row(rows[0].GetRow()).String() != "(4)" {
				t.Fatalf("point lookup: %v", r.GetPeekResponse())
			}
			answered = true
		default:
			t.Fatalf("unexpected %v", r)
		}
	}
	s.send(allowCompaction("u3", frontier.Closed()))
	for {
		if f := s.recv().GetFrontiers(); idString(f.GetId()) == "u3" && f.GetWrite().GetClosed() {
			break
		}
	}
}
