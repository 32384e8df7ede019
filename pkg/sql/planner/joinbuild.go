package planner

import (
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// joinBuild is the state of building a cluster's join tree (joinorder.go
// describes the rules): the plan so far, where each cluster column is in
// its output, and which leaves, predicates and keys are placed.
type joinBuild struct {
	c        *joinCluster
	sets     []map[int]bool // leaves of each predicate
	keySets  [][2]map[int]bool
	acc      plan.Plan
	width    int
	pos      []int // pos[col]: the column's place in acc's output, -1 before its leaf joins
	joined   map[int]bool
	usedPred []bool
	usedKey  []bool
}

// build joins the cluster's leaves; false when an existing key could not
// be placed (or a predicate reads past the cluster).
func (c *joinCluster) build() (*joinBuild, bool) {
	b := &joinBuild{c: c, joined: map[int]bool{}, usedPred: make([]bool, len(c.preds)), usedKey: make([]bool, len(c.keys))}
	b.pos = make([]int, len(c.types))
	for i := range b.pos {
		b.pos[i] = -1
	}
	for _, pr := range c.preds {
		s, ok := c.leafSet(pr)
		if !ok {
			return nil, false
		}
		b.sets = append(b.sets, s)
	}
	for _, k := range c.keys {
		l, okl := c.leafSet(k[0])
		r, okr := c.leafSet(k[1])
		if !okl || !okr {
			return nil, false
		}
		b.keySets = append(b.keySets, [2]map[int]bool{l, r})
	}
	b.add(b.start())
	for len(b.joined) < len(c.leaves) {
		b.add(b.next())
	}
	for _, used := range b.usedKey {
		if !used {
			return nil, false
		}
	}
	return b, true
}

// local reports whether predicate i reads exactly leaf l.
func (b *joinBuild) local(i, l int) bool {
	return len(b.sets[i]) == 1 && b.sets[i][l]
}

// fixed reports whether leaf l has a local predicate column = literal.
func (b *joinBuild) fixed(l int) bool {
	for i, pr := range b.c.preds {
		if !b.local(i, l) || pr.Op != expr.OpCall || pr.Func != expr.FuncEq || len(pr.Args) != 2 {
			continue
		}
		x, y := pr.Args[0], pr.Args[1]
		if x.Op == expr.OpColumn && y.Op == expr.OpLiteral || y.Op == expr.OpColumn && x.Op == expr.OpLiteral {
			return true
		}
	}
	return false
}

// start is the first leaf fixed by a literal, else leaf 0.
func (b *joinBuild) start() int {
	for l := range b.c.leaves {
		if b.fixed(l) {
			return l
		}
	}
	return 0
}

// next is the first unjoined leaf connected to the joined ones by an
// equality, preferring one fixed by a literal; else the first unjoined.
func (b *joinBuild) next() int {
	first, connected := -1, -1
	for l := range b.c.leaves {
		if b.joined[l] {
			continue
		}
		if first < 0 {
			first = l
		}
		if !b.connected(l) {
			continue
		}
		if b.fixed(l) {
			return l
		}
		if connected < 0 {
			connected = l
		}
	}
	if connected >= 0 {
		return connected
	}
	return first
}

// connected reports whether an unplaced key or equality predicate links
// leaf l to the joined leaves.
func (b *joinBuild) connected(l int) bool {
	for i := range b.c.keys {
		if _, _, ok := b.keyFor(i, l); ok {
			return true
		}
	}
	for i := range b.c.preds {
		if _, _, ok := b.eqFor(i, l); ok {
			return true
		}
	}
	return false
}

// subset reports whether every leaf of s is joined.
func (b *joinBuild) subset(s map[int]bool) bool {
	for l := range s {
		if !b.joined[l] {
			return false
		}
	}
	return true
}

func only(s map[int]bool, l int) bool { return len(s) == 1 && s[l] }

// keyFor returns existing key i as (side over the joined leaves, side
// over leaf l) when it links them.
func (b *joinBuild) keyFor(i, l int) (expr.Expr, expr.Expr, bool) {
	if b.usedKey[i] || len(b.joined) == 0 {
		return expr.Expr{}, expr.Expr{}, false
	}
	k, s := b.c.keys[i], b.keySets[i]
	switch {
	case len(s[0]) > 0 && b.subset(s[0]) && only(s[1], l):
		return k[0], k[1], true
	case len(s[1]) > 0 && b.subset(s[1]) && only(s[0], l):
		return k[1], k[0], true
	}
	return expr.Expr{}, expr.Expr{}, false
}

// eqFor returns predicate i as a join key (side over the joined leaves,
// column of leaf l) when it is column = column of identical types linking
// them.
func (b *joinBuild) eqFor(i, l int) (expr.Expr, expr.Expr, bool) {
	pr := b.c.preds[i]
	if b.usedPred[i] || pr.Op != expr.OpCall || pr.Func != expr.FuncEq || len(pr.Args) != 2 {
		return expr.Expr{}, expr.Expr{}, false
	}
	x, y := pr.Args[0], pr.Args[1]
	if x.Op != expr.OpColumn || y.Op != expr.OpColumn {
		return expr.Expr{}, expr.Expr{}, false
	}
	tx, ty := b.c.types[x.Index].Type, b.c.types[y.Index].Type
	if tx != ty || !encodedEquality(tx) {
		return expr.Expr{}, expr.Expr{}, false
	}
	lx, ly := b.c.leafOf(x.Index), b.c.leafOf(y.Index)
	switch {
	case b.joined[lx] && ly == l:
		return x, y, true
	case b.joined[ly] && lx == l:
		return y, x, true
	}
	return expr.Expr{}, expr.Expr{}, false
}

// add joins leaf l: its local predicates are applied to it, the keys and
// equalities linking it to the joined leaves become the join's keys, and
// the predicates whose leaves are now all joined filter the result.
func (b *joinBuild) add(l int) {
	c := b.c
	off := c.off[l]
	arity := c.arity(l)
	toLeaf := func(e expr.Expr) expr.Expr { return shift(e, -off) }
	var leafPreds, lk, rk []expr.Expr
	for i, pr := range c.preds {
		if !b.usedPred[i] && b.local(i, l) {
			leafPreds = append(leafPreds, toLeaf(pr))
			b.usedPred[i] = true
		}
	}
	for i := range c.keys {
		if x, y, ok := b.keyFor(i, l); ok {
			lk, rk = append(lk, b.toAcc(x)), append(rk, toLeaf(y))
			b.usedKey[i] = true
		}
	}
	for i := range c.preds {
		if x, y, ok := b.eqFor(i, l); ok {
			lk, rk = append(lk, b.toAcc(x)), append(rk, toLeaf(y))
			// A NULL key on one side is enough to miss: Join matches
			// NULL only with NULL.
			leafPreds = append(leafPreds, expr.Not(expr.IsNull(toLeaf(y))))
			b.usedPred[i] = true
		}
	}
	leaf := filterPlan(c.leaves[l], arity, leafPreds)
	if len(b.joined) == 0 {
		b.acc = leaf
	} else {
		b.acc = plan.NewJoin(b.acc, leaf, lk, rk)
	}
	for i := 0; i < arity; i++ {
		b.pos[off+i] = b.width + i
	}
	b.width += arity
	b.joined[l] = true
	var after []expr.Expr
	for i, pr := range c.preds {
		if !b.usedPred[i] && b.subset(b.sets[i]) {
			after = append(after, b.toAcc(pr))
			b.usedPred[i] = true
		}
	}
	b.acc = filterPlan(b.acc, b.width, after)
}

// arity is leaf l's number of columns.
func (c *joinCluster) arity(l int) int {
	if l+1 < len(c.off) {
		return c.off[l+1] - c.off[l]
	}
	return len(c.types) - c.off[l]
}

// toAcc maps an expression over cluster columns to one over acc's output.
func (b *joinBuild) toAcc(e expr.Expr) expr.Expr {
	return e.Substitute(func(col int) (expr.Expr, bool) {
		if col >= 0 && col < len(b.pos) {
			return expr.Column(b.pos[col]), true
		}
		return expr.Expr{}, false
	})
}

// filterPlan returns p (of the given arity) filtered by preds, composed
// into p's own Mfp when it has one.
func filterPlan(p plan.Plan, arity int, preds []expr.Expr) plan.Plan {
	if len(preds) == 0 {
		return p
	}
	if p.Mfp != nil {
		m := p.Mfp.MFP
		proj := m.Projection
		for _, pr := range preds {
			m = m.Filter(pr.Permute(proj))
		}
		return plan.NewMfp(*p.Mfp.Input, m)
	}
	return plan.NewMfp(p, expr.Identity(arity).Filter(preds...))
}

// finish puts the cluster's n columns back in their original order under
// the top Mfp (nil: none), whose predicates left are above.
func (b *joinBuild) finish(top *expr.MFP, above []expr.Expr, n int) plan.Plan {
	remap := func(e expr.Expr) expr.Expr {
		return e.Substitute(func(col int) (expr.Expr, bool) {
			if col >= 0 && col < n {
				return expr.Column(b.pos[col]), true
			}
			return expr.Expr{}, false
		})
	}
	var m expr.MFP
	if top == nil {
		m = expr.Identity(n)
	} else {
		m.Expressions = make([]expr.Expr, len(top.Expressions))
		for i, e := range top.Expressions {
			m.Expressions[i] = remap(e)
		}
		m.Projection = append([]int(nil), top.Projection...)
	}
	for _, pr := range above {
		m.Predicates = append(m.Predicates, remap(pr))
	}
	for i, col := range m.Projection {
		if col < n {
			m.Projection[i] = b.pos[col]
		}
	}
	if m.IsIdentity(n) {
		return b.acc
	}
	return plan.NewMfp(b.acc, m)
}

// encodedEquality reports whether SQL's = on values of type t is equality
// of their encodings (what Join compares). It is not for intervals: '1
// day' = '24 hours', but they are different values.
func encodedEquality(t row.Type) bool {
	switch t {
	case row.TypeBool, row.TypeInt64, row.TypeFloat64, row.TypeText, row.TypeBytes, row.TypeTimestamp,
		row.TypeNumeric, row.TypeUUID, row.TypeDate, row.TypeTime, row.TypeTimestampTZ:
		return true
	}
	return false
}
