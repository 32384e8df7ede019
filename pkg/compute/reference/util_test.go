package reference

import (
	"bytes"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/operators"
)

func sortValDiffs(vs []operators.ValDiff) {
	slices.SortFunc(vs, func(a, b operators.ValDiff) int { return bytes.Compare(a.Val, b.Val) })
}
