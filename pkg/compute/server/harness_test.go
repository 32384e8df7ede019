package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// fakeRuntime records the calls the server makes, in order.
type fakeRuntime struct {
	calls   chan string
	mu      sync.Mutex
	failing map[string]error // call prefix -> error to return
}

func newFakeRuntime() *fakeRuntime {
	return &fakeRuntime{calls: make(chan string, 1024), failing: map[string]error{}}
}

func (f *fakeRuntime) record(call string) error {
	f.calls <- call
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failing[call]
}

func (f *fakeRuntime) fail(call string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failing[call] = err
}

func (f *fakeRuntime) CreateInstance(_ context.Context, cfg InstanceConfig) error {
	return f.record("instance")
}
func (f *fakeRuntime) CreateDataflow(_ context.Context, df *Dataflow) error {
	return f.record("create " + df.Description.(testDataflow).Name)
}
func (f *fakeRuntime) Schedule(_ context.Context, id plan.GlobalID) error {
	return f.record("schedule " + id.String())
}
func (f *fakeRuntime) AllowCompaction(_ context.Context, id plan.GlobalID, fr frontier.Frontier) error {
	return f.record("compact " + id.String() + " " + fr.String())
}
func (f *fakeRuntime) Peek(_ context.Context, p *Peek) error { return f.record("peek " + p.UUID) }
func (f *fakeRuntime) CancelPeek(_ context.Context, uuid string) {
	_ = f.record("cancel " + uuid)
}
func (f *fakeRuntime) UpdateConfiguration(_ context.Context, params map[string]string) error {
	return f.record(fmt.Sprintf("config %d", len(params)))
}

// expect waits for the next runtime calls and checks them.
func (f *fakeRuntime) expect(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		select {
		case got := <-f.calls:
			if got != w {
				t.Fatalf("runtime call %q, want %q", got, w)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("runtime call %q never came", w)
		}
	}
}

// expectNone checks that no runtime call is pending.
func (f *fakeRuntime) expectNone(t *testing.T) {
	t.Helper()
	select {
	case got := <-f.calls:
		t.Fatalf("unexpected runtime call %q", got)
	case <-time.After(50 * time.Millisecond):
	}
}

// testCodec decodes a testDataflow carried in a DataflowDescription:
// debug_name is "NAME|PLAN", the exports' ids are the indexes and
// subscribes, as_of and until as they are. Plan "invalid" fails; a
// description without a debug name does not decode.
type testCodec struct{}

type testDataflow struct {
	Name       string
	Indexes    []string
	Subscribes []string
	AsOf       uint64
	Until      *uint64
	Plan       string
}

func (d testDataflow) proto() *computepb.DataflowDescription {
	p := &computepb.DataflowDescription{DebugName: d.Name + "|" + d.Plan, AsOf: &computepb.Frontier{Time: d.AsOf}, Until: &computepb.Frontier{Closed: true}}
	if d.Until != nil {
		p.Until = &computepb.Frontier{Time: *d.Until}
	}
	id := gid
	for _, ix := range d.Indexes {
		p.IndexExports = append(p.IndexExports, &computepb.IndexExport{Id: id(ix)})
	}
	for _, s := range d.Subscribes {
		p.SubscribeSinks = append(p.SubscribeSinks, &computepb.SubscribeSink{Id: id(s)})
	}
	return p
}

func (testCodec) Decode(p *computepb.DataflowDescription) (*Dataflow, error) {
	name, pl, ok := strings.Cut(p.GetDebugName(), "|")
	if !ok {
		return nil, errors.New("test dataflow without a name")
	}
	d := testDataflow{Name: name, Plan: pl, AsOf: p.GetAsOf().GetTime()}
	if !p.GetUntil().GetClosed() {
		u := p.GetUntil().GetTime()
		d.Until = &u
	}
	for _, ix := range p.GetIndexExports() {
		id, _ := protocol.GlobalIDFromProto(ix.GetId())
		d.Indexes = append(d.Indexes, id.String())
	}
	for _, s := range p.GetSubscribeSinks() {
		id, _ := protocol.GlobalIDFromProto(s.GetId())
		d.Subscribes = append(d.Subscribes, id.String())
	}
	// The dataflow's id is its first export's, as the controller names
	// dataflows.
	df := &Dataflow{Indexes: parseIDs(d.Indexes), Subscribes: parseIDs(d.Subscribes), Description: d}
	if exports := df.Exports(); len(exports) > 0 {
		df.ID = exports[0]
	}
	if d.Plan == "invalid" {
		return nil, &InvalidDataflowError{ID: df.ID, Err: errors.New("plan does not type-check")}
	}
	df.Until = frontier.Closed()
	if d.Until != nil {
		df.Until = frontier.At(frontier.Time(*d.Until))
	}
	df.AsOf = frontier.At(frontier.Time(d.AsOf))
	return df, nil
}

func (testCodec) Compatible(running, desired *Dataflow) bool {
	r, d := running.Description.(testDataflow), desired.Description.(testDataflow)
	return r.Plan == d.Plan && running.AsOf.LessEqual(desired.AsOf)
}

// gid is the wire form of a printed id; it panics on a malformed one.
func gid(s string) *computepb.GlobalId {
	id, err := plan.ParseGlobalID(s)
	if err != nil {
		panic(err)
	}
	return protocol.GlobalIDToProto(id)
}

