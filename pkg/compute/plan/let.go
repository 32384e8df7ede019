package plan

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Let binds Value to the local id ID for Body, which may read it with
// Get(ID) any number of times (zero included); the output is Body's. The
// value is one collection, computed once however many times Body reads
// it, so a subtree a plan needs twice (a correlated subquery's outer
// relation: once as the outer rows, once as the distinct outer keys)
// is written, rendered and evaluated once.
//
// ID is a local id bound nowhere else in scope (not by an enclosing Let
// or Recursive); only Body may read it, and its description is Value's.
// A rewrite that meets Get(ID) knows nothing of Value's plan: it must
// not push work into Value on behalf of one use, since every use reads
// the same collection.
type Let struct {
	ID    GlobalID `json:"id"`
	Value *Plan    `json:"value"`
	Body  *Plan    `json:"body"`
}

// NewLet returns a Let node.
func NewLet(id GlobalID, value, body Plan) Plan {
	return Plan{Let: &Let{ID: id, Value: &value, Body: &body}}
}

func (l *Let) desc(env Env) (row.RelationDesc, error) {
	if l.ID.Kind != KindLocal {
		return row.RelationDesc{}, fmt.Errorf("let: binding %s is not a local id", l.ID)
	}
	value, err := inputDesc("let.value", l.Value, env)
	if err != nil {
		return row.RelationDesc{}, err
	}
	if _, shadow := env(l.ID); shadow {
		return row.RelationDesc{}, fmt.Errorf("let: binding %s already bound", l.ID)
	}
	inner := func(id GlobalID) (row.RelationDesc, bool) {
		if id == l.ID {
			return value, true
		}
		return env(id)
	}
	return inputDesc("let.body", l.Body, inner)
}

// ExpandLets returns p with every Let replaced by its body, in which each
// Get of the let's id is the (expanded) value: the tree the Let stands
// for, in which a shared value is a copy per use. Evaluators that walk a
// plan as a tree of per-round operators (a Recursive node's step) use it
// instead of scoping bindings; everything else keeps the Let. p is not
// modified: nodes on a path to a change are copied, the rest shared.
func ExpandLets(p Plan) Plan { return substitute(p, nil, true) }

// Inline returns p with every Get of id replaced by value (the Let
// binding id to value, undone), copying only the nodes on a path to a
// replaced Get; other Lets stay.
func Inline(p Plan, id GlobalID, value Plan) Plan {
	return substitute(p, map[GlobalID]Plan{id: value}, false)
}

func substitute(p Plan, bound map[GlobalID]Plan, expand bool) Plan {
	switch {
	case p.Get != nil:
		if v, ok := bound[p.Get.ID]; ok {
			return v
		}
		return p
	case expand && p.Let != nil && p.Let.Value != nil && p.Let.Body != nil:
		inner := make(map[GlobalID]Plan, len(bound)+1)
		for id, v := range bound {
			inner[id] = v
		}
		inner[p.Let.ID] = substitute(*p.Let.Value, bound, expand)
		return substitute(*p.Let.Body, inner, expand)
	}
	ins := p.Inputs()
	out := make([]Plan, len(ins))
	changed := false
	for i, in := range ins {
		if in == nil {
			return p // malformed: left for Desc to report
		}
		out[i] = substitute(*in, bound, expand)
		changed = changed || out[i] != *in
	}
	if !changed {
		return p
	}
	return p.WithInputs(out)
}

// WithInputs returns a copy of p whose inputs (in Inputs order) are ins;
// p's own node is not modified (plans share subtrees).
func (p Plan) WithInputs(ins []Plan) Plan {
	switch n := p.Node().(type) {
	case *Mfp:
		c := *n
		c.Input = &ins[0]
		return Plan{Mfp: &c}
	case *Join:
		c := *n
		c.Left, c.Right = &ins[0], &ins[1]
		return Plan{Join: &c}
	case *Reduce:
		c := *n
		c.Input = &ins[0]
		return Plan{Reduce: &c}
	case *Distinct:
		return Plan{Distinct: &Distinct{Input: &ins[0]}}
	case *Threshold:
		return Plan{Threshold: &Threshold{Input: &ins[0]}}
	case *Negate:
		return Plan{Negate: &Negate{Input: &ins[0]}}
	case *TopK:
		c := *n
		c.Input = &ins[0]
		return Plan{TopK: &c}
	case *Window:
		c := *n
		c.Input = &ins[0]
		return Plan{Window: &c}
	case *FlatMap:
		c := *n
		c.Input = &ins[0]
		return Plan{FlatMap: &c}
	case *TemporalFilter:
		c := *n
		c.Input = &ins[0]
		return Plan{TemporalFilter: &c}
	case *ArrangeBy:
		c := *n
		c.Input = &ins[0]
		return Plan{ArrangeBy: &c}
	case *Recursive:
		c := *n
		c.Base, c.Step = &ins[0], &ins[1]
		return Plan{Recursive: &c}
	case *Let:
		c := *n
		c.Value, c.Body = &ins[0], &ins[1]
		return Plan{Let: &c}
	case *Union:
		return Plan{Union: &Union{Inputs: ins}}
	}
	return p
}
