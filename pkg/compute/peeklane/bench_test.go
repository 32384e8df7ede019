package peeklane

import (
	"context"
	"crypto/tls"
	"net"
	"path/filepath"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/internaltls"
)

// The transports a point read's round trip can take, each with the same
// shape on both sides as the real controller and replica: the caller
// queues the command for a sender goroutine; the replica's receiver hands
// it to one loop goroutine, which queues the answer for the replica's
// sender; the controller's receiver hands the answer to the waiting caller.
// The replica answers at once: what is left is the transport.

// roundTripper is one arm: send queues a command, answers arrive at the
// deliver function given to its constructor.
type roundTripper interface {
	send(*computepb.Command)
	close()
}

// stubReplica is the replica's loop: it answers each peek with one row.
type stubReplica struct {
	in chan stubRequest
}

type stubRequest struct {
	cmd   *computepb.Command
	reply func(*computepb.Response)
}

func newStubReplica(tb testing.TB) *stubReplica {
	s := &stubReplica{in: make(chan stubRequest, 64)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for r := range s.in {
			p := r.cmd.GetPeek()
			if p == nil {
				continue
			}
			r.reply(&computepb.Response{Kind: &computepb.Response_PeekResponse{PeekResponse: &computepb.PeekResponse{
				Uuid: p.GetUuid(),
				Result: &computepb.PeekResponse_Rows{Rows: &computepb.PeekRows{Rows: []*computepb.RowCount{
					{Row: []byte("\x01\x00\x00\x00\x00\x00\x00\x00\x2a\x01\x00\x00\x00\x00\x00\x00\x07"), Count: 1},
				}}},
			}}})
		}
	}()
	tb.Cleanup(func() { close(s.in); <-done })
	return s
}

// grpcReplica serves the stub over the compute protocol's gRPC stream,
// with the server's receiver and sender goroutines as in pkg/compute/server.
type grpcReplica struct {
	computepb.UnimplementedComputeServer
	stub *stubReplica
}

func (g *grpcReplica) CommandStream(stream computepb.Compute_CommandStreamServer) error {
	out := make(chan *computepb.Response, 1024)
	go func() {
		for {
			cmd, err := stream.Recv()
			if err != nil {
				close(out)
				return
			}
			g.stub.in <- stubRequest{cmd: cmd, reply: func(r *computepb.Response) { out <- r }}
		}
	}()
	for r := range out {
		if err := stream.Send(r); err != nil {
			return err
		}
	}
	return nil
}

type grpcArm struct {
	stream grpc.BidiStreamingClient[computepb.Command, computepb.Response]
	conn   *grpc.ClientConn
	queue  chan *computepb.Command
	cancel context.CancelFunc
}

func newGRPCArm(tb testing.TB, lis net.Listener, target string, server, client credentials.TransportCredentials, deliver func(*computepb.Response)) roundTripper {
	gs := grpc.NewServer(grpc.Creds(server))
	computepb.RegisterComputeServer(gs, &grpcReplica{stub: newStubReplica(tb)})
	go gs.Serve(lis)
	tb.Cleanup(gs.Stop)
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(client))
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := computepb.NewComputeClient(conn).CommandStream(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	a := &grpcArm{stream: stream, conn: conn, queue: make(chan *computepb.Command, 1024), cancel: cancel}
	go func() {
		for c := range a.queue {
			if a.stream.Send(c) != nil {
				return
			}
		}
	}()
	go func() {
		for {
			r, err := a.stream.Recv()
			if err != nil {
				return
			}
			deliver(r)
		}
	}()
	return a
}

func (a *grpcArm) send(c *computepb.Command) { a.queue <- c }
func (a *grpcArm) close()                    { a.cancel(); a.conn.Close() }

type laneArm struct{ cl *Client }

func newLaneArm(tb testing.TB, lis net.Listener, network, address string, cfg ServeConfig, client *tls.Config, deliver func(*computepb.Response)) roundTripper {
	stub := newStubReplica(tb)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Serve(ctx, lis, cfg, func(_ string, l *ServerLane) (func(*computepb.Command), func(), error) {
			return func(c *computepb.Command) {
				stub.in <- stubRequest{cmd: c, reply: func(r *computepb.Response) { l.Send(r) }}
			}, func() {}, nil
		})
	}()
	tb.Cleanup(func() { cancel(); <-done })
	cl, err := Dialer{TLS: client}.Dial(ctx, network, address, "bench", deliver)
	if err != nil {
		tb.Fatal(err)
	}
	return laneArm{cl}
}

func (a laneArm) send(c *computepb.Command) { a.cl.Send(c) }
func (a laneArm) close()                    { a.cl.Close() }

// testTLS issues a deployment CA and one certificate for both ends.
func testTLS(tb testing.TB) (server, client *tls.Config) {
	f := issue(tb, "replica")
	var err error
	if server, err = internaltls.ServerConfig(f); err != nil {
		tb.Fatal(err)
	}
	if client, err = internaltls.ClientConfig(f); err != nil {
		tb.Fatal(err)
	}
	return server, client
}

