package protocol

import (
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// pointReadMFP is the MFP of a typical point read through an index: a
// residual filter and a projection (what the SQL planner sends for
// SELECT b, c FROM t WHERE a = $1 AND c > 0).
func pointReadMFP() expr.MFP {
	return expr.Identity(3).
		Filter(expr.Gt(expr.Column(2), expr.Literal(row.Int64(0))), expr.Not(expr.IsNull(expr.Column(1)))).
		Project(1, 2)
}

// BenchmarkDecodePointReadPeek decodes the replica's side of a point-read
// peek: the command bytes off the wire, then the MFP. "json" is how the
// MFP travelled before (JSON bytes inside the protobuf, decoded with
// encoding/json), kept here only for comparison; "protobuf" is the wire
// now. Compare allocs/op and B/op (docs/benchmarks.md, "Protocol path").
func BenchmarkDecodePointReadPeek(b *testing.B) {
	m := pointReadMFP()
	base := &computepb.Peek{Uuid: "0b9e3f5c-1d2a-4c6e-9f00-123456789abc", Target: GlobalIDToProto(plan.User(21)), Timestamp: 1,
		LiteralKeys: [][]byte{row.Pack(row.Int64(7))}}
	b.Run("json", func(b *testing.B) {
		js, err := json.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		// The former field 5 (map_filter_project) carried the JSON bytes;
		// a bytes field of the same size stands in for it on the wire.
		p := proto.Clone(base).(*computepb.Peek)
		p.LiteralKeys = append(p.LiteralKeys, js)
		wire, err := proto.Marshal(p)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetBytes(int64(len(wire)))
		for b.Loop() {
			var q computepb.Peek
			if err := proto.Unmarshal(wire, &q); err != nil {
				b.Fatal(err)
			}
			var got expr.MFP
			if err := json.Unmarshal(q.GetLiteralKeys()[1], &got); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("protobuf", func(b *testing.B) {
		p := proto.Clone(base).(*computepb.Peek)
		p.Mfp = MFPToProto(&m)
		wire, err := proto.Marshal(p)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetBytes(int64(len(wire)))
		for b.Loop() {
			var q computepb.Peek
			if err := proto.Unmarshal(wire, &q); err != nil {
				b.Fatal(err)
			}
			if _, err := MFPFromProto(q.GetMfp()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
