package planner

import (
	"sort"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Join planning (joinorder.go, joinbuild.go). The FROM list is lowered to
// nested Join nodes in the order written, with nil keys between comma
// separated items, and WHERE to predicates of the Mfp above them. Planned
// that way, `FROM t1, t2, t3 WHERE a1 = b2 AND b2 = c3 AND a1 = 5` is a
// cross product of all three tables filtered afterwards. planJoins
// (joinPlanner.rewrite) rewrites every such cluster of inner joins:
//
//   - a cluster is a maximal tree of Join nodes and pure-filter Mfp nodes
//     (no expressions, identity projection) between them, and the Mfp
//     above it if any; its leaves are the nodes below (a table, a
//     subquery, an outer join's Union, ...), its predicates are the
//     filters' conjuncts in evaluation order;
//   - a predicate over columns of one leaf is applied to that leaf, below
//     every join (as PostgreSQL does: the predicate then also runs on
//     rows that would not have found a partner, which is PostgreSQL's
//     behaviour for errors too);
//   - a predicate `a = b` between plain columns of identical types becomes
//     a key of the join that first brings both sides together, with rows
//     whose key is NULL filtered out first (SQL equality never matches
//     NULL, the Join node matches equal encodings);
//   - the existing keys of keyed joins stay keys (NULL-matching, as the
//     SQL layer chose them): when the new order cannot place one of them
//     as a key, the cluster is left as it was;
//   - the join order is greedy: start from a leaf fixed by `column =
//     literal` (else the first), then repeatedly add the first leaf
//     connected to those joined so far by an equality (a leaf fixed by a
//     literal first), and only when none is connected the next leaf as a
//     cross product;
//   - every other predicate is applied right after the join that brings
//     its columns together, and the cluster's output columns are put back
//     in their original order by the Mfp above.
//
// Outer joins are not Join nodes (they are lowered to a Union of the
// matched pairs and the padded unmatched rows): they are leaves, and a
// predicate is never pushed into them, so a filter on an outer join's
// nullable side still sees the NULL-padded rows.

// joinPlanner rewrites plans with the descriptions of the collections the
// query reads.
type joinPlanner struct {
	env plan.Env
	// outer are the outer joins whose filters may be pushed into them
	// (outerpush.go).
	outer map[*plan.Union]*outerJoin
}

// joinPlanner returns the join planner over the relations p has read.
func (p *Planner) joinPlanner() *joinPlanner {
	descs := map[plan.GlobalID]row.RelationDesc{}
	for id, r := range p.relations {
		descs[id] = r.Desc
	}
	return &joinPlanner{env: plan.MapEnv(descs), outer: p.outerJoins}
}

// finalPlan is r's plan after join planning and the top-k rewrite
// (windowtopk.go): what a Query carries.
func (p *Planner) finalPlan(r *rel) plan.Plan {
	jp := p.joinPlanner()
	return windowTopK(jp.rewrite(r.plan()), jp.env)
}

// rewrite plans the clusters of pl, top down.
func (jp *joinPlanner) rewrite(pl plan.Plan) plan.Plan {
	if pl.Let != nil {
		return jp.rewriteLet(pl)
	}
	if pl.Mfp != nil {
		if out, ok := jp.outerFilter(pl); ok {
			return out
		}
	}
	if isClusterRoot(pl) && worthPlanning(pl) {
		if out, ok := jp.cluster(pl); ok {
			return out
		}
	}
	return jp.rewriteInputs(pl)
}

// rewriteLet plans the clusters of a Let's value on their own (a Get of
// the binding is a leaf: nothing is pushed into the value from one of its
// uses), then those of its body with the binding's description known, so
// that a cluster reading the binding is planned too.
func (jp *joinPlanner) rewriteLet(pl plan.Plan) plan.Plan {
	l := pl.Let
	value := jp.rewrite(*l.Value)
	inner := *jp
	inner.env = letEnv(l, jp.env)
	body := inner.rewrite(*l.Body)
	if value == *l.Value && body == *l.Body {
		return pl
	}
	return plan.NewLet(l.ID, value, body)
}

// worthPlanning reports whether the cluster rooted at pl has something
// to plan: a join without keys or a filter. Keyed joins with nothing
// above but a projection (most of what decorrelation builds) are left
// as they are, and cost no copying.
func worthPlanning(pl plan.Plan) bool {
	if pl.Mfp != nil {
		if len(pl.Mfp.MFP.Predicates) > 0 {
			return true
		}
		pl = *pl.Mfp.Input
	}
	var walk func(p plan.Plan) bool
	walk = func(p plan.Plan) bool {
		switch {
		case p.Join != nil:
			return len(p.Join.LeftKey) == 0 || walk(*p.Join.Left) || walk(*p.Join.Right)
		case p.Mfp != nil && p.Mfp.Input.Join != nil && len(p.Mfp.MFP.Expressions) == 0:
			return len(p.Mfp.MFP.Predicates) > 0 || walk(*p.Mfp.Input)
		}
		return false
	}
	return walk(pl)
}

// isClusterRoot reports whether pl is a Join or an Mfp over one.
func isClusterRoot(pl plan.Plan) bool {
	return pl.Join != nil || (pl.Mfp != nil && pl.Mfp.Input.Join != nil)
}

// rewriteInputs returns pl with its inputs rewritten: a copy when one of
// them changed, pl itself otherwise.
func (jp *joinPlanner) rewriteInputs(pl plan.Plan) plan.Plan {
	return mapInputs(pl, jp.rewrite)
}

// mapInputs returns pl with f applied to each input: pl itself when f
// returns every input unchanged (a plan is a struct of pointers, so ==
// is identity), else a copy.
func mapInputs(pl plan.Plan, f func(plan.Plan) plan.Plan) plan.Plan {
	ins := pl.Inputs()
	out := make([]plan.Plan, len(ins))
	changed := false
	for i, in := range ins {
		out[i] = f(*in)
		changed = changed || out[i] != *in
	}
	if !changed {
		return pl
	}
	return pl.WithInputs(out)
}

// joinCluster is a flattened cluster: leaves side by side (leaf i owns
// columns [off[i], off[i]+arity(i))), predicates and existing join keys
// over those concatenated columns.
type joinCluster struct {
	leaves []plan.Plan
	off    []int
	types  []row.ColumnType
	preds  []expr.Expr
	keys   [][2]expr.Expr
}

// leafOf returns the leaf owning column col: the last one starting at or
// before it (a leaf without columns starts where the next one does).
func (c *joinCluster) leafOf(col int) int {
	return sort.Search(len(c.off), func(i int) bool { return c.off[i] > col }) - 1
}

// leafSet returns the set of leaves e's columns belong to, and false when
// e references a column beyond the cluster.
func (c *joinCluster) leafSet(e expr.Expr) (map[int]bool, bool) {
	set := map[int]bool{}
	for _, col := range e.Columns() {
		if col < 0 || col >= len(c.types) {
			return nil, false
		}
		set[c.leafOf(col)] = true
	}
	return set, true
}

// flatten adds the cluster below pl (a Join or pure filter over one) to
// c, or pl itself as a leaf. It reports false when a leaf's description
// cannot be inferred.
func (jp *joinPlanner) flatten(pl plan.Plan, c *joinCluster) bool {
	off := len(c.types)
	switch {
	case pl.Join != nil:
		j := pl.Join
		if !jp.flatten(*j.Left, c) {
			return false
		}
		mid := len(c.types)
		if !jp.flatten(*j.Right, c) {
			return false
		}
		for i := range j.LeftKey {
			c.keys = append(c.keys, [2]expr.Expr{shift(j.LeftKey[i], off), shift(j.RightKey[i], mid)})
		}
		return true
	case pl.Mfp != nil && pl.Mfp.Input.Join != nil && len(pl.Mfp.MFP.Expressions) == 0:
		saved := *c
		if !jp.flatten(*pl.Mfp.Input, c) {
			return false
		}
		if isIdentity(pl.Mfp.MFP.Projection, len(c.types)-off) {
			for _, pr := range pl.Mfp.MFP.Predicates {
				c.preds = append(c.preds, splitAnd(shift(pr, off))...)
			}
			return true
		}
		// A projection: the Mfp is a leaf after all.
		c.leaves, c.off, c.types = saved.leaves, saved.off, saved.types
		c.preds, c.keys = saved.preds, saved.keys
	}
	d, err := pl.Desc(jp.env)
	if err != nil {
		return false
	}
	c.leaves = append(c.leaves, pl)
	c.off = append(c.off, off)
	c.types = append(c.types, d.Types...)
	return true
}

// isIdentity reports whether proj passes n columns through unchanged.
func isIdentity(proj []int, n int) bool {
	if len(proj) != n {
		return false
	}
	for i, c := range proj {
		if c != i {
			return false
		}
	}
	return true
}

// cluster plans the cluster rooted at pl (isClusterRoot). It reports false
// when the cluster is left as it was.
func (jp *joinPlanner) cluster(pl plan.Plan) (plan.Plan, bool) {
	var top *expr.MFP
	body := pl
	if pl.Mfp != nil {
		m := pl.Mfp.MFP
		top, body = &m, *pl.Mfp.Input
	}
	c := &joinCluster{}
	if !jp.flatten(body, c) {
		return plan.Plan{}, false
	}
	n := len(c.types)
	// The top Mfp's predicates over cluster columns only join the
	// cluster's; those reading its expressions stay above.
	var above []expr.Expr
	if top != nil {
		for _, pr := range top.Predicates {
			for _, cj := range splitAnd(pr) {
				if cj.Support() <= n {
					c.preds = append(c.preds, cj)
				} else {
					above = append(above, cj)
				}
			}
		}
	}
	c.pushIntoOuterJoins(jp)
	for i := range c.leaves {
		c.leaves[i] = jp.rewrite(c.leaves[i])
	}
	b, ok := c.build()
	if !ok {
		return plan.Plan{}, false
	}
	return b.finish(top, above, n), true
}
