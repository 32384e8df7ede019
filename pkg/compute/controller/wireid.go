package controller

import (
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// wireID is the GlobalId message of an id the controller keeps in its
// printed form. Those ids come from the catalog and the controller's own
// allocator, so a malformed one is a bug; it encodes as an absent id,
// which the replica refuses as a malformed command (never a panic).
func wireID(s string) *computepb.GlobalId {
	id, err := plan.ParseGlobalID(s)
	if err != nil {
		return nil
	}
	return protocol.GlobalIDToProto(id)
}

// idOf prints an id a replica sent; ok is false when it is absent or of an
// unknown kind (the response is then ignored: it names no collection).
func idOf(p *computepb.GlobalId) (id string, ok bool) {
	gid, err := protocol.GlobalIDFromProto(p)
	if err != nil {
		return "", false
	}
	return gid.String(), true
}
