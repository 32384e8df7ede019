package protocol

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// GlobalIDToProto encodes id. An invalid id encodes with the unspecified
// kind, which GlobalIDFromProto refuses.
func GlobalIDToProto(id plan.GlobalID) *computepb.GlobalId {
	k := computepb.GlobalIdKind_GLOBAL_ID_KIND_UNSPECIFIED
	switch id.Kind {
	case plan.KindUser:
		k = computepb.GlobalIdKind_GLOBAL_ID_KIND_USER
	case plan.KindSystem:
		k = computepb.GlobalIdKind_GLOBAL_ID_KIND_SYSTEM
	case plan.KindTransient:
		k = computepb.GlobalIdKind_GLOBAL_ID_KIND_TRANSIENT
	case plan.KindLocal:
		k = computepb.GlobalIdKind_GLOBAL_ID_KIND_LOCAL
	}
	return &computepb.GlobalId{Kind: k, N: id.N}
}

// GlobalIDFromProto decodes an id; an absent one or an unknown kind is a
// *DecodeError.
func GlobalIDFromProto(p *computepb.GlobalId) (plan.GlobalID, error) {
	if p == nil {
		return plan.GlobalID{}, &DecodeError{Err: errMissing}
	}
	var k byte
	switch p.GetKind() {
	case computepb.GlobalIdKind_GLOBAL_ID_KIND_USER:
		k = plan.KindUser
	case computepb.GlobalIdKind_GLOBAL_ID_KIND_SYSTEM:
		k = plan.KindSystem
	case computepb.GlobalIdKind_GLOBAL_ID_KIND_TRANSIENT:
		k = plan.KindTransient
	case computepb.GlobalIdKind_GLOBAL_ID_KIND_LOCAL:
		k = plan.KindLocal
	default:
		return plan.GlobalID{}, &DecodeError{Err: fmt.Errorf("global id: unknown kind %d", p.GetKind())}
	}
	return plan.GlobalID{Kind: k, N: p.GetN()}, nil
}
