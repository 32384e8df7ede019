package sql

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// checkTableOptions accepts the storage parameters of CREATE TABLE ...
// WITH (...) that PostgreSQL tools set and Tandem has no use for
// (fillfactor, autovacuum_*), validating fillfactor as PostgreSQL does.
func checkTableOptions(opts []*pg.Node) error {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		switch {
		case d.Defname == "fillfactor":
			v, err := strconv.Atoi(defElemText(d))
			if err != nil {
				return sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid value for integer option %q: %s", d.Defname, defElemText(d))
			}
			if v < 10 || v > 100 {
				return sqlerr.Errorf(sqlerr.InvalidParameterValue, "value %d out of bounds for option %q", v, d.Defname)
			}
		case len(d.Defname) > 11 && d.Defname[:11] == "autovacuum_":
		default:
			return sqlerr.Errorf(sqlerr.InvalidParameterValue, "unrecognized parameter %q", d.Defname)
		}
	}
	return nil
}

// defElemText returns an option's value as written.
func defElemText(d *pg.DefElem) string {
	switch v := d.Arg.GetNode().(type) {
	case *pg.Node_Integer:
		return strconv.Itoa(int(v.Integer.Ival))
	case *pg.Node_String_:
		return v.String_.Sval
	case *pg.Node_Float:
		return v.Float.Fval
	case *pg.Node_TypeName:
		if n := len(v.TypeName.Names); n > 0 {
			return v.TypeName.Names[n-1].GetString_().GetSval()
		}
	case *pg.Node_Boolean:
		return strconv.FormatBool(v.Boolean.Boolval)
	}
	return ""
}

// tableItem resolves a table named by a statement.
func tableItem(sn *snapshot, rv *pg.RangeVar) (*Item, error) {
	it, ok := sn.lookup(rangeVarName(rv))
	if !ok {
		return nil, undefinedRelation(rangeVarName(rv))
	}
	if it.Kind != KindTable {
		return nil, sqlerr.Errorf(sqlerr.WrongObjectType, "%q is not a table", it.Name)
	}
	return it, nil
}

// truncate removes every row of the named tables. In a transaction it is
// buffered like an INSERT and applied, under writeMu, at COMMIT.
func (s *Session) truncate(ctx context.Context, t *pg.TruncateStmt) (*Result, error) {
	sn, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	var its []*Item
	for _, n := range t.Relations {
		it, err := tableItem(sn, n.GetRangeVar())
		if err != nil {
			return nil, err
		}
		if err := sn.checkRelation(s.user, it, privTruncate); err != nil {
			return nil, err
		}
		its = append(its, it)
	}
	if s.tx.buffering() {
		for _, it := range its {
			s.tx.pending = append(s.tx.pending, pendingWrite{id: it.ID, name: it.Name, truncate: true})
		}
		return tagf("TRUNCATE TABLE"), nil
	}
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var writes []pendingWrite
	for _, it := range its {
		w, err := s.prepareCommit(ctx, sn, &pendingWrite{id: it.ID, name: it.Name, truncate: true})
		if err != nil {
			return nil, err
		}
		writes = append(writes, w)
	}
	if err := s.applyWrites(ctx, writes); err != nil {
		return nil, err
	}
	return tagf("TRUNCATE TABLE"), nil
}

// vacuum accepts VACUUM and ANALYZE, which Tandem has no use for (tables
// are compacted by storage and plans use no statistics), after checking
// the tables exist.
func (s *Session) vacuum(ctx context.Context, v *pg.VacuumStmt) (*Result, error) {
	sn, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range v.Rels {
		if rv := n.GetVacuumRelation().GetRelation(); rv != nil {
			if _, ok := sn.lookup(rangeVarName(rv)); !ok {
				return nil, undefinedRelation(rangeVarName(rv))
			}
		}
	}
	if v.IsVacuumcmd {
		return tagf("VACUUM"), nil
	}
	return tagf("ANALYZE"), nil
}

