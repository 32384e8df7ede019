package planner

import (
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// Shared outer relations. General decorrelation (apply.go) reads the
// relation a subquery is attached to twice over: its distinct outer
// values D feed the subquery's plan, and its rows are joined back to the
// subquery's result (three reads in markFound and attachPerKey). Written
// as a tree, each read is a copy of the relation's whole plan, and a
// subquery nested in another copies every level above it: the plan
// doubles per level. So while a subquery is attached, the relation (and
// the relation before its subquery columns, rel.origin, which D and
// distinctKeys read) is bound to a local id and read through Get; once
// attached, the relation's new plan is wrapped in Lets that compute each
// binding once. A level then adds its own nodes and a Get, and the plan
// grows by a sum with depth. Attachments that general decorrelation did
// not plan (uncorrelated subqueries, the equality form) get their old
// plan back (plan.Inline), so only apply's plans change.

// sharedRel is a rel whose plan (and origin) is bound to local ids while
// a subquery is attached to it.
type sharedRel struct {
	p     *Planner
	r     *rel
	saved rel
	id    plan.GlobalID
	value plan.Plan
	// originID binds the origin (valid when hasOrigin).
	originID  plan.GlobalID
	origin    plan.Plan
	hasOrigin bool
}

// share binds r's plan (and origin) to fresh local ids: r reads them
// through Get until bind or restore.
func (p *Planner) share(r *rel) *sharedRel {
	s := &sharedRel{p: p, r: r, saved: *r, value: r.plan()}
	p.locals++
	s.id = plan.Local(p.locals)
	n := r.arity()
	r.base, r.baseArity, r.mfp = plan.NewGet(s.id), n, expr.Identity(n)
	if r.origin != nil {
		p.locals++
		s.originID, s.origin, s.hasOrigin = plan.Local(p.locals), *r.origin, true
		g := plan.NewGet(s.originID)
		r.origin = &g
	}
	return s
}

// restore gives r back its plan as it was before share (the attachment
// failed or changed nothing).
func (s *sharedRel) restore() {
	s.r.base, s.r.baseArity, s.r.mfp, s.r.origin = s.saved.base, s.saved.baseArity, s.saved.mfp, s.saved.origin
}

// bind closes r's plan over the bindings (closed) and gives r back its
// origin as it was.
func (s *sharedRel) bind(keep bool) {
	r := s.r
	if r.base.Get != nil && r.base.Get.ID == s.id && r.mfp.IsIdentity(r.baseArity) {
		s.restore() // nothing attached
		return
	}
	n := r.arity()
	r.base, r.baseArity, r.mfp = s.closed(r.plan(), keep), n, expr.Identity(n)
	if r.origin != nil {
		o := s.inline(*r.origin)
		r.origin = &o
	}
}

// closed returns body, which may read the bindings, without free Gets of
// them: wrapped in Lets that compute each binding once when keep (a
// subquery planned by apply read them), else with each Get replaced by
// the plan it stands for (the plan as it was before share).
func (s *sharedRel) closed(body plan.Plan, keep bool) plan.Plan {
	if !keep {
		return s.inline(body)
	}
	body = s.p.bindRepeated(body, nil)
	if s.hasOrigin && body.Reads(s.originID) {
		body = plan.NewLet(s.originID, s.origin, body)
	}
	if body.Reads(s.id) {
		body = plan.NewLet(s.id, s.value, body)
	}
	return body
}

// inline replaces the Gets of the bindings in p by the plans they bind.
func (s *sharedRel) inline(p plan.Plan) plan.Plan {
	p = plan.Inline(p, s.id, s.value)
	if s.hasOrigin {
		p = plan.Inline(p, s.originID, s.origin)
	}
	return p
}

// bindRepeated binds every subtree that body reads more than once (the
// same nodes: the planner reuses a plan by reusing its nodes, and the
// subquery a level attaches is read by several of its operators) to a
// local id, each in a Let around body, innermost last, so that body's
// serialised size is the number of distinct nodes. A subtree reading a
// local id bound inside body stays where it is. When only is not nil, only
// the nodes it holds are bound.
func (p *Planner) bindRepeated(body plan.Plan, only map[any]bool) plan.Plan {
	parents := map[any]int{}
	free := map[any]map[plan.GlobalID]bool{}
	var order []plan.Plan // first visits, children before parents
	var count func(q plan.Plan) map[plan.GlobalID]bool
	count = func(q plan.Plan) map[plan.GlobalID]bool {
		n := q.Node()
		parents[n]++
		if f, ok := free[n]; ok {
			return f
		}
		f := map[plan.GlobalID]bool{}
		if q.Get != nil && q.Get.ID.Kind == plan.KindLocal {
			f[q.Get.ID] = true
		}
		for i, in := range q.Inputs() {
			for id := range count(*in) {
				if (q.Let != nil && i == 1 && id == q.Let.ID) || (q.Recursive != nil && i == 1 && id == q.Recursive.ID) {
					continue
				}
				f[id] = true
			}
		}
		free[n] = f
		order = append(order, q)
		return f
	}
	rootFree := count(body)
	ids := map[any]plan.GlobalID{}
	var values []plan.Plan
	var bound []plan.GlobalID
	var rewrite func(q plan.Plan, top bool) plan.Plan
	memo := map[any]plan.Plan{}
	rewrite = func(q plan.Plan, top bool) plan.Plan {
		n := q.Node()
		if id, ok := ids[n]; ok && !top {
			return plan.NewGet(id)
		}
		if out, ok := memo[n]; ok {
			return out
		}
		out := mapInputs(q, func(in plan.Plan) plan.Plan { return rewrite(in, false) })
		memo[n] = out
		return out
	}
	for _, q := range order { // children first: a value may read earlier bindings
		n := q.Node()
		if parents[n] < 2 || q.Get != nil || !within(free[n], rootFree) || (only != nil && !only[n]) {
			continue
		}
		p.locals++
		id := plan.Local(p.locals)
		values = append(values, rewrite(q, true))
		ids[n] = id
		bound = append(bound, id)
	}
	if len(bound) == 0 {
		return body
	}
	out := rewrite(body, false)
	for i := len(bound) - 1; i >= 0; i-- {
		out = plan.NewLet(bound[i], values[i], out)
	}
	return out
}

// within reports whether every id of a is in b.
func within(a, b map[plan.GlobalID]bool) bool {
	for id := range a {
		if !b[id] {
			return false
		}
	}
	return true
}
