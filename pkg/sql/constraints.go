package sql

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// A table's constraints and defaults live in its CREATE TABLE text
// (Item.SQL), the one place the catalog keeps its declaration: ALTER
// TABLE rewrites that text (deparsed from the edited statement), so the
// declaration survives restarts with the catalog and never drifts from
// it. tableDef is what the text declares beyond the column types;
// tableRules is it compiled for one statement.

// keyDef is a PRIMARY KEY or UNIQUE constraint.
type keyDef struct {
	name    string
	cols    []int
	primary bool
}

// checkDef is a CHECK constraint.
type checkDef struct {
	name string
	expr *pg.Node
}

// tableDef is a table's declared constraints and defaults.
type tableDef struct {
	defaults []*pg.Node // per column; nil: no default
	checks   []checkDef
	keys     []keyDef
}

// parseCreateTable parses a table's CREATE TABLE text.
func parseCreateTable(text string) (*pg.CreateStmt, error) {
	tree, err := pg.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("reparse table definition: %w", err)
	}
	if len(tree.Stmts) != 1 || tree.Stmts[0].GetStmt().GetCreateStmt() == nil {
		return nil, sqlerr.Errorf(sqlerr.InternalError, "table definition is not CREATE TABLE")
	}
	return tree.Stmts[0].GetStmt().GetCreateStmt(), nil
}

// deparseCreateTable renders an edited CREATE TABLE statement as text.
func deparseCreateTable(c *pg.CreateStmt) (string, error) {
	// Deparse wants the parse tree version of the parser it is paired with.
	ref, err := pg.Parse("SELECT")
	if err != nil {
		return "", fmt.Errorf("deparse table definition: %w", err)
	}
	tree := &pg.ParseResult{Version: ref.Version, Stmts: []*pg.RawStmt{{Stmt: &pg.Node{Node: &pg.Node_CreateStmt{CreateStmt: c}}}}}
	text, err := pg.Deparse(tree)
	if err != nil {
		return "", fmt.Errorf("deparse table definition: %w", err)
	}
	return text, nil
}

// tableDefOf returns the declaration of a table item.
func tableDefOf(it *Item) (*tableDef, error) {
	if !mayDeclareConstraints(it.SQL) {
		return &tableDef{defaults: make([]*pg.Node, it.Desc.Arity())}, nil
	}
	c, err := parseCreateTable(it.SQL)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", it.Name, err)
	}
	def, _, err := declaredConstraints(it.Name, c)
	return def, err
}