// alterTable handles ALTER TABLE ... ADD [CONSTRAINT] and ADD COLUMN.
func (s *Session) alterTable(ctx context.Context, a *pg.AlterTableStmt) (*Result, error) {
	if isChangeOwner(a) {
		return s.alterOwner(ctx, a)
	}
	if a.Objtype != pg.ObjectType_OBJECT_TABLE {
		return nil, sqlerr.Unsupported("ALTER " + a.Objtype.String())
	}
	if len(a.Cmds) != 1 {
		return nil, sqlerr.Unsupported("ALTER TABLE with several actions")
	}
	sn, it, unlock, res, err := s.lockedAlterTarget(ctx, a.Relation, a.MissingOk)
	if it == nil {
		return res, err
	}
	defer unlock()
	if it.Kind != KindTable {
		return nil, sqlerr.Errorf(sqlerr.WrongObjectType, "%q is not a table", it.Name)
	}
	if err := sn.checkOwner(s.user, it); err != nil {
		return nil, err
	}
	cmd := a.Cmds[0].GetAlterTableCmd()
	c, err := parseCreateTable(it.SQL)
	if err != nil {
		return nil, err
	}
	switch cmd.GetSubtype() {
	case pg.AlterTableType_AT_AddConstraint:
		err = s.addConstraint(ctx, sn, it, c, cmd.Def)
	case pg.AlterTableType_AT_AddColumn:
		err = s.addColumn(ctx, sn, it, c, cmd)
	default:
		return nil, sqlerr.Unsupported("ALTER TABLE " + cmd.GetSubtype().String())
	}
	if err != nil {
		return nil, err
	}
	return tagf("ALTER TABLE"), nil
}

// redefine validates an edited CREATE TABLE statement for table it and
// returns the altered item and its compiled rules.
func (s *Session) redefine(sn *snapshot, it *Item, c *pg.CreateStmt) (Item, *tableRules, *tableDef, error) {
	def, desc, err := declaredConstraints(it.Name, c)
	if err != nil {
		return Item{}, nil, nil, err
	}
	text, err := deparseCreateTable(c)
	if err != nil {
		return Item{}, nil, nil, err
	}
	next := *it
	next.Desc, next.SQL = desc, text
	rules, err := rulesFor(s.planner(sn, nil, nil), sn, &next)
	if err != nil {
		return Item{}, nil, nil, err
	}
	return next, rules, def, nil
}

// alteration is a table with one element (column or constraint) added:
// the altered item, its rules, the constraints before and after, and the
// table's current rows to validate or rewrite.
type alteration struct {
	next          Item
	rules         *tableRules
	before, after *tableDef
	rows          [][]row.Datum
}

// withElement appends elt to the table's definition c and reads the
// table's rows. The caller holds Engine.writeMu.
func (s *Session) withElement(ctx context.Context, sn *snapshot, it *Item, c *pg.CreateStmt, elt *pg.Node) (alteration, error) {
	before, err := tableDefOf(it)
	if err != nil {
		return alteration{}, err
	}
	c.TableElts = append(c.TableElts, elt)
	next, rules, after, err := s.redefine(sn, it, c)
	if err != nil {
		return alteration{}, err
	}
	rows, err := s.tableRows(ctx, it)
	if err != nil {
		return alteration{}, err
	}
	return alteration{next: next, rules: rules, before: before, after: after, rows: rows}, nil
}

// addConstraint adds a PRIMARY KEY, UNIQUE or CHECK constraint after
// checking the table's rows satisfy it.
func (s *Session) addConstraint(ctx context.Context, sn *snapshot, it *Item, c *pg.CreateStmt, def *pg.Node) error {
	cons := def.GetConstraint()
	switch cons.GetContype() {
	case pg.ConstrType_CONSTR_PRIMARY, pg.ConstrType_CONSTR_UNIQUE, pg.ConstrType_CONSTR_CHECK:
	default:
		return unsupportedConstraint(cons)
	}
	a, err := s.withElement(ctx, sn, it, c, def)
	if err != nil {
		return err
	}
	next := a.next
	if err := validateRows(&next, a.rows, a.before, a.after, a.rules); err != nil {
		return err
	}
	if err := s.engine.backend.AlterTable(ctx, next); err != nil {
		return err
	}
	if cons.GetContype() != pg.ConstrType_CONSTR_PRIMARY {
		return nil
	}
	sn, cur, err := s.reloadTable(ctx, next.Name)
	if err != nil {
		return err
	}
	return s.createKeyIndex(ctx, sn, cur)
}

