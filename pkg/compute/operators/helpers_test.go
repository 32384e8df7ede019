package operators

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// kv is one arranged update in tests.
type kv struct {
	key, val row.Row
	t        frontier.Time
	d        int64
}

func i64(v int64) row.Datum { return row.Int64(v) }

func pack(ds ...row.Datum) row.Row { return row.Pack(ds...) }

// mkBatch builds a batch covering [lower, upper).
// fataler is the part of testing.TB and *rapid.T that helpers use.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func mkBatch(tb fataler, lower, upper frontier.Time, upds ...kv) *batch.Batch {
	tb.Helper()
	var b batch.Builder
	for _, u := range upds {
		b.Push(u.key, u.val, u.t, u.d)
	}
	bat, err := b.Build(batch.Description{Lower: frontier.At(lower), Upper: frontier.At(upper), Since: frontier.At(0)})
	if err != nil {
		tb.Fatalf("build batch: %v", err)
	}
	return bat
}

// rowText renders a row as "(1, a, NULL)" for readable failures.
func rowText(r []byte) string {
	ds, err := row.Row(r).Unpack()
	if err != nil {
		return fmt.Sprintf("corrupt(%x)", r)
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// collector consolidates emitted updates by (row text, time).
type collector struct {
	rows  map[string]int64
	errs  map[string]int64
	count int // updates and errors emitted
}

func newCollector() *collector {
	return &collector{rows: map[string]int64{}, errs: map[string]int64{}}
}

func (c *collector) emit(r []byte, t frontier.Time, d int64) {
	c.count++
	k := fmt.Sprintf("%s@%d", rowText(r), t)
	c.rows[k] += d
	if c.rows[k] == 0 {
		delete(c.rows, k)
	}
}

func (c *collector) emitErr(err error, t frontier.Time, d int64) {
	c.count++
	k := fmt.Sprintf("%s@%d", err.Error(), t)
	c.errs[k] += d
	if c.errs[k] == 0 {
		delete(c.errs, k)
	}
}

// lines renders a consolidated map as sorted "row@t:diff" lines.
func lines(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s:%+d", k, m[k]))
	}
	return out
}

func checkLines(t *testing.T, what string, got map[string]int64, want []string) {
	t.Helper()
	g := lines(got)
	w := slices.Clone(want)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Errorf("%s:\n got  %q\n want %q", what, g, w)
	}
}
