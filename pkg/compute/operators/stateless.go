package operators

import "github.com/tandemdb/tandem/pkg/compute/frontier"

// Negate returns an Emit that forwards every update to emit with its diff
// negated: the stateless Negate operator. Union needs no function of its
// own: both inputs emit into the same downstream Emit.
func Negate(emit Emit) Emit {
	return func(r []byte, t frontier.Time, diff int64) { emit(r, t, -diff) }
}