func tcpListener(tb testing.TB) net.Listener {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return lis
}

func unixListener(tb testing.TB) (net.Listener, string) {
	path := filepath.Join(tb.TempDir(), "s")
	lis, err := net.Listen("unix", path)
	if err != nil {
		tb.Fatal(err)
	}
	return lis, path
}

// arms builds every transport compared in BenchmarkPeekRoundTrip.
var arms = []struct {
	name string
	make func(tb testing.TB, deliver func(*computepb.Response)) roundTripper
}{
	{"grpc_mtls_tcp", func(tb testing.TB, d func(*computepb.Response)) roundTripper {
		s, c := testTLS(tb)
		lis := tcpListener(tb)
		return newGRPCArm(tb, lis, lis.Addr().String(), credentials.NewTLS(s), credentials.NewTLS(c), d)
	}},
	{"grpc_plain_tcp", func(tb testing.TB, d func(*computepb.Response)) roundTripper {
		lis := tcpListener(tb)
		return newGRPCArm(tb, lis, lis.Addr().String(), insecure.NewCredentials(), insecure.NewCredentials(), d)
	}},
	{"grpc_unix", func(tb testing.TB, d func(*computepb.Response)) roundTripper {
		lis, path := unixListener(tb)
		return newGRPCArm(tb, lis, "unix://"+path, insecure.NewCredentials(), insecure.NewCredentials(), d)
	}},
	{"lane_mtls_tcp", func(tb testing.TB, d func(*computepb.Response)) roundTripper {
		s, c := testTLS(tb)
		lis := tcpListener(tb)
		return newLaneArm(tb, lis, "tcp", lis.Addr().String(), ServeConfig{TLS: s}, c, d)
	}},
	{"lane_plain_tcp", func(tb testing.TB, d func(*computepb.Response)) roundTripper {
		lis := tcpListener(tb)
		return newLaneArm(tb, lis, "tcp", lis.Addr().String(), ServeConfig{}, nil, d)
	}},
	{"lane_unix", func(tb testing.TB, d func(*computepb.Response)) roundTripper {
		lis, path := unixListener(tb)
		return newLaneArm(tb, lis, "unix", path, ServeConfig{SameUser: true}, nil, d)
	}},
}

// waiters routes answers to the callers waiting for them.
type waiters struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

func (w *waiters) add(uuid string) chan struct{} {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	w.m[uuid] = ch
	w.mu.Unlock()
	return ch
}

func (w *waiters) deliver(r *computepb.Response) {
	uuid := r.GetPeekResponse().GetUuid()
	w.mu.Lock()
	ch := w.m[uuid]
	delete(w.m, uuid)
	w.mu.Unlock()
	if ch != nil {
		ch <- struct{}{}
	}
}

// goroutineWakeups estimates how many times goroutines were scheduled
// to run: the runtime samples one scheduling in gTrackingPeriod (8) of each
// goroutine into /sched/latencies:seconds.
func goroutineWakeups() float64 {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	var n uint64
	for _, c := range s[0].Value.Float64Histogram().Counts {
		n += c
	}
	return 8 * float64(n)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPeekRoundTrip measures one peek's round trip per transport,
// one caller at a time ("serial") and with many concurrent callers
// ("concurrent", 8 callers per GOMAXPROCS, where the lane's writer
// coalesces). cpu-us/op is the process's CPU (both ends, every goroutine)
// per round trip; wakeups/op the goroutines scheduled to run per round trip
// (the hand-offs, an estimate from the runtime's sampling).
func BenchmarkPeekRoundTrip(b *testing.B) {
	for _, arm := range arms {
		for _, par := range []int{1, 8} {
			name := arm.name + "/serial"
			if par > 1 {
				name = arm.name + "/concurrent"
			}
			b.Run(name, func(b *testing.B) {
				w := &waiters{m: map[string]chan struct{}{}}
				rt := arm.make(b, w.deliver)
				defer rt.close()
				var seq atomic.Int64
				roundTrip := func() {
					uuid := "00000000-0000-4000-8000-" + itoa12(seq.Add(1))
					ch := w.add(uuid)
					rt.send(&computepb.Command{Kind: &computepb.Command_Peek{Peek: &computepb.Peek{Uuid: uuid, Timestamp: 1}}})
					<-ch
				}
				for range 100 {
					roundTrip()
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu0, wake0 := cpuTime(), goroutineWakeups()
				if par == 1 {
					for b.Loop() {
						roundTrip()
					}
				} else {
					b.SetParallelism(par)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							roundTrip()
						}
					})
				}
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
				b.ReportMetric((goroutineWakeups()-wake0)/float64(b.N), "wakeups/op")
			})
		}
	}
}

func itoa12(n int64) string {
	var b [12]byte
	for i := 11; i >= 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[:])
}
