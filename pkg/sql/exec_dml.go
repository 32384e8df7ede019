package sql

import (
	"context"
	"fmt"

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
	return it, planner.Relation{ID: it.ID, Name: it.Name, Desc: it.Desc}, nil
}

func aliasOf(rv *pg.RangeVar) string {
	if rv.Alias != nil {
		return rv.Alias.Aliasname
	}
	return ""
}

// planWrite plans an INSERT, UPDATE or DELETE; it returns the table and
// a query whose rows are the rows to add (INSERT), the rows to remove
// (DELETE) or old and new rows side by side (UPDATE).
func (s *Session) planWrite(_ context.Context, sn *snapshot, pl *planner.Planner, st *parse.Postgres) error {
	_, _, err := planWriteQuery(sn, pl, st.Node)
	return err
}

func planWriteQuery(sn *snapshot, pl *planner.Planner, n *pg.Node) (*Item, *planner.Query, error) {
	switch v := n.Node.(type) {
	case *pg.Node_InsertStmt:
		ins := v.InsertStmt
		if ins.OnConflictClause != nil {
			return nil, nil, sqlerr.Unsupported("INSERT ... ON CONFLICT")
		}
		if len(ins.ReturningList) > 0 {
			return nil, nil, sqlerr.Unsupported("RETURNING")
		}
		if ins.WithClause != nil {
			return nil, nil, sqlerr.Unsupported("WITH in INSERT")
		}
		it, _, err := writeTarget(sn, ins.Relation)
		if err != nil {
			return nil, nil, err
		}
		var cols []string
		for _, c := range ins.Cols {
			rt := c.GetResTarget()
			if rt == nil || len(rt.Indirection) > 0 {
				return nil, nil, sqlerr.Unsupported("this form of INSERT column list")
			}
			cols = append(cols, rt.Name)
		}
		sel := ins.SelectStmt.GetSelectStmt()
		if sel == nil {
			return nil, nil, sqlerr.Unsupported("INSERT ... DEFAULT VALUES")
		}
		q, err := pl.PlanInsert(it.Desc, planner.TableIntWidths(it.SQL), planner.TableTypeMods(it.SQL), cols, sel)
		return it, q, err
	case *pg.Node_UpdateStmt:
		up := v.UpdateStmt
		if len(up.FromClause) > 0 {
			return nil, nil, sqlerr.Unsupported("UPDATE ... FROM")
		}
		if len(up.ReturningList) > 0 {
			return nil, nil, sqlerr.Unsupported("RETURNING")
		}
		it, rel, err := writeTarget(sn, up.Relation)
		if err != nil {
			return nil, nil, err
		}
		rel.IntWidths = planner.TableIntWidths(it.SQL)
		rel.TypeMods = planner.TableTypeMods(it.SQL)
		q, err := pl.PlanUpdate(rel, aliasOf(up.Relation), up.TargetList, up.WhereClause)
		return it, q, err
	case *pg.Node_DeleteStmt:
		del := v.DeleteStmt
		if len(del.UsingClause) > 0 {
			return nil, nil, sqlerr.Unsupported("DELETE ... USING")
		}
		if len(del.ReturningList) > 0 {
			return nil, nil, sqlerr.Unsupported("RETURNING")
		}
		it, rel, err := writeTarget(sn, del.Relation)
		if err != nil {
			return nil, nil, err
		}
		q, err := pl.PlanDelete(rel, aliasOf(del.Relation), del.WhereClause)
		return it, q, err
	}
	return nil, nil, sqlerr.Unsupported("write statement")
}

// write executes INSERT, UPDATE or DELETE: compute the changed rows with
// a read, then append them to the table. writeMu keeps another writer
// from changing the table between the read and the append.
func (s *Session) write(ctx context.Context, n *pg.Node, params []row.Datum, verb string) (*Result, error) {
	s.engine.writeMu.Lock()
	defer s.engine.writeMu.Unlock()
	sn, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	it, q, err := planWriteQuery(sn, s.planner(sn, paramTypesOf(params), params), n)
	if err != nil {
		return nil, err
	}
	// Writes read their own table at the latest time.
	rows, err := s.readStrict(ctx, sn, q)
	if err != nil {
		return nil, err
	}
	arity := it.Desc.Arity()
	var updates []RowDiff
	check := func(r []row.Datum) error {
		for i, d := range r {
			if d.IsNull() && !it.Desc.Types[i].Nullable {
				return sqlerr.Errorf(sqlerr.NotNullViolation, "null value in column %q of relation %q violates not-null constraint", it.Desc.Name(i), it.Name)
			}
		}
		return nil
	}
	for _, r := range rows {
		switch verb {
		case "INSERT":
			if err := check(r); err != nil {
				return nil, err
			}
			updates = append(updates, RowDiff{Row: row.Pack(r...), Diff: 1})
		case "DELETE":
			updates = append(updates, RowDiff{Row: row.Pack(r...), Diff: -1})
		case "UPDATE":
			if err := check(r[arity:]); err != nil {
				return nil, err
			}
			updates = append(updates, RowDiff{Row: row.Pack(r[:arity]...), Diff: -1}, RowDiff{Row: row.Pack(r[arity:]...), Diff: 1})
		}
	}
	if verb == "INSERT" && s.tx.buffering() {
		if err := s.bufferInsert(it, q.DependsOn, updates); err != nil {
			return nil, err
		}
	} else if len(updates) > 0 {
		if err := s.engine.backend.WriteTable(ctx, it.ID, updates); err != nil {
			return nil, fmt.Errorf("write %s: %w", it.Name, err)
		}
	}
	if verb == "INSERT" {
		return tagf("INSERT 0 %d", len(rows)), nil
	}
	return tagf("%s %d", verb, len(rows)), nil
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

func (s *Session) insert(ctx context.Context, n *pg.InsertStmt, params []row.Datum) (*Result, error) {
	return s.write(ctx, &pg.Node{Node: &pg.Node_InsertStmt{InsertStmt: n}}, params, "INSERT")
}

func (s *Session) update(ctx context.Context, n *pg.UpdateStmt, params []row.Datum) (*Result, error) {
	return s.write(ctx, &pg.Node{Node: &pg.Node_UpdateStmt{UpdateStmt: n}}, params, "UPDATE")
}

func (s *Session) delete(ctx context.Context, n *pg.DeleteStmt, params []row.Datum) (*Result, error) {
	return s.write(ctx, &pg.Node{Node: &pg.Node_DeleteStmt{DeleteStmt: n}}, params, "DELETE")
}
