package controller

import (
	"regexp"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// TestNewUUID: canonical version-4 form, accepted by the protocol's
// validation, and no repeats.
func TestNewUUID(t *testing.T) {
	form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 10000 {
		u := newUUID()
		if !form.MatchString(u) {
			t.Fatalf("uuid %q is not a canonical version-4 uuid", u)
		}
		if seen[u] {
			t.Fatalf("uuid %q repeated", u)
		}
		seen[u] = true
	}
	peek := &computepb.Command{Kind: &computepb.Command_CancelPeek{CancelPeek: &computepb.CancelPeek{Uuid: newUUID()}}}
	if err := protocol.Validate(peek); err != nil {
		t.Fatal(err)
	}
}
