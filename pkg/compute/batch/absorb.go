package batch

import (
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// ErrNotEmpty reports an AbsorbEmpty whose older batch holds updates.
var ErrNotEmpty = errors.New("batch: absorbing a batch that holds updates")

// AbsorbEmpty returns what merging older, which holds no updates, with
// newer (adjacent: older.Upper() == newer.Lower()) gives, without a merge:
// newer's updates under the description [older.Lower(), newer.Upper()),
// its since the join of both inputs' sinces. It shares newer's columns,
// parts and arenas instead of copying them (and holds newer, whose cleanup
// releases them, for as long as it lives), so it costs no work and no
// memory in newer's size, where a Merger would read and rewrite all of
// newer to absorb nothing: an index whose snapshot arrives after a run of
// empty ticks would otherwise map a second copy of itself for the whole
// merge. No logical compaction is applied; reads at any time at or beyond
// since accumulate exactly what the merge's output would give.
func AbsorbEmpty(older, newer *Batch) (*Batch, error) {
	if older.desc.Upper != newer.desc.Lower {
		return nil, fmt.Errorf("absorb %v into %v: %w", older.desc, newer.desc, ErrNotAdjacent)
	}
	if older.Len() != 0 {
		return nil, fmt.Errorf("absorb %v (%d updates) into %v: %w", older.desc, older.Len(), newer.desc, ErrNotEmpty)
	}
	b := *newer
	b.desc = Description{
		Lower: older.desc.Lower,
		Upper: newer.desc.Upper,
		Since: frontier.Join(older.desc.Since, newer.desc.Since),
	}
	b.shares = newer
	return &b, nil
}
