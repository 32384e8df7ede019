package reference

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Update is one change of a collection: row, time, diff.
type Update struct {
	Row  row.Row
	Time frontier.Time
	Diff int64
}

// Collection is a multiset of rows: the encoded row (as a string, so it can
// be a map key) to its multiplicity. Zero multiplicities are never stored.
type Collection map[string]int64

// AsOf accumulates updates with time <= t.
func AsOf(upds []Update, t frontier.Time) Collection {
	c := Collection{}
	for _, u := range upds {
		if u.Time <= t {
			c.add(string(u.Row), u.Diff)
		}
	}
	return c
}

func (c Collection) add(r string, n int64) {
	if n == 0 {
		return
	}
	if m := c[r] + n; m != 0 {
		c[r] = m
	} else {
		delete(c, r)
	}
}

// Equal reports whether c and d hold the same rows with the same
// multiplicities.
func (c Collection) Equal(d Collection) bool { return maps.Equal(c, d) }

// String renders the collection as sorted "(datums) xN" lines, for test
// failures.
func (c Collection) String() string {
	var sb strings.Builder
	for _, r := range slices.Sorted(maps.Keys(c)) {
		fmt.Fprintf(&sb, "%s x%d\n", FormatRow(row.Row(r)), c[r])
	}
	return sb.String()
}

// FormatRow renders an encoded row as "(1, a, NULL)".
func FormatRow(r row.Row) string {
	ds, err := r.Unpack()
	if err != nil {
		return fmt.Sprintf("corrupt(%x)", []byte(r))
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// Diff returns c - d, for reporting.
func Diff(c, d Collection) Collection {
	out := Collection{}
	for r, n := range c {
		out.add(r, n)
	}
	for r, n := range d {
		out.add(r, -n)
	}
	return out
}