// mayDeclareConstraints reports whether a CREATE TABLE text may declare
// a constraint or default, to skip parsing the common plain table.
func mayDeclareConstraints(sql string) bool {
	s := strings.ToLower(sql)
	for _, w := range []string{"primary", "unique", "check", "default", "constraint"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// declaredConstraints collects a CREATE TABLE statement's constraints and
// defaults and returns them with its column descriptions (PRIMARY KEY
// and NOT NULL columns not nullable). Constraints get PostgreSQL's
// default names (t_pkey, t_a_b_key, t_a_check).
func declaredConstraints(table string, c *pg.CreateStmt) (*tableDef, row.RelationDesc, error) {
	def := &tableDef{}
	var desc row.RelationDesc
	var names []string
	for _, elt := range c.TableElts {
		cd := elt.GetColumnDef()
		if cd == nil {
			continue
		}
		if slices.Contains(desc.Names, cd.Colname) {
			return nil, desc, sqlerr.Errorf(sqlerr.DuplicateColumn, "column %q specified more than once", cd.Colname)
		}
		t, err := planner.TypeFromName(cd.TypeName)
		if err != nil {
			return nil, desc, err
		}
		desc.Names = append(desc.Names, cd.Colname)
		desc.Types = append(desc.Types, row.ColumnType{Type: t, Nullable: true})
		def.defaults = append(def.defaults, nil)
	}
	col := func(name string) (int, error) {
		i := slices.Index(desc.Names, name)
		if i < 0 {
			return 0, sqlerr.Errorf(sqlerr.UndefinedColumn, "column %q named in key does not exist", name)
		}
		return i, nil
	}
	addKey := func(cons *pg.Constraint, cols []int) error {
		for _, i := range cols {
			if err := planner.RefuseJSONIndexKey(desc.Types[i].Type); err != nil {
				return err
			}
		}
		k := keyDef{name: cons.Conname, cols: cols, primary: cons.Contype == pg.ConstrType_CONSTR_PRIMARY}
		if k.primary {
			for _, o := range def.keys {
				if o.primary {
					return sqlerr.Errorf(sqlerr.InvalidTableDefinition, "multiple primary keys for table %q are not allowed", table)
				}
			}
			for _, i := range cols {
				desc.Types[i].Nullable = false
			}
		}
		if k.name == "" {
			if k.primary {
				k.name = table + "_pkey"
			} else {
				parts := []string{table}
				for _, i := range cols {
					parts = append(parts, desc.Names[i])
				}
				k.name = strings.Join(parts, "_") + "_key"
			}
			k.name = uniqueConstraintName(k.name, names)
			cons.Conname = k.name // pinned should the text be deparsed
		}
		names = append(names, k.name)
		def.keys = append(def.keys, k)
		return nil
	}
	addCheck := func(cons *pg.Constraint, onlyCol string) {
		ch := checkDef{name: cons.Conname, expr: cons.RawExpr}
		if ch.name == "" {
			refs := columnRefs(cons.RawExpr)
			if len(refs) == 1 {
				onlyCol = refs[0]
			} else {
				onlyCol = ""
			}
			base := table + "_check"
			if onlyCol != "" {
				base = table + "_" + onlyCol + "_check"
			}
			ch.name = uniqueConstraintName(base, names)
			cons.Conname = ch.name
		}
		names = append(names, ch.name)
		def.checks = append(def.checks, ch)
	}
	i := 0
	for _, elt := range c.TableElts {
		if cd := elt.GetColumnDef(); cd != nil {
			for _, n := range cd.Constraints {
				cons := n.GetConstraint()
				switch cons.GetContype() {
				case pg.ConstrType_CONSTR_NOTNULL:
					desc.Types[i].Nullable = false
				case pg.ConstrType_CONSTR_NULL:
				case pg.ConstrType_CONSTR_DEFAULT:
					def.defaults[i] = cons.RawExpr
				case pg.ConstrType_CONSTR_PRIMARY, pg.ConstrType_CONSTR_UNIQUE:
					if err := addKey(cons, []int{i}); err != nil {
						return nil, desc, err
					}
				case pg.ConstrType_CONSTR_CHECK:
					addCheck(cons, cd.Colname)
				default:
					return nil, desc, unsupportedConstraint(cons)
				}
			}
			i++
			continue
		}
		cons := elt.GetConstraint()
		switch cons.GetContype() {
		case pg.ConstrType_CONSTR_PRIMARY, pg.ConstrType_CONSTR_UNIQUE:
			var cols []int
			for _, k := range cons.Keys {
				j, err := col(k.GetString_().GetSval())
				if err != nil {
					return nil, desc, err
				}
				cols = append(cols, j)
			}
			if err := addKey(cons, cols); err != nil {
				return nil, desc, err
			}
		case pg.ConstrType_CONSTR_CHECK:
			addCheck(cons, "")
		default:
			return nil, desc, unsupportedConstraint(cons)
		}
	}
	return def, desc, nil
}

func unsupportedConstraint(cons *pg.Constraint) error {
	kind := strings.ToLower(strings.TrimPrefix(cons.GetContype().String(), "CONSTR_"))
	switch cons.GetContype() {
	case pg.ConstrType_CONSTR_FOREIGN:
		kind = "FOREIGN KEY"
	case pg.ConstrType_CONSTR_EXCLUSION:
		kind = "EXCLUDE"
	case pg.ConstrType_CONSTR_IDENTITY, pg.ConstrType_CONSTR_GENERATED:
		kind = "generated columns"
	}
	return sqlerr.Unsupported(kind + " constraints")
}

// uniqueConstraintName appends a number to base while it is taken, as
// PostgreSQL does (t_a_check, t_a_check1).
func uniqueConstraintName(base string, taken []string) string {
	name := base
	for n := 1; slices.Contains(taken, name); n++ {
		name = base + strconv.Itoa(n)
	}
	return name
}

// columnRefs returns the distinct unqualified names of the columns an
// expression references.
func columnRefs(n *pg.Node) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case *pg.Node:
			if x == nil {
				return
			}
			if cr := x.GetColumnRef(); cr != nil {
				if f := cr.Fields; len(f) > 0 {
					if s := f[len(f)-1].GetString_(); s != nil && !slices.Contains(out, s.Sval) {
						out = append(out, s.Sval)
					}
				}
				return
			}
			walk(nodeChildren(x))
		case []*pg.Node:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(n)
	return out
}

// nodeChildren returns the sub-expressions of the expression node kinds a
// CHECK constraint is usually made of.
func nodeChildren(n *pg.Node) []*pg.Node {
	switch v := n.Node.(type) {
	case *pg.Node_AExpr:
		return []*pg.Node{v.AExpr.Lexpr, v.AExpr.Rexpr}
	case *pg.Node_BoolExpr:
		return v.BoolExpr.Args
	case *pg.Node_FuncCall:
		return v.FuncCall.Args
	case *pg.Node_TypeCast:
		return []*pg.Node{v.TypeCast.Arg}
	case *pg.Node_NullTest:
		return []*pg.Node{v.NullTest.Arg}
	case *pg.Node_List:
		return v.List.Items
	case *pg.Node_CoalesceExpr:
		return v.CoalesceExpr.Args
	case *pg.Node_CaseExpr:
		out := []*pg.Node{v.CaseExpr.Arg, v.CaseExpr.Defresult}
		for _, w := range v.CaseExpr.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				out = append(out, cw.Expr, cw.Result)
			}
		}
		return out
	}
	return nil
}

