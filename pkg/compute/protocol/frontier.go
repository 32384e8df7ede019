package protocol

import (
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// FrontierToProto encodes f.
func FrontierToProto(f frontier.Frontier) *computepb.Frontier {
	t, ok := f.Time()
	if !ok {
		return &computepb.Frontier{Closed: true}
	}
	return &computepb.Frontier{Time: uint64(t)}
}

// FrontierFromProto decodes p. A nil p is the minimum frontier, which is what
// an absent field means on the wire.
func FrontierFromProto(p *computepb.Frontier) frontier.Frontier {
	switch {
	case p == nil:
		return frontier.Minimum()
	case p.GetClosed():
		return frontier.Closed()
	default:
		return frontier.At(frontier.Time(p.GetTime()))
	}
}
