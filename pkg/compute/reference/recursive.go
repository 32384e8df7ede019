package reference

import (
	"fmt"
	"sort"

	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// evalRecursive iterates a Recursive node as PostgreSQL runs WITH
// RECURSIVE: the working table starts as the base (deduplicated for
// UNION), each round evaluates the step over it, and the rows the round
// adds (for UNION, distinct rows not in the result yet) become the next
// working table, until a round adds nothing.
//
// The step's subtrees that do not read the binding are evaluated once:
// their errors pass through like any input's. Errors raised in the rest of
// the step (the part that reads the working table) make the whole result
// one error: the smallest of the first round that has any.
func evalRecursive(r *plan.Recursive, env map[plan.GlobalID]Result) (Result, error) {
	if r.Base == nil || r.Step == nil {
		return Result{}, fmt.Errorf("recursive: missing input")
	}
	base, err := EvalPlan(r.Base, env)
	if err != nil {
		return Result{}, err
	}
	// The step is evaluated as a tree per round, its subtrees that do not
	// read the binding once: a Let in it is expanded, so those subtrees
	// are closed over env.
	expanded := *r
	step := plan.ExpandLets(*r.Step)
	expanded.Step = &step
	r = &expanded
	out := newResult()
	out.Errors.addAll(base.Errors)
	fixed := map[*plan.Plan]Result{}
	if err := evalFixed(r.Step, r.ID, env, fixed, &out); err != nil {
		return Result{}, err
	}
	rows, ferr, err := iterate(r, base.Rows, env, fixed)
	if err != nil {
		return Result{}, err
	}
	if ferr != "" {
		out.Errors.add(ferr, 1)
		return out, nil
	}
	out.Rows = rows
	return out, nil
}

// evalFixed evaluates the maximal subtrees of step that do not read id,
// once, into fixed, adding their errors to out.
func evalFixed(step *plan.Plan, id plan.GlobalID, env map[plan.GlobalID]Result, fixed map[*plan.Plan]Result, out *Result) error {
	if step == nil {
		return fmt.Errorf("recursive: missing input")
	}
	if !step.Reads(id) {
		res, err := EvalPlan(step, env)
		if err != nil {
			return err
		}
		out.Errors.addAll(res.Errors)
		fixed[step] = Result{Rows: res.Rows, Errors: Collection{}}
		return nil
	}
	for _, in := range step.Inputs() {
		if err := evalFixed(in, id, env, fixed, out); err != nil {
			return err
		}
	}
	return nil
}

// iterate runs the rounds; it returns the result's rows, or the encoded
// error row that replaces them.
func iterate(r *plan.Recursive, base Collection, env map[plan.GlobalID]Result, fixed map[*plan.Plan]Result) (Collection, string, error) {
	negative := string(ErrorRow(&evalError{"XX000", "recursive: negative multiplicity in input"}))
	total, work := Collection{}, Collection{}
	for k, n := range base {
		if n < 0 {
			return nil, negative, nil
		}
		if r.Distinct {
			n = 1
		}
		total.add(k, n)
		work.add(k, n)
	}
	for rounds := int64(0); len(work) > 0; rounds++ {
		if rounds == r.MaxIterations {
			code, msg := r.LimitError()
			return nil, string(ErrorRow(&evalError{code, msg})), nil
		}
		res, err := evalRound(r.Step, r.ID, env, fixed, work)
		if err != nil {
			return nil, "", err
		}
		if e := firstError(res.Errors); e != "" {
			return nil, e, nil
		}
		next := Collection{}
		for k, n := range res.Rows {
			switch {
			case n < 0:
				return nil, negative, nil
			case !r.Distinct:
				next.add(k, n)
			case total[k] == 0:
				next.add(k, 1)
			}
		}
		total.addAll(next)
		work = next
	}
	return total, "", nil
}

// evalRound evaluates the step with the binding set to work.
func evalRound(p *plan.Plan, id plan.GlobalID, env map[plan.GlobalID]Result, fixed map[*plan.Plan]Result, work Collection) (Result, error) {
	if res, ok := fixed[p]; ok {
		return res, nil
	}
	switch {
	case p.Get != nil && p.Get.ID == id:
		return Result{Rows: work, Errors: Collection{}}, nil
	case p.Recursive != nil:
		return Result{}, fmt.Errorf("recursive: a nested recursive node reads the binding %s", id)
	}
	inputs := make([]Result, 0, 2)
	for _, in := range p.Inputs() {
		r, err := evalRound(in, id, env, fixed, work)
		if err != nil {
			return Result{}, err
		}
		inputs = append(inputs, r)
	}
	return applyNode(p, inputs, env, nil)
}

// firstError returns the smallest error row with positive multiplicity.
func firstError(errs Collection) string {
	var rows []string
	for k, n := range errs {
		if n > 0 {
			rows = append(rows, k)
		}
	}
	if len(rows) == 0 {
		return ""
	}
	sort.Strings(rows)
	return rows[0]
}
