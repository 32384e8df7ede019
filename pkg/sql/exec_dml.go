package sql

import (
	"context"
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// writeTarget resolves the table a DML statement writes.
func writeTarget(sn *snapshot, rv *pg.RangeVar) (*Item, planner.Relation, error) {
	name := rangeVarName(rv)
	it, ok := sn.lookup(name)
	if !ok {
		return nil, planner.Relation{}, undefinedRelation(name)
	}
	if it.Kind != KindTable {
		return nil, planner.Relation{}, sqlerr.Errorf(sqlerr.WrongObjectType, "cannot write to %s %q: only tables can be written", kindName(it.Kind), it.Name)
	}
	rel := planner.Relation{ID: it.ID, Name: it.Name, Desc: it.Desc, IntWidths: planner.TableIntWidths(it.SQL), TypeMods: planner.TableTypeMods(it.SQL),
		ColumnGuard: sn.readGuard(it)}
	return it, rel, nil
}

func aliasOf(rv *pg.RangeVar) string {
	if rv.Alias != nil {
		return rv.Alias.Aliasname
	}
	return ""
}

// writePlan is a planned INSERT, UPDATE or DELETE.
type writePlan struct {
	it    *Item
	rules *tableRules
	// q computes the rows to add (INSERT), the rows to remove (DELETE) or
	// old and new rows side by side (UPDATE).
	q         *planner.Query
	returning *planner.Returning
	conflict  *onConflict // INSERT ... ON CONFLICT
}

// planWrite plans an INSERT, UPDATE or DELETE and returns the columns of
// its RETURNING list (nil without one).
func (s *Session) planWrite(_ context.Context, sn *snapshot, pl *planner.Planner, st *parse.Postgres) ([]Column, error) {
	wp, err := planWriteQuery(sn, pl, st.Node)
	if err != nil {
		return nil, err
	}
	return wp.columns(), nil
}

func (wp *writePlan) columns() []Column {
	if wp.returning == nil {
		return nil
	}
	cols := make([]Column, len(wp.returning.Names))
	for i := range cols {
		cols[i] = Column{Name: wp.returning.Names[i], Type: wp.returning.Types[i],
			Width: wp.returning.Widths[i], Mod: wp.returning.Mods[i]}
	}
	return cols
}

func planWriteQuery(sn *snapshot, pl *planner.Planner, n *pg.Node) (*writePlan, error) {
	var (
		rv        *pg.RangeVar
		returning []*pg.Node
		wp        = &writePlan{}
		rel       planner.Relation
		err       error
	)
	switch v := n.Node.(type) {
	case *pg.Node_InsertStmt:
		ins := v.InsertStmt
		if ins.WithClause != nil {
			return nil, sqlerr.Unsupported("WITH in INSERT")
		}
		rv, returning = ins.Relation, ins.ReturningList
		if wp.it, rel, err = writeTarget(sn, rv); err != nil {
			return nil, err
		}
		insCols, err := insertColumns(wp.it, ins)
		if err != nil {
			return nil, err
		}
		if err := sn.checkWriteColumns(wp.it, privInsert, insCols, len(returning) > 0); err != nil {
			return nil, err
		}
		if oc := ins.OnConflictClause; oc != nil && oc.Action == pg.OnConflictAction_ONCONFLICT_UPDATE {
			set, err := setColumns(wp.it, oc.TargetList)
			if err != nil {
				return nil, err
			}
			if err := sn.checkWriteColumns(wp.it, privUpdate, set, false); err != nil {
				return nil, err
			}
		}
		if wp.rules, err = rulesFor(pl, sn, wp.it); err != nil {
			return nil, err
		}
		var cols []string
		for _, c := range ins.Cols {
			rt := c.GetResTarget()
			if rt == nil || len(rt.Indirection) > 0 {
				return nil, sqlerr.Unsupported("this form of INSERT column list")
			}
			cols = append(cols, rt.Name)
		}
		sel := ins.SelectStmt.GetSelectStmt()
		if sel == nil {
			// DEFAULT VALUES: one row of defaults.
			sel = &pg.SelectStmt{ValuesLists: []*pg.Node{{Node: &pg.Node_List{List: &pg.List{}}}}}
			cols = nil
			if wp.q, err = pl.PlanInsert(wp.it.Desc, wp.rules.widths, wp.rules.mods, wp.rules.defaults, []string{}, sel); err != nil {
				return nil, err
			}
		} else {
			if err := replaceDefaults(wp.it, cols, sel); err != nil {
				return nil, err
			}
			if wp.q, err = pl.PlanInsert(wp.it.Desc, wp.rules.widths, wp.rules.mods, wp.rules.defaults, cols, sel); err != nil {
				return nil, err
			}
		}
		if ins.OnConflictClause != nil {
			if wp.conflict, err = planOnConflict(pl, wp.rules, rel, aliasOf(rv), ins.OnConflictClause); err != nil {
				return nil, err
			}
		}
	case *pg.Node_UpdateStmt:
		up := v.UpdateStmt
		if len(up.FromClause) > 0 {
			return nil, sqlerr.Unsupported("UPDATE ... FROM")
		}
		rv, returning = up.Relation, up.ReturningList
		if wp.it, rel, err = writeTarget(sn, rv); err != nil {
			return nil, err
		}
		set, err := setColumns(wp.it, up.TargetList)
		if err != nil {
			return nil, err
		}
		if err := sn.checkWriteColumns(wp.it, privUpdate, set, up.WhereClause != nil || len(returning) > 0); err != nil {
			return nil, err
		}
		if wp.rules, err = rulesFor(pl, sn, wp.it); err != nil {
			return nil, err
		}
		if wp.q, err = pl.PlanUpdate(rel, aliasOf(rv), up.TargetList, up.WhereClause); err != nil {
			return nil, err
		}
	case *pg.Node_DeleteStmt:
		del := v.DeleteStmt
		if len(del.UsingClause) > 0 {
			return nil, sqlerr.Unsupported("DELETE ... USING")
		}
		rv, returning = del.Relation, del.ReturningList
		if wp.it, rel, err = writeTarget(sn, rv); err != nil {
			return nil, err
		}
		if err := sn.checkWrite(wp.it, privDelete, del.WhereClause != nil || len(returning) > 0); err != nil {
			return nil, err
		}
		wp.rules = &tableRules{it: wp.it}
		if wp.q, err = pl.PlanDelete(rel, aliasOf(rv), del.WhereClause); err != nil {
			return nil, err
		}
	default:
		return nil, sqlerr.Unsupported("write statement")
	}
	if len(returning) > 0 {
		if wp.returning, err = pl.ReturningList(rel, aliasOf(rv), returning); err != nil {
			return nil, err
		}
	}
	return wp, nil
}

// replaceDefaults replaces the DEFAULT items of an INSERT's VALUES lists
// with the target columns' default expressions (NULL without one).
func replaceDefaults(it *Item, cols []string, sel *pg.SelectStmt) error {
	if len(sel.ValuesLists) == 0 {
		return nil
	}
	var def *tableDef
	for _, vl := range sel.ValuesLists {
		items := vl.GetList().GetItems()
		for k, n := range items {
			if n.GetSetToDefault() == nil {
				continue
			}
			if def == nil {
				var err error
				if def, err = tableDefOf(it); err != nil {
					return err
				}
			}
			col := k
			if len(cols) > 0 {
				if k >= len(cols) {
					continue // too many expressions: PlanInsert reports it
				}
				col = slices.Index(it.Desc.Names, cols[k])
			}
			if col < 0 || col >= len(def.defaults) {
				continue
			}
			if d := def.defaults[col]; d != nil {
				items[k] = d
			} else {
				items[k] = &pg.Node{Node: &pg.Node_AConst{AConst: &pg.A_Const{Isnull: true}}}
			}
		}
	}
	return nil
}

// lockedSnapshot takes the write lock (lockWrites) and then reads the
// catalog under it, so a DDL statement decides on the catalog no other
// writer can change before it commits; the caller defers unlock.
func (s *Session) lockedSnapshot(ctx context.Context) (*snapshot, func(), error) {
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return nil, nil, err
	}
	sn, err := s.snapshot(ctx)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return sn, unlock, nil
}

