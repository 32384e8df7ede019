package protocol

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

const testUUID = "0b9e3f5c-1d2a-4c6e-9f00-123456789abc"

func TestFrontierRoundTrip(t *testing.T) {
	for _, f := range []frontier.Frontier{frontier.Minimum(), frontier.At(5), frontier.At(frontier.MaxTime), frontier.Closed()} {
		if got := FrontierFromProto(FrontierToProto(f)); got != f {
			t.Errorf("round trip of %v = %v", f, got)
		}
	}
	if got := FrontierFromProto(nil); got != frontier.Minimum() {
		t.Errorf("nil frontier decoded as %v, want minimum", got)
	}
}

func TestValidate(t *testing.T) {
	peek := func(mod func(*computepb.Peek)) *computepb.Command {
		p := &computepb.Peek{Uuid: testUUID, Target: GlobalIDToProto(plan.User(12)), Timestamp: 3, LiteralKeys: [][]byte{{1}}}
		mod(p)
		return &computepb.Command{Kind: &computepb.Command_Peek{Peek: p}}
	}
	tests := []struct {
		name string
		cmd  *computepb.Command
		ok   bool
	}{
		{"hello", &computepb.Command{Kind: &computepb.Command_Hello{Hello: &computepb.Hello{Nonce: "n"}}}, true},
		{"hello without nonce", &computepb.Command{Kind: &computepb.Command_Hello{Hello: &computepb.Hello{}}}, false},
		{"empty command", &computepb.Command{}, false},
		{"nil command", nil, false},
		{"create instance", &computepb.Command{Kind: &computepb.Command_CreateInstance{CreateInstance: &computepb.CreateInstance{
			Logging: &computepb.LoggingConfig{Indexes: map[string]*computepb.GlobalId{"operators": GlobalIDToProto(plan.System(1))}}}}}, true},
		{"create instance bad log id", &computepb.Command{Kind: &computepb.Command_CreateInstance{CreateInstance: &computepb.CreateInstance{
			Logging: &computepb.LoggingConfig{Indexes: map[string]*computepb.GlobalId{"operators": {Kind: 9, N: 1}}}}}}, false},
		{"create instance absent log id", &computepb.Command{Kind: &computepb.Command_CreateInstance{CreateInstance: &computepb.CreateInstance{
			Logging: &computepb.LoggingConfig{Indexes: map[string]*computepb.GlobalId{"operators": nil}}}}}, false},
		{"init complete", &computepb.Command{Kind: &computepb.Command_InitializationComplete{InitializationComplete: &computepb.InitializationComplete{}}}, true},
		{"create dataflow empty", &computepb.Command{Kind: &computepb.Command_CreateDataflow{CreateDataflow: &computepb.CreateDataflow{}}}, false},
		{"create dataflow", &computepb.Command{Kind: &computepb.Command_CreateDataflow{CreateDataflow: &computepb.CreateDataflow{Dataflow: &computepb.DataflowDescription{}}}}, true},
		{"schedule", &computepb.Command{Kind: &computepb.Command_Schedule{Schedule: &computepb.Schedule{Id: GlobalIDToProto(plan.Transient(7))}}}, true},
		{"schedule no id", &computepb.Command{Kind: &computepb.Command_Schedule{Schedule: &computepb.Schedule{}}}, false},
		{"schedule unspecified kind", &computepb.Command{Kind: &computepb.Command_Schedule{Schedule: &computepb.Schedule{Id: &computepb.GlobalId{N: 3}}}}, false},
		{"schedule unknown kind", &computepb.Command{Kind: &computepb.Command_Schedule{Schedule: &computepb.Schedule{Id: &computepb.GlobalId{Kind: 42, N: 3}}}}, false},
		{"allow compaction", &computepb.Command{Kind: &computepb.Command_AllowCompaction{AllowCompaction: &computepb.AllowCompaction{
			Id: GlobalIDToProto(plan.User(1)), Frontier: &computepb.Frontier{Closed: true}}}}, true},
		{"allow compaction no id", &computepb.Command{Kind: &computepb.Command_AllowCompaction{AllowCompaction: &computepb.AllowCompaction{
			Frontier: &computepb.Frontier{Closed: true}}}}, false},
		{"allow compaction no frontier", &computepb.Command{Kind: &computepb.Command_AllowCompaction{AllowCompaction: &computepb.AllowCompaction{Id: GlobalIDToProto(plan.User(1))}}}, false},
		{"peek", peek(func(*computepb.Peek) {}), true},
		{"peek bad uuid", peek(func(p *computepb.Peek) { p.Uuid = "0b9e3f5c-1d2a-4c6e-9f00-123456789abZ" }), false},
		{"peek no target", peek(func(p *computepb.Peek) { p.Target = nil }), false},
		{"peek bad target kind", peek(func(p *computepb.Peek) { p.Target.Kind = 7 }), false},
		{"peek empty key", peek(func(p *computepb.Peek) { p.LiteralKeys = [][]byte{{}} }), false},
		{"peek bad class", peek(func(p *computepb.Peek) { p.TargetClass = 9 }), false},
		{"cancel", &computepb.Command{Kind: &computepb.Command_CancelPeek{CancelPeek: &computepb.CancelPeek{Uuid: testUUID}}}, true},
		{"cancel bad uuid", &computepb.Command{Kind: &computepb.Command_CancelPeek{CancelPeek: &computepb.CancelPeek{Uuid: "x"}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.cmd)
			if (err == nil) != tt.ok {
				t.Fatalf("Validate = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
		})
	}
}

func TestCommandKindCoversEveryCommand(t *testing.T) {
	// Every oneof case of Command must have a name; a new command added to
	// the proto without one would be counted as "unknown".
	oneof := (&computepb.Command{}).ProtoReflect().Descriptor().Oneofs().ByName("kind")
	fields := oneof.Fields()
	if fields.Len() != len(CommandKinds) {
		t.Fatalf("proto has %d commands, CommandKinds %d", fields.Len(), len(CommandKinds))
	}
	for i := 0; i < fields.Len(); i++ {
		name := string(fields.Get(i).Name())
		if name != CommandKinds[i] {
			t.Errorf("command %d is %q, CommandKinds says %q", i, name, CommandKinds[i])
		}
	}
}

// FuzzDecodeCommand checks that arbitrary bytes never crash decoding or
// validation, and that a command that validates still validates after a
// re-encoding round trip.
func FuzzDecodeCommand(f *testing.F) {
	seeds := []*computepb.Command{
		{Kind: &computepb.Command_Hello{Hello: &computepb.Hello{Nonce: "abc"}}},
		{Kind: &computepb.Command_Peek{Peek: &computepb.Peek{Uuid: testUUID, Target: GlobalIDToProto(plan.User(3)), LiteralKeys: [][]byte{{0x10, 2}}}}},
		{Kind: &computepb.Command_AllowCompaction{AllowCompaction: &computepb.AllowCompaction{Id: GlobalIDToProto(plan.System(9)), Frontier: &computepb.Frontier{Time: 4}}}},
		{Kind: &computepb.Command_AllowCompaction{AllowCompaction: &computepb.AllowCompaction{Frontier: &computepb.Frontier{Time: 4}}}},
		{Kind: &computepb.Command_Schedule{Schedule: &computepb.Schedule{Id: GlobalIDToProto(plan.Transient(7))}}},
		{Kind: &computepb.Command_Schedule{Schedule: &computepb.Schedule{Id: &computepb.GlobalId{Kind: 42, N: 1}}}},
		{Kind: &computepb.Command_CreateInstance{CreateInstance: &computepb.CreateInstance{Logging: &computepb.LoggingConfig{
			Indexes: map[string]*computepb.GlobalId{"operators": GlobalIDToProto(plan.System(1)), "peeks": nil}}}}},
	}
	for _, s := range seeds {
		b, err := proto.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c computepb.Command
		if err := proto.Unmarshal(data, &c); err != nil {
			return
		}
		if Validate(&c) != nil {
			return
		}
		b, err := proto.Marshal(&c)
		if err != nil {
			t.Fatalf("re-marshal: %v", err)
		}
		var d computepb.Command
		if err := proto.Unmarshal(b, &d); err != nil {
			t.Fatalf("re-unmarshal: %v", err)
		}
		if err := Validate(&d); err != nil {
			t.Fatalf("valid command invalid after round trip: %v", err)
		}
		if CommandKind(&c) != CommandKind(&d) {
			t.Fatalf("kind changed in round trip")
		}
	})
}
