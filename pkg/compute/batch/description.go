package batch

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// Description says which times a batch covers. Its updates are those with
// Lower <= time < Upper, except that logical compaction may have advanced a
// time to Since (never beyond Since): reads at times t >= Since are exact.
// Two batches are adjacent when the first's Upper equals the second's Lower.
type Description struct {
	Lower, Upper, Since frontier.Frontier
}

// String prints the description in the canonical frontier form.
func (d Description) String() string {
	return fmt.Sprintf("[lower %v upper %v since %v]", d.Lower, d.Upper, d.Since)
}

// Validate reports whether Lower <= Upper.
func (d Description) Validate() error {
	if !d.Lower.LessEqual(d.Upper) {
		return fmt.Errorf("batch description %v: lower beyond upper", d)
	}
	return nil
}
