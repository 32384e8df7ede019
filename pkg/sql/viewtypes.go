package sql

import (
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql/planner"
)

// viewTypes is what a view's query gives its columns (integer widths and
// type modifiers), derived once for the definitions it was derived from:
// the view's text and those of the items it reads, transitively.
type viewTypes struct {
	deps      []depText
	intWidths []planner.IntWidth
	typeMods  []planner.TypeMod
}

// depText is one item a view's column types were derived from.
type depText struct {
	id  plan.GlobalID
	sql string
}

// viewColumnTypes returns the integer widths and type modifiers of view
// it's columns, as its query gives them. They are derived (the query
// planned) once per view and definitions: items never change but for
// ALTER TABLE, which changes the table's text, so the texts of the view
// and of everything it reads, transitively, fix the types. A read of the
// view's index then plans nothing of the view. A query that no longer
// plans describes the columns by their row types alone.
func (sn *snapshot) viewColumnTypes(it *Item) ([]planner.IntWidth, []planner.TypeMod) {
	deps := sn.definitionTexts(it)
	if vt, ok := sn.defs.cachedViewTypes(it.ID, deps); ok {
		return vt.intWidths, vt.typeMods
	}
	vt := &viewTypes{deps: deps, intWidths: make([]planner.IntWidth, it.Desc.Arity()), typeMods: make([]planner.TypeMod, it.Desc.Arity())}
	if q, err := sn.defs.viewQuery(it); err == nil {
		pl := &planner.Planner{Catalog: viewCatalog{sn: sn, owner: it.Owner}, Maintained: true, OnViewPlan: sn.onViewPlan}
		if sn.onViewPlan != nil {
			sn.onViewPlan(it.Name)
		}
		if res, err := pl.PlanRelation(q); err == nil && res.Desc.Arity() == it.Desc.Arity() {
			widths, mods := res.ColumnTypes()
			for i := range vt.intWidths {
				if res.Desc.Types[i].Type == it.Desc.Types[i].Type {
					vt.intWidths[i], vt.typeMods[i] = widths[i], mods[i]
				}
			}
		}
	}
	sn.defs.storeViewTypes(it.ID, vt)
	return vt.intWidths, vt.typeMods
}

// definitionTexts returns it and the items it depends on, transitively,
// with their defining texts, in the order found.
func (sn *snapshot) definitionTexts(it *Item) []depText {
	out := []depText{{id: it.ID, sql: it.SQL}}
	seen := map[plan.GlobalID]bool{it.ID: true}
	for i := 0; i < len(out); i++ {
		cur, ok := sn.byID[out[i].id]
		if !ok {
			continue
		}
		for _, d := range cur.DependsOn {
			if seen[d] {
				continue
			}
			seen[d] = true
			sql := ""
			if dep, ok := sn.byID[d]; ok {
				sql = dep.SQL
			}
			out = append(out, depText{id: d, sql: sql})
		}
	}
	return out
}

// cachedViewTypes returns view id's cached types if they were derived
// from deps.
func (d *definitions) cachedViewTypes(id plan.GlobalID, deps []depText) (*viewTypes, bool) {
	if d == nil {
		return nil, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	vt, ok := d.views[id]
	if !ok || len(vt.deps) != len(deps) {
		return nil, false
	}
	for i := range deps {
		if vt.deps[i] != deps[i] {
			return nil, false
		}
	}
	return vt, true
}

// storeViewTypes caches view id's types; the cache stays bounded.
func (d *definitions) storeViewTypes(id plan.GlobalID, vt *viewTypes) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.views == nil || len(d.views) >= maxDefinitions {
		d.views = map[plan.GlobalID]*viewTypes{}
	}
	d.views[id] = vt
}