// validateRows checks a table's existing rows against the constraints
// after declares and before did not, with PostgreSQL's messages for a
// constraint added to a populated table.
func validateRows(it *Item, rows [][]row.Datum, before, after *tableDef, rules *tableRules) error {
	for i, t := range it.Desc.Types {
		if t.Nullable {
			continue
		}
		for _, r := range rows {
			if i < len(r) && r[i].IsNull() {
				return sqlerr.Errorf(sqlerr.NotNullViolation, "column %q of relation %q contains null values", it.Desc.Name(i), it.Name)
			}
		}
	}
	for _, k := range after.keys {
		if slices.ContainsFunc(before.keys, func(o keyDef) bool { return o.name == k.name }) {
			continue
		}
		seen := map[string]bool{}
		for _, r := range rows {
			ks, ok := encodedKey(r, k.cols)
			if !ok {
				continue
			}
			if seen[ks] {
				return &sqlerr.Error{Code: sqlerr.UniqueViolation,
					Message: fmt.Sprintf("could not create unique index %q", k.name),
					Detail:  "Key " + keyText(it, k, r) + " is duplicated."}
			}
			seen[ks] = true
		}
	}
	for _, ch := range rules.checks {
		if slices.ContainsFunc(before.checks, func(o checkDef) bool { return o.name == ch.name }) {
			continue
		}
		for _, r := range rows {
			v, err := ch.e.Eval(r)
			if err != nil {
				return sqlerr.Convert(err)
			}
			if !v.IsNull() && !v.Bool() {
				return sqlerr.Errorf(sqlerr.CheckViolation, "check constraint %q of relation %q is violated by some row", ch.name, it.Name)
			}
		}
	}
	return nil
}

// dependentBlocks refuses a change to a table that would break the items
// defined over it (views re-planned from their text, indexes and
// materialized views maintaining its rows).
func dependentBlocks(sn *snapshot, it *Item, change string, kinds ...ItemKind) error {
	for _, d := range sn.dependents(it.ID) {
		if len(kinds) == 0 || slices.Contains(kinds, d.Kind) {
			return sqlerr.Errorf(sqlerr.DependentObjectsStillExist,
				"cannot %s table %q because %s %q depends on it", change, it.Name, kindName(d.Kind), d.Name)
		}
	}
	return nil
}

// addColumn adds a column and rewrites the table's rows with its default
// (or NULL) in one write.
func (s *Session) addColumn(ctx context.Context, sn *snapshot, it *Item, c *pg.CreateStmt, cmd *pg.AlterTableCmd) error {
	cd := cmd.Def.GetColumnDef()
	if cd == nil {
		return sqlerr.Unsupported("this form of ADD COLUMN")
	}
	if slices.Contains(it.Desc.Names, cd.Colname) {
		if cmd.MissingOk {
			return nil
		}
		return sqlerr.Errorf(sqlerr.DuplicateColumn, "column %q of relation %q already exists", cd.Colname, it.Name)
	}
	var owned []*Item
	for _, d := range sn.dependents(it.ID) {
		if ownedIndex(d, it) {
			owned = append(owned, d)
			continue
		}
		return sqlerr.Errorf(sqlerr.DependentObjectsStillExist,
			"cannot add a column to table %q because %s %q depends on it", it.Name, kindName(d.Kind), d.Name)
	}
	a, err := s.withElement(ctx, sn, it, c, cmd.Def)
	if err != nil {
		return err
	}
	next, rules, before, after, rows := a.next, a.rules, a.before, a.after, a.rows
	n := it.Desc.Arity()
	var updates []RowDiff
	added := make([][]row.Datum, len(rows))
	for i, r := range rows {
		v, err := rules.defaults[n].Eval(nil)
		if err != nil {
			return sqlerr.Convert(err)
		}
		added[i] = append(slices.Clone(r), v)
		updates = append(updates, RowDiff{Row: row.Pack(r...), Diff: -1}, RowDiff{Row: row.Pack(added[i]...), Diff: 1})
	}
	if err := validateRows(&next, added, before, after, rules); err != nil {
		return err
	}
	// The key index maintains rows of the old columns: it is dropped
	// before the rewrite and built again after it (or after a failure).
	if len(owned) > 0 {
		ids := make([]plan.GlobalID, len(owned))
		for i, o := range owned {
			ids[i] = o.ID
		}
		if err := s.engine.backend.DropItems(ctx, ids); err != nil {
			return fmt.Errorf("rebuild key index: %w", err)
		}
	}
	rebuilt := func(cause error) error {
		if len(owned) == 0 {
			return cause
		}
		sn, cur, err := s.reloadTable(ctx, it.Name)
		if err == nil {
			err = s.createKeyIndex(ctx, sn, cur)
		}
		if cause != nil {
			return cause
		}
		return err
	}
	if err := s.engine.backend.AlterTable(ctx, next); err != nil {
		return rebuilt(err)
	}
	if err := s.applyWrites(ctx, []pendingWrite{{id: it.ID, name: it.Name, updates: updates}}); err != nil {
		// Put the old definition back: the rows still have the old columns.
		if rerr := s.engine.backend.AlterTable(ctx, *it); rerr != nil {
			return fmt.Errorf("%w (and restoring the old definition failed: %v)", err, rerr)
		}
		return rebuilt(err)
	}
	return rebuilt(nil)
}