// tableRules is a table's declaration compiled for one statement.
type tableRules struct {
	it       *Item
	widths   []planner.IntWidth
	mods     []planner.TypeMod // nil: none
	defaults []expr.Expr       // per column: the default or a typed NULL
	checks   []compiledCheck
	keys     []keyDef
}

type compiledCheck struct {
	name string
	e    expr.Expr
}

// rulesFor compiles a table's declaration with pl; its keys are its
// PRIMARY KEY and UNIQUE constraints and the unique indexes on it in sn
// (uniqueindex.go).
func rulesFor(pl *planner.Planner, sn *snapshot, it *Item) (*tableRules, error) {
	def, err := tableDefOf(it)
	if err != nil {
		return nil, err
	}
	r := &tableRules{it: it, widths: planner.TableIntWidths(it.SQL), mods: planner.TableTypeMods(it.SQL), keys: def.keys}
	if u := sn.uniqueIndexKeys(it); len(u) > 0 {
		r.keys = append(slices.Clip(r.keys), u...)
	}
	r.defaults = make([]expr.Expr, it.Desc.Arity())
	for i := range r.defaults {
		r.defaults[i] = expr.TypedNull(it.Desc.Types[i].Type)
		if i < len(def.defaults) && def.defaults[i] != nil {
			d, err := pl.ColumnDefault(it.Desc, r.widths, r.mods, i, def.defaults[i])
			if err != nil {
				return nil, fmt.Errorf("default of column %s: %w", it.Desc.Name(i), err)
			}
			r.defaults[i] = d
		}
	}
	for _, ch := range def.checks {
		e, err := pl.CheckExpr(it.Desc, r.widths, r.mods, ch.expr)
		if err != nil {
			return nil, err
		}
		r.checks = append(r.checks, compiledCheck{name: ch.name, e: e})
	}
	return r, nil
}

// checkRow enforces NOT NULL and CHECK constraints on a row to be
// written. PostgreSQL checks NOT NULL first.
func (r *tableRules) checkRow(datums []row.Datum) error {
	for i, d := range datums {
		if d.IsNull() && !r.it.Desc.Types[i].Nullable {
			return &sqlerr.Error{Code: sqlerr.NotNullViolation,
				Message: fmt.Sprintf("null value in column %q of relation %q violates not-null constraint", r.it.Desc.Name(i), r.it.Name),
				Detail:  "Failing row contains " + rowText(datums) + "."}
		}
	}
	for _, ch := range r.checks {
		v, err := ch.e.Eval(datums)
		if err != nil {
			return sqlerr.Convert(err)
		}
		if !v.IsNull() && !v.Bool() {
			return &sqlerr.Error{Code: sqlerr.CheckViolation,
				Message: fmt.Sprintf("new row for relation %q violates check constraint %q", r.it.Name, ch.name),
				Detail:  "Failing row contains " + rowText(datums) + "."}
		}
	}
	return nil
}

// rowText renders a row as PostgreSQL's DETAIL lines do: (1, x, null).
func rowText(datums []row.Datum) string {
	parts := make([]string, len(datums))
	for i, d := range datums {
		if d.IsNull() {
			parts[i] = "null"
		} else {
			parts[i] = string(d.AppendText(nil))
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
