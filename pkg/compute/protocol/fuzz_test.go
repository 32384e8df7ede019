package protocol

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// FuzzDecodeDataflow checks that no bytes make decoding or validating a
// dataflow description panic, and that one that decodes re-encodes to
// bytes that decode and re-encode to the same bytes (the conversion is
// stable; TestDataflowRoundTrip checks equality of values). Seeds:
// testdata/fuzz/FuzzDecodeDataflow (every_node has every node kind).
func FuzzDecodeDataflow(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := UnmarshalDataflow(b)
		if err != nil {
			return
		}
		_ = d.Validate()
		again, err := MarshalDataflow(d)
		if err != nil {
			return // e.g. a plan node the encoder refuses
		}
		d2, err := UnmarshalDataflow(again)
		if err != nil {
			t.Fatalf("re-encoded description does not decode: %v", err)
		}
		third, err := MarshalDataflow(d2)
		if err != nil || string(third) != string(again) {
			t.Fatalf("re-encoding is not stable (%v)", err)
		}
	})
}

// FuzzDecodePeek checks that no bytes make decoding a peek (its command
// validation, target, MFP and finishing) or preparing and evaluating its
// MFP panic.
func FuzzDecodePeek(f *testing.F) {
	m := expr.Identity(2).Filter(expr.Eq(expr.Column(0), expr.Literal(row.Int64(3)))).Map(expr.Add(expr.Column(0), expr.Literal(row.Int64(1)))).Project(2, 1)
	limit := int64(4)
	p := &computepb.Peek{Uuid: "0b9e3f5c-1d2a-4c6e-9f00-123456789abc", Target: GlobalIDToProto(plan.User(3)), Timestamp: 9,
		LiteralKeys: [][]byte{row.Pack(row.Int64(3))}, Mfp: MFPToProto(&m),
		Finishing: FinishingToProto(&plan.Finishing{Order: []plan.ColumnOrder{{Column: 1, Desc: true}}, Limit: &limit})}
	b, err := proto.Marshal(p)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	input := []row.Datum{row.Int64(3), row.Text("x")}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p computepb.Peek
		if proto.Unmarshal(b, &p) != nil {
			return
		}
		_ = Validate(&computepb.Command{Kind: &computepb.Command_Peek{Peek: &p}})
		_, _ = GlobalIDFromProto(p.GetTarget())
		if f, err := FinishingFromProto(p.GetFinishing()); err == nil && f != nil {
			_ = f.Validate(2)
		}
		if p.GetMfp() == nil {
			return
		}
		m, err := MFPFromProto(p.GetMfp())
		if err != nil {
			return
		}
		prep, err := m.Prepare(len(input))
		if err != nil {
			return
		}
		_, _, _ = prep.Evaluate(input, nil)
	})
}