// rename handles ALTER TABLE t RENAME TO u and RENAME COLUMN a TO b.
func (s *Session) rename(ctx context.Context, r *pg.RenameStmt) (*Result, error) {
	if r.RenameType != pg.ObjectType_OBJECT_TABLE && !(r.RenameType == pg.ObjectType_OBJECT_COLUMN && r.RelationType == pg.ObjectType_OBJECT_TABLE) {
		return nil, sqlerr.Unsupported("ALTER ... RENAME of " + r.RenameType.String())
	}
	sn, it, unlock, res, err := s.lockedAlterTarget(ctx, r.Relation, r.MissingOk)
	if it == nil {
		return res, err
	}
	defer unlock()
	if it.Kind != KindTable {
		return nil, sqlerr.Unsupported("renaming a " + kindName(it.Kind))
	}
	if err := sn.checkOwner(s.user, it); err != nil {
		return nil, err
	}
	// Views are re-planned from their text, which names the table and
	// its columns.
	if err := dependentBlocks(sn, it, "rename", KindView); err != nil {
		return nil, err
	}
	c, err := parseCreateTable(it.SQL)
	if err != nil {
		return nil, err
	}
	// Pin the constraints' names first: derived names must not change.
	if _, _, err := declaredConstraints(it.Name, c); err != nil {
		return nil, err
	}
	if r.RenameType == pg.ObjectType_OBJECT_TABLE {
		if err := publicName(parse.ObjectName{Name: r.Newname}); err != nil {
			return nil, err
		}
		if err := sn.freeName(parse.ObjectName{Name: r.Newname}); err != nil {
			return nil, sqlerr.Errorf(sqlerr.DuplicateTable, "relation %q already exists", r.Newname)
		}
		c.Relation.Relname = r.Newname
	} else if err := renameColumn(it, c, r.Subname, r.Newname); err != nil {
		return nil, err
	}
	next, _, _, err := s.redefine(sn, it, c)
	if err != nil {
		return nil, err
	}
	next.Name = c.Relation.Relname
	if err := s.engine.backend.AlterTable(ctx, next); err != nil {
		return nil, err
	}
	return tagf("ALTER TABLE"), nil
}

// renameColumn renames a column in a CREATE TABLE statement: its
// definition, the key lists and the column references of CHECK and
// DEFAULT expressions.
func renameColumn(it *Item, c *pg.CreateStmt, from, to string) error {
	if !slices.Contains(it.Desc.Names, from) {
		return sqlerr.Errorf(sqlerr.UndefinedColumn, "column %q does not exist", from)
	}
	if slices.Contains(it.Desc.Names, to) {
		return sqlerr.Errorf(sqlerr.DuplicateColumn, "column %q of relation %q already exists", to, it.Name)
	}
	renameIn := func(cons *pg.Constraint) {
		for _, k := range cons.Keys {
			if s := k.GetString_(); s != nil && s.Sval == from {
				s.Sval = to
			}
		}
		renameRefs(cons.RawExpr, from, to)
	}
	for _, elt := range c.TableElts {
		if cd := elt.GetColumnDef(); cd != nil {
			if cd.Colname == from {
				cd.Colname = to
			}
			for _, n := range cd.Constraints {
				renameIn(n.GetConstraint())
			}
		} else if cons := elt.GetConstraint(); cons != nil {
			renameIn(cons)
		}
	}
	return nil
}

// renameRefs renames the column references of an expression.
func renameRefs(n *pg.Node, from, to string) {
	if n == nil {
		return
	}
	if cr := n.GetColumnRef(); cr != nil {
		if f := cr.Fields; len(f) > 0 {
			if s := f[len(f)-1].GetString_(); s != nil && s.Sval == from {
				s.Sval = to
			}
		}
		return
	}
	for _, ch := range nodeChildren(n) {
		renameRefs(ch, from, to)
	}
}

// lockedAlterTarget locks the catalog (lockedSnapshot) and finds the
// relation an ALTER TABLE names. When it is missing, it returns a nil item,
// holds nothing, and the statement is answered with (res, err): the tag of
// a statement that did nothing under IF EXISTS, 42P01 otherwise.
func (s *Session) lockedAlterTarget(ctx context.Context, rv *pg.RangeVar, missingOk bool) (sn *snapshot, it *Item, unlock func(), res *Result, err error) {
	sn, unlock, err = s.lockedSnapshot(ctx)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	it, ok := sn.lookup(rangeVarName(rv))
	switch {
	case ok:
		return sn, it, unlock, nil, nil
	case missingOk:
		unlock()
		return nil, nil, nil, tagf("ALTER TABLE"), nil
	default:
		unlock()
		return nil, nil, nil, nil, undefinedRelation(rangeVarName(rv))
	}
}