// lockWrites takes Engine.writeMu unless this session already holds it
// (a write that reads flushes the transaction's buffered writes, which
// takes the lock too) and returns its release. Waiting ends with 57014 when
// ctx ends (statement_timeout, a cancel request, a closed connection).
func (s *Session) lockWrites(ctx context.Context) (func(), error) {
	if s.writeLocked {
		return func() {}, nil
	}
	if err := s.engine.writeMu.LockContext(ctx); err != nil {
		return nil, err
	}
	s.writeLocked = true
	return func() {
		s.writeLocked = false
		s.engine.writeMu.Unlock()
	}, nil
}

// write executes INSERT, UPDATE or DELETE: compute the changed rows with
// a read, check the table's constraints, then append them to the table.
// writeMu keeps another writer from changing the table between the read
// (and the key check) and the append.
func (s *Session) write(ctx context.Context, n *pg.Node, params []row.Datum, verb string) (*Result, error) {
	if s.tx.explicit && (verb != "INSERT" || isUpsert(n)) {
		if err := s.holdBlockLock(ctx); err != nil {
			return nil, err
		}
	}
	sn, unlock, err := s.lockedSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	wp, err := planWriteQuery(sn, s.planner(sn, paramTypesOf(params), params), n)
	if err != nil {
		return nil, err
	}
	// Writes read their own table at the latest time.
	rows, err := s.readStrict(ctx, sn, wp.q)
	if err != nil {
		return nil, err
	}
	arity := wp.it.Desc.Arity()
	ch := &tableChange{}
	var out [][]row.Datum // the written rows, for the count and RETURNING
	switch verb {
	case "INSERT":
		if wp.conflict != nil {
			if ch, out, err = s.resolveConflicts(ctx, sn, wp, rows); err != nil {
				return nil, err
			}
		} else {
			ch.adds, out = rows, rows
		}
	case "DELETE":
		ch.removes, out = rows, rows
	case "UPDATE":
		for _, r := range rows {
			ch.removes = append(ch.removes, r[:arity])
			ch.adds = append(ch.adds, r[arity:])
		}
		out = ch.adds
	}
	// An explicit block buffers every write; an implicit transaction only
	// plain INSERTs (it applies them before an UPDATE, a DELETE or an
	// INSERT ... ON CONFLICT DO UPDATE runs, which it applies at once).
	buffered := s.tx.explicit || (verb == "INSERT" && s.tx.implicit && !isUpsert(n))
	if err := s.checkChange(ctx, sn, wp.rules, ch, buffered); err != nil {
		return nil, err
	}
	updates := ch.updates()
	if buffered {
		s.bufferWrite(wp.it, updates)
	} else if len(updates) > 0 {
		if err := s.applyWrites(ctx, []pendingWrite{{id: wp.it.ID, name: wp.it.Name, updates: updates}}); err != nil {
			return nil, err
		}
	}
	tag := fmt.Sprintf("%s %d", verb, len(out))
	if verb == "INSERT" {
		tag = fmt.Sprintf("INSERT 0 %d", len(out))
	}
	if wp.returning == nil {
		return tagf("%s", tag), nil
	}
	ret, err := evalReturning(wp.returning, out)
	if err != nil {
		return nil, err
	}
	return &Result{Tag: tag, Columns: wp.columns(), Rows: ret}, nil
}

