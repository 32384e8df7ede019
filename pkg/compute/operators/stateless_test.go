package operators

import "testing"

func TestNegate(t *testing.T) {
	c := newCollector()
	neg := Negate(c.emit)
	neg(pack(i64(1)), 3, 2)
	neg(pack(i64(2)), 4, -1)
	checkLines(t, "rows", c.rows, []string{"(1)@3:-2", "(2)@4:+1"})
}
