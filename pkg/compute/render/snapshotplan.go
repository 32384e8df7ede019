package render

import (
	"encoding/json"
	"reflect"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/operators"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// importedIndex is one index import of the dataflow being built: its ok
// arrangement, flattened into a collection only when a plan reads it as
// one, and its error rows (always flattened; an index rarely holds any).
type importedIndex struct {
	name    string
	key     []expr.Expr // the index key
	desc    row.RelationDesc
	ok      *Arranged
	errs    dataflow.Stream
	rows    *rendered // the flattened collection, once made
	cursors int       // snapshot operators reading ok
}

// flattenImport returns the import as a collection of row updates,
// flattening it on first use.
func (r *planRenderer) flattenImport(id plan.GlobalID, imp *importedIndex) rendered {
	if imp.rows == nil {
		ok := Flatten(r.b, "Flatten "+imp.name, imp.ok, r.asOf, false, r.fail)
		imp.rows = &rendered{ok: ok, errs: []dataflow.Stream{imp.errs}}
		r.objects[id] = *imp.rows
	}
	return *imp.rows
}

// collection returns the collection id names in the dataflow: built,
// or an import (flattened on first use).
func (r *planRenderer) collection(id plan.GlobalID) (rendered, bool) {
	if c, ok := r.objects[id]; ok {
		return c, true
	}
	if imp, ok := r.imports[id]; ok {
		return r.flattenImport(id, imp), true
	}
	return rendered{}, false
}

// countImports adds the dataflow's imports to c: flattened if anything
// read them as a collection, cursor if only snapshot operators read them.
func (r *planRenderer) countImports(c *ImportCounters) {
	if c == nil {
		return
	}
	for _, imp := range r.imports {
		switch {
		case imp.ok == nil:
			c.Live.Add(1)
		case imp.rows != nil:
			c.Flattened.Add(1)
		case imp.cursors > 0:
			c.Cursor.Add(1)
		}
	}
}

// snapshotImport returns the import that p reads through a chain of MFPs
// (innermost first), when the dataflow is read only at its as_of and p is
// such a chain over an import.
func (r *planRenderer) snapshotImport(p *plan.Plan) (*importedIndex, []*expr.MFP, bool) {
	if !r.snapshot {
		return nil, nil, false
	}
	var mfps []*expr.MFP
	for p.Mfp != nil {
		mfps = append(mfps, &p.Mfp.MFP)
		p = p.Mfp.Input
	}
	if p.Get == nil {
		return nil, nil, false
	}
	imp, ok := r.imports[p.Get.ID]
	if !ok {
		return nil, nil, false
	}
	for i, j := 0, len(mfps)-1; i < j; i, j = i+1, j-1 {
		mfps[i], mfps[j] = mfps[j], mfps[i]
	}
	return imp, mfps, true
}

// snapshotGroup renders a reduction-shaped operator over (MFPs over) an
// import of a dataflow read only at its as_of: the import is read through
// cursors and consolidated per (group, arguments) before it is arranged
// (SnapshotKeyBy), so the reduction sees one update per distinct pair
// instead of one per indexed row. ok is false for other shapes.
func (r *planRenderer) snapshotGroup(input *plan.Plan, kind string, spec KeySpec, logic operators.GroupLogic, fold []operators.Aggregate) (rendered, bool, error) {
	imp, mfps, ok := r.snapshotImport(input)
	if !ok {
		return rendered{}, false, nil
	}
	imp.cursors++
	name := r.name(kind)
	var seeks [][]byte
	if len(mfps) > 0 {
		seeks, _ = seekKeys(mfps[0], imp.key, imp.desc)
	}
	keyed, keyErrs := snapshotKeyBy(r.b, name, imp.ok, r.snapshotAt, mfps, spec, r.tune, seeks, fold, r.fail)
	arr := ArrangeFueled(r.b, name, keyed, r.fail, r.arrangeFuel)
	out := r.stateful(r.name(kind), []*Arranged{arr}, GroupStep(logic, groupEval(spec, fold)))
	return rendered{ok: out.Ok, errs: []dataflow.Stream{imp.errs, keyErrs, out.Err}}, true, nil
}

// arrangedImport returns the import p reads when p is a plain Get of an
// import arranged by exactly key, in a dataflow read only at its as_of: a
// join can then read the index's own batches through cursors instead of
// flattening and re-arranging them. The index's rows are keyed as KeyBy
// would key them (the packed key expressions, the whole row as value) and
// sharded by the same key hash, so the arrangement is the one the join
// would have built; its updates keep their times, which are at or before
// the as_of and accumulate to the same collection there.
//
// p may also be a chain of MFPs that cannot change the import's rows: the
// planner puts `NOT (k IS NULL)` over each equi-join input, which is true
// of every row when k is a column the import declares not nullable (a key
// column, a NOT NULL column), under an identity projection.
func (r *planRenderer) arrangedImport(p *plan.Plan, key []expr.Expr) *importedIndex {
	if !r.snapshot {
		return nil
	}
	var mfps []*expr.MFP
	for p.Mfp != nil {
		mfps = append(mfps, &p.Mfp.MFP)
		p = p.Mfp.Input
	}
	if p.Get == nil {
		return nil
	}
	imp, ok := r.imports[p.Get.ID]
	if !ok || len(imp.key) == 0 || !reflect.DeepEqual(imp.key, key) {
		return nil
	}
	for _, m := range mfps {
		if !keepsEveryRow(m, imp.desc) {
			return nil
		}
	}
	return imp
}

// keepsEveryRow reports whether m passes every row of desc unchanged: no
// new columns, the identity projection, and only predicates that say a
// non-nullable column is not NULL.
func keepsEveryRow(m *expr.MFP, desc row.RelationDesc) bool {
	if len(m.Expressions) != 0 || !(&expr.MFP{Projection: m.Projection}).IsIdentity(len(desc.Types)) {
		return false
	}
	for _, pred := range m.Predicates {
		c, ok := notNullColumn(pred)
		if !ok || c >= len(desc.Types) || desc.Types[c].Nullable {
			return false
		}
	}
	return true
}

// notNullColumn returns c when e is `NOT (#c IS NULL)`.
func notNullColumn(e expr.Expr) (int, bool) {
	if e.Op != expr.OpCall || e.Func != expr.FuncNot || len(e.Args) != 1 {
		return 0, false
	}
	in := e.Args[0]
	if in.Op != expr.OpCall || in.Func != expr.FuncIsNull || len(in.Args) != 1 || in.Args[0].Op != expr.OpColumn {
		return 0, false
	}
	return in.Args[0].Index, true
}

// memoKey returns the key under which a reduction of a snapshot dataflow
// is memoised (its plan's encoding), or false when it is not.
func (r *planRenderer) memoKey(p *plan.Plan) (string, bool) {
	if !r.snapshot || readsLocal(p) {
		return "", false
	}
	b, err := json.Marshal(p)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// readsLocal reports whether p reads a local id from outside: its
// encoding then does not say what it computes (two lets may bind one id
// to different values in different scopes), so it is not memoised.
func readsLocal(p *plan.Plan) bool {
	for _, id := range p.DependsOn() {
		if id.Kind == plan.KindLocal {
			return true
		}
	}
	return false
}