// checkChange enforces a table's constraints on a change: NOT NULL and
// CHECK on each added row, then the keys against the table (and, for a
// change to be buffered in a transaction, the transaction's earlier
// writes to it). The caller holds writeMu.
func (s *Session) checkChange(ctx context.Context, sn *snapshot, rules *tableRules, ch *tableChange, buffered bool) error {
	for _, a := range ch.adds {
		if err := rules.checkRow(a); err != nil {
			return err
		}
	}
	if len(rules.keys) == 0 || len(ch.adds) == 0 {
		return nil
	}
	check := ch
	if buffered {
		var err error
		if check, err = s.withPending(rules.it, ch); err != nil {
			return err
		}
	}
	return s.checkKeys(ctx, sn, rules, check)
}

// updates encodes a change as row diffs: removals first.
func (ch *tableChange) updates() []RowDiff {
	out := make([]RowDiff, 0, len(ch.adds)+len(ch.removes))
	for _, r := range ch.removes {
		out = append(out, RowDiff{Row: row.Pack(r...), Diff: -1})
	}
	for _, r := range ch.adds {
		out = append(out, RowDiff{Row: row.Pack(r...), Diff: 1})
	}
	return out
}

// evalReturning evaluates a RETURNING list over the written rows.
func evalReturning(r *planner.Returning, rows [][]row.Datum) ([][]row.Datum, error) {
	out := make([][]row.Datum, len(rows))
	for i, w := range rows {
		vals := make([]row.Datum, len(r.Exprs))
		for j, e := range r.Exprs {
			v, err := e.Eval(w)
			if err != nil {
				return nil, sqlerr.Convert(err)
			}
			vals[j] = v
		}
		out[i] = vals
	}
	return out, nil
}

// readStrict reads at strict serializability whatever the session's
// isolation, as a read-then-write must see the latest writes.
func (s *Session) readStrict(ctx context.Context, sn *snapshot, q *planner.Query) ([][]row.Datum, error) {
	iso, _ := s.vars.Get(VarTransactionIsolation)
	if iso != IsolationStrictSerializable {
		if _, err := s.vars.Set(VarTransactionIsolation, IsolationStrictSerializable); err != nil {
			return nil, err
		}
		defer func() { _, _ = s.vars.Set(VarTransactionIsolation, iso) }()
	}
	return s.read(ctx, sn, q)
}

// isUpsert reports whether n is an INSERT ... ON CONFLICT DO UPDATE: a
// write that may retract rows it read, like an UPDATE.
func isUpsert(n *pg.Node) bool {
	return n.GetInsertStmt().GetOnConflictClause().GetAction() == pg.OnConflictAction_ONCONFLICT_UPDATE
}

func (s *Session) insert(ctx context.Context, n *pg.InsertStmt, params []row.Datum) (*Result, error) {
	return s.write(ctx, &pg.Node{Node: &pg.Node_InsertStmt{InsertStmt: n}}, params, "INSERT")
}

func (s *Session) update(ctx context.Context, n *pg.UpdateStmt, params []row.Datum) (*Result, error) {
	return s.write(ctx, &pg.Node{Node: &pg.Node_UpdateStmt{UpdateStmt: n}}, params, "UPDATE")
}

func (s *Session) delete(ctx context.Context, n *pg.DeleteStmt, params []row.Datum) (*Result, error) {
	return s.write(ctx, &pg.Node{Node: &pg.Node_DeleteStmt{DeleteStmt: n}}, params, "DELETE")
}
