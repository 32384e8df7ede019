package environment

import (
	"slices"
	"sync"

	"github.com/tandemdb/tandem/pkg/sql"
)

// decoded keeps the catalog's items, roles and grants as the SQL layer
// sees them, decoded once per catalog generation: every statement reads
// them, and decoding every item's JSON per statement was a third of a
// point read's controller CPU. Callers get their own copy of each slice;
// the values inside (plans, descriptions) are shared and never mutated.
type decoded struct {
	mu     sync.Mutex
	items  cached[sql.Item]
	roles  cached[sql.Role]
	grants cached[sql.Grant]
}

// cached is one decoded list and the generation it was read at.
type cached[T any] struct {
	valid bool
	gen   uint64
	list  []T
}

// get returns c's list when it was decoded at gen, and otherwise decodes
// it with load. The generation is read before the list, so a list that is
// newer than gen is only ever replaced, never served for a later state.
func get[T any](mu *sync.Mutex, c *cached[T], gen uint64, load func() ([]T, error)) ([]T, error) {
	mu.Lock()
	if c.valid && c.gen == gen {
		out := slices.Clone(c.list)
		mu.Unlock()
		return out, nil
	}
	mu.Unlock()
	list, err := load()
	if err != nil {
		return nil, err
	}
	mu.Lock()
	*c = cached[T]{valid: true, gen: gen, list: list}
	mu.Unlock()
	return slices.Clone(list), nil
}
