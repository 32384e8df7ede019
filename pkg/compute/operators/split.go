package operators

import (
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// ErrStraddle reports a batch list that cannot be cut at the requested
// frontier because one batch spans it: the caller's physical hold did not
// keep the cut.
var ErrStraddle = errors.New("operators: batch straddles the step start")

// SplitAt cuts a trace's batch list (in upper order, as trace handles return
// it, e.g. from BatchesThrough(f1)) into the batches before f0 (upper <= f0)
// and those after (lower >= f0): the old and fresh inputs of a step that
// starts at f0. A batch with lower < f0 < upper makes the cut impossible and
// is reported with ErrStraddle rather than silently misattributed.
func SplitAt(batches []*batch.Batch, f0 frontier.Frontier) (old, fresh []*batch.Batch, err error) {
	i := 0
	for ; i < len(batches); i++ {
		if !batches[i].Upper().LessEqual(f0) {
			break
		}
	}
	for _, b := range batches[i:] {
		if !f0.LessEqual(b.Lower()) {
			return nil, nil, fmt.Errorf("split at %v: batch %v: %w", f0, b.Description(), ErrStraddle)
		}
	}
	return batches[:i], batches[i:], nil
}
