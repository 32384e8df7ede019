package sql

import (
	"context"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// onConflict is a planned ON CONFLICT clause.
type onConflict struct {
	// arbiters are the keys whose conflicts the clause handles.
	arbiters []keyDef
	// update is DO UPDATE's assignment, nil for DO NOTHING.
	update *planner.ConflictUpdate
}

// planOnConflict resolves an ON CONFLICT clause's arbiter keys (by
// column list, by constraint name, or all keys for DO NOTHING without
// either) and plans DO UPDATE.
func planOnConflict(pl *planner.Planner, rules *tableRules, rel planner.Relation, alias string, oc *pg.OnConflictClause) (*onConflict, error) {
	out := &onConflict{}
	switch {
	case oc.Infer != nil && oc.Infer.Conname != "":
		for _, k := range rules.keys {
			if k.name == oc.Infer.Conname {
				out.arbiters = []keyDef{k}
			}
		}
		if out.arbiters == nil {
			return nil, sqlerr.Errorf(sqlerr.UndefinedObject, "constraint %q for table %q does not exist", oc.Infer.Conname, rules.it.Name)
		}
	case oc.Infer != nil:
		if oc.Infer.WhereClause != nil {
			return nil, sqlerr.Unsupported("ON CONFLICT with a partial index predicate")
		}
		var cols []int
		for _, n := range oc.Infer.IndexElems {
			ie := n.GetIndexElem()
			if ie == nil || ie.Name == "" {
				return nil, sqlerr.Unsupported("ON CONFLICT on expressions")
			}
			i := slices.Index(rules.it.Desc.Names, ie.Name)
			if i < 0 {
				return nil, sqlerr.Errorf(sqlerr.UndefinedColumn, "column %q does not exist", ie.Name)
			}
			if !slices.Contains(cols, i) {
				cols = append(cols, i)
			}
		}
		for _, k := range rules.keys {
			if sameColumns(k.cols, cols) {
				out.arbiters = append(out.arbiters, k)
			}
		}
		if out.arbiters == nil {
			return nil, sqlerr.New("42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification")
		}
	default:
		if oc.Action == pg.OnConflictAction_ONCONFLICT_UPDATE {
			return nil, sqlerr.New(sqlerr.SyntaxError, "ON CONFLICT DO UPDATE requires inference specification or constraint name")
		}
		out.arbiters = rules.keys
	}
	if oc.Action == pg.OnConflictAction_ONCONFLICT_UPDATE {
		cu, err := pl.PlanConflictUpdate(rel, alias, oc.TargetList, oc.WhereClause)
		if err != nil {
			return nil, err
		}
		out.update = cu
	}
	return out, nil
}

func sameColumns(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for _, c := range a {
		if !slices.Contains(b, c) {
			return false
		}
	}
	return true
}

// conflictRow is a row of the table as an ON CONFLICT statement sees it:
// there before the statement (committed, or written earlier in the
// transaction block), or written by the statement itself.
type conflictRow struct {
	datums []row.Datum
	// mine: inserted or updated by this statement, which may not update
	// it again (21000).
	mine bool
}

// resolveConflicts decides, for each row an INSERT ... ON CONFLICT
// proposes, whether it is inserted, skipped (DO NOTHING, or DO UPDATE
// whose WHERE is not true) or turned into an update of the row it
// conflicts with: a committed row or one the transaction block wrote
// earlier, whose removal is then part of the change (a buffered row is
// retracted by a diff that cancels it at COMMIT). It returns the change
// and the rows written (inserted and updated), in order. The caller
// holds writeMu.
func (s *Session) resolveConflicts(ctx context.Context, sn *snapshot, wp *writePlan, proposed [][]row.Datum) (*tableChange, [][]row.Datum, error) {
	oc := wp.conflict
	// byKey[i] maps arbiter i's key values to the row holding them now.
	byKey := make([]map[string]*conflictRow, len(oc.arbiters))
	for i, k := range oc.arbiters {
		byKey[i] = map[string]*conflictRow{}
		existing, err := s.visibleRowsWithKeys(ctx, sn, wp.it, k.cols, proposed)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range existing {
			if ks, ok := encodedKey(e, k.cols); ok {
				byKey[i][ks] = &conflictRow{datums: e}
			}
		}
	}
	index := func(cr *conflictRow) {
		for i, k := range oc.arbiters {
			if ks, ok := encodedKey(cr.datums, k.cols); ok {
				byKey[i][ks] = cr
			}
		}
	}
	unindex := func(cr *conflictRow) {
		for i, k := range oc.arbiters {
			if ks, ok := encodedKey(cr.datums, k.cols); ok && byKey[i][ks] == cr {
				delete(byKey[i], ks)
			}
		}
	}
	ch := &tableChange{}
	var written []*conflictRow
	for _, p := range proposed {
		if err := wp.rules.checkRow(p); err != nil {
			return nil, nil, err
		}
		var hit *conflictRow
		for i, k := range oc.arbiters {
			if ks, ok := encodedKey(p, k.cols); ok && byKey[i][ks] != nil {
				hit = byKey[i][ks]
				break
			}
		}
		switch {
		case hit == nil:
			cr := &conflictRow{datums: p, mine: true}
			index(cr)
			written = append(written, cr)
		case oc.update == nil:
			// DO NOTHING.
		case hit.mine:
			return nil, nil, &sqlerr.Error{Code: sqlerr.CardinalityViolation,
				Message: "ON CONFLICT DO UPDATE command cannot affect row a second time",
				Hint:    "Ensure that no rows proposed for insertion within the same command have duplicate constrained values."}
		default:
			both := append(slices.Clone(hit.datums), p...)
			if oc.update.Where != nil {
				v, err := oc.update.Where.Eval(both)
				if err != nil {
					return nil, nil, sqlerr.Convert(err)
				}
				if v.IsNull() || !v.Bool() {
					continue
				}
			}
			nr := make([]row.Datum, len(oc.update.New))
			for j, e := range oc.update.New {
				v, err := e.Eval(both)
				if err != nil {
					return nil, nil, sqlerr.Convert(err)
				}
				nr[j] = v
			}
			ch.removes = append(ch.removes, hit.datums)
			unindex(hit)
			cr := &conflictRow{datums: nr, mine: true}
			index(cr)
			written = append(written, cr)
		}
	}
	out := make([][]row.Datum, len(written))
	for i, w := range written {
		out[i] = w.datums
		ch.adds = append(ch.adds, w.datums)
	}
	return ch, out, nil
}

// visibleRowsWithKeys returns the table's rows whose cols equal those of
// one of keys, as the statement sees the table: its committed rows
// (unless the transaction truncated it) with the transaction's buffered
// diffs applied. Buffered rows are returned whatever their key; the
// caller matches keys.
func (s *Session) visibleRowsWithKeys(ctx context.Context, sn *snapshot, it *Item, cols []int, keys [][]row.Datum) ([][]row.Datum, error) {
	diffs, truncated := s.pendingFor(it.ID)
	var committed [][]row.Datum
	if !truncated {
		var err error
		if committed, err = s.rowsWithKeys(ctx, sn, it, cols, keys); err != nil {
			return nil, err
		}
	}
	if len(diffs) == 0 {
		return committed, nil
	}
	all := make([]RowDiff, 0, len(committed)+len(diffs))
	for _, r := range committed {
		all = append(all, RowDiff{Row: row.Pack(r...), Diff: 1})
	}
	net, err := netChange(append(all, diffs...))
	if err != nil {
		return nil, err
	}
	// Rows the block removed without the committed row being read (its
	// key was not asked for) net to removals: they are not visible.
	return net.adds, nil
}
