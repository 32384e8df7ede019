package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Catalog is what the planner needs to resolve names.
type Catalog interface {
	// Resolve finds a relation by schema (empty: the search path) and
	// name, or returns a 42P01 error.
	Resolve(schema, name string) (Relation, error)
}

// Relation is a named relation as the planner sees it.
type Relation struct {
	ID   plan.GlobalID
	Name string
	Desc row.RelationDesc
	// View, for a (non-materialized) view, is its defining query, which
	// the planner inlines.
	View *pg.SelectStmt
	// ViewCatalog, when set, is the catalog a view's names resolve in
	// while its query is inlined (the SQL layer checks a view's reads
	// against the view owner's privileges through it).
	ViewCatalog Catalog
	// Plan, when set, computes the relation in place of a Get of ID (the
	// SQL layer's emulated pg_catalog relations are constants as of the
	// statement). Only reads (ReadIndexedViews) may use it: a view,
	// SUBSCRIBE or write over it is refused.
	Plan *plan.Plan
	// Indexes are the indexes on this relation that reads may use.
	Indexes []Index
	// IntWidths, for a table, are its columns' declared integer widths
	// (TableIntWidths of its CREATE TABLE); nil reads as all bigint. For
	// a view, they are the widths its query gives its columns
	// (Query.ColumnTypes), which a read of the view's index uses; nil
	// there means the planner derives them by planning the query.
	IntWidths []IntWidth
	// TypeMods, for a table, are its columns' type modifiers
	// (TableTypeMods of its CREATE TABLE); nil reads as none. For a view,
	// as IntWidths.
	TypeMods []TypeMod
	// ColumnGuard, when set, is asked before the query references column
	// i of the relation (a name, a * or a USING column): the SQL layer
	// refuses the columns the reader holds no column privilege on.
	ColumnGuard func(i int) error
}

// Index is an index on a relation: its id and key expressions over the
// relation's columns.
type Index struct {
	ID      plan.GlobalID
	Cluster string
	// Keys are the key expressions over the relation's columns.
	Keys []expr.Expr
}