// idString prints a wire id ("" when absent or malformed).
func idString(p *computepb.GlobalId) string {
	id, err := protocol.GlobalIDFromProto(p)
	if err != nil {
		return ""
	}
	return id.String()
}

func parseIDs(ss []string) []plan.GlobalID {
	var out []plan.GlobalID
	for _, s := range ss {
		id, err := plan.ParseGlobalID(s)
		if err != nil {
			panic(err)
		}
		out = append(out, id)
	}
	return out
}

// harness runs a server on an in-memory listener.
type harness struct {
	t      *testing.T
	rt     *fakeRuntime
	srv    *Server
	cc     *grpc.ClientConn
	client computepb.ComputeClient
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, nil)
}

// newHarnessWith is newHarness with the server's metrics going to m.
func newHarnessWith(t *testing.T, m Metrics) *harness {
	t.Helper()
	return newHarnessConfig(t, Config{Metrics: m})
}

// newHarnessConfig is newHarness with cfg's optional fields (the runtime,
// codec and log are the harness's).
func newHarnessConfig(t *testing.T, cfg Config) *harness {
	t.Helper()
	rt := newFakeRuntime()
	cfg.Backend, cfg.Codec, cfg.Log = rt, testCodec{}, logr.Discard()
	srv := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
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
	t.Cleanup(func() {
		cc.Close()
		cancel()
		gs.Stop()
		wg.Wait()
	})
	return &harness{t: t, rt: rt, srv: srv, cc: cc, client: computepb.NewComputeClient(cc)}
}

// stream is one controller connection under test.
type stream struct {
	t      *testing.T
	cancel context.CancelFunc
	s      computepb.Compute_CommandStreamClient
	resp   chan *computepb.Response
	err    chan error
}

func (h *harness) open(nonce string) *stream {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := h.client.CommandStream(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	st := &stream{t: h.t, cancel: cancel, s: s, resp: make(chan *computepb.Response, 1024), err: make(chan error, 1)}
	h.t.Cleanup(cancel)
	go func() {
		for {
			r, err := s.Recv()
			if err != nil {
				st.err <- err
				close(st.resp)
				return
			}
			st.resp <- r
		}
	}()
	if nonce != "" {
		st.send(hello(nonce))
	}
	return st
}

func (s *stream) send(cmds ...*computepb.Command) {
	s.t.Helper()
	for _, c := range cmds {
		if err := s.s.Send(c); err != nil {
			s.t.Fatalf("send %s: %v", protocol.CommandKind(c), err)
		}
	}
}

func (s *stream) recv() *computepb.Response {
	s.t.Helper()
	select {
	case r, ok := <-s.resp:
		if !ok {
			s.t.Fatalf("stream ended: %v", <-s.err)
		}
		return r
	case <-time.After(5 * time.Second):
		s.t.Fatal("no response within 5s")
	}
	return nil
}

// expectNone checks that nothing arrives for a short while.
func (s *stream) expectNone() {
	s.t.Helper()
	select {
	case r, ok := <-s.resp:
		if ok {
			s.t.Fatalf("unexpected response %v", r)
		}
	case <-time.After(50 * time.Millisecond):
	}
}

// ended waits for the stream to end and returns its error.
func (s *stream) ended() error {
	s.t.Helper()
	for {
		select {
		case _, ok := <-s.resp:
			if !ok {
				return <-s.err
			}
		case <-time.After(5 * time.Second):
			s.t.Fatal("stream did not end")
		}
	}
}

func hello(nonce string) *computepb.Command {
	return &computepb.Command{Kind: &computepb.Command_Hello{Hello: &computepb.Hello{Nonce: nonce}}}
}

func createInstance(ci *computepb.CreateInstance) *computepb.Command {
	return &computepb.Command{Kind: &computepb.Command_CreateInstance{CreateInstance: ci}}
}

func initDone() *computepb.Command {
	return &computepb.Command{Kind: &computepb.Command_InitializationComplete{InitializationComplete: &computepb.InitializationComplete{}}}
}

func createDataflow(d testDataflow) *computepb.Command {
	return &computepb.Command{Kind: &computepb.Command_CreateDataflow{CreateDataflow: &computepb.CreateDataflow{Dataflow: d.proto()}}}
}

func allowCompaction(id string, f frontier.Frontier) *computepb.Command {
	return &computepb.Command{Kind: &computepb.Command_AllowCompaction{AllowCompaction: &computepb.AllowCompaction{Id: gid(id), Frontier: protocol.FrontierToProto(f)}}}
}

func peekCmd(uuid, target string, ts uint64) *computepb.Command {
	gid, err := plan.ParseGlobalID(target)
	if err != nil {
		panic(err)
	}
	return &computepb.Command{Kind: &computepb.Command_Peek{Peek: &computepb.Peek{Uuid: uuid, Target: protocol.GlobalIDToProto(gid), Timestamp: ts}}}
}

func cancelPeek(uuid string) *computepb.Command {
	return &computepb.Command{Kind: &computepb.Command_CancelPeek{CancelPeek: &computepb.CancelPeek{Uuid: uuid}}}
}

func uuidN(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

func ptr[T any](v T) *T { return &v }
