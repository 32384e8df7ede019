package server

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"google.golang.org/protobuf/proto"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// quietRuntime accepts everything and records nothing.
type quietRuntime struct{}

func (quietRuntime) CreateInstance(context.Context, InstanceConfig) error { return nil }
func (quietRuntime) CreateDataflow(context.Context, *Dataflow) error      { return nil }
func (quietRuntime) Schedule(context.Context, plan.GlobalID) error        { return nil }
func (quietRuntime) AllowCompaction(context.Context, plan.GlobalID, frontier.Frontier) error {
	return nil
}
func (quietRuntime) Peek(context.Context, *Peek) error                            { return nil }
func (quietRuntime) CancelPeek(context.Context, string)                           {}
func (quietRuntime) UpdateConfiguration(context.Context, map[string]string) error { return nil }

// FuzzCommand feeds arbitrary decodable commands to a running connection
// holding one index and checks that none crashes the server and that each
// is answered by at most one message: a refusal, or a peek's terminal
// response for its own uuid.
func FuzzCommand(f *testing.F) {
	for _, c := range []*computepb.Command{
		{},
		peekCmd(uuidN(1), "u1", 5),
		peekCmd(uuidN(1), "u1", 2),
		peekCmd(uuidN(1), "u7", 5),
		allowCompaction("u1", frontier.Closed()),
		allowCompaction("u1", frontier.At(9)),
		createDataflow(testDataflow{Name: "x", Indexes: []string{"u1"}, Plan: "p"}),
		createDataflow(testDataflow{Name: "y", Indexes: []string{"u2"}, Subscribes: []string{"u3"}, Plan: "p"}),
		cancelPeek(uuidN(1)),
		{Kind: &computepb.Command_Schedule{Schedule: &computepb.Schedule{Id: gid("u1")}}},
		{Kind: &computepb.Command_Schedule{Schedule: &computepb.Schedule{Id: &computepb.GlobalId{Kind: 42, N: 1}}}},
		{Kind: &computepb.Command_AllowCompaction{AllowCompaction: &computepb.AllowCompaction{Frontier: protocol.FrontierToProto(frontier.Closed())}}},
		hello("n2"),
		initDone(),
	} {
		b, err := proto.Marshal(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var cmd computepb.Command
		if proto.Unmarshal(data, &cmd) != nil {
			return
		}
		ctx := context.Background()
		s := New(Config{Backend: quietRuntime{}, Codec: testCodec{}, Log: logr.Discard()})
		c := &conn{nonce: "n", out: newOutQueue(), ctx: ctx, cancel: func(error) {}}
		if err := s.connect(ctx, c); err != nil {
			t.Fatal(err)
		}
		for _, setup := range []*computepb.Command{
			createInstance(&computepb.CreateInstance{}), createDataflow(df1), initDone(),
		} {
			s.command(ctx, c, setup)
		}
		if got, jobs := c.out.take(); len(got)+len(jobs) != 0 {
			t.Fatalf("setup answered %v", got)
		}
		s.command(ctx, c, &cmd)
		out, jobs := c.out.take()
		if len(jobs) != 0 {
			t.Fatalf("one command started %d stash jobs", len(jobs))
		}
		if len(out) > 1 && cmd.GetAllowCompaction() == nil {
			t.Fatalf("one command answered %d times: %v", len(out), out)
		}
		for _, r := range out {
			if pr := r.GetPeekResponse(); pr != nil {
				if pr.GetUuid() != cmd.GetPeek().GetUuid() || pr.GetError() == nil {
					t.Fatalf("peek answered with %v", pr)
				}
				if _, pending := s.st.peeks[pr.GetUuid()]; pending {
					t.Fatal("answered peek still pending")
				}
			}
		}
	})
}
