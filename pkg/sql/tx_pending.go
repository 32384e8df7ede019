package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/reference"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// A transaction block's buffered writes as the block itself sees them.
// The block's statements read the tables it wrote to as their committed
// contents plus its buffered diffs (read-your-writes): such a read is
// evaluated in the controller by the reference evaluator over the
// tables' rows, which the backend cannot do as the diffs exist nowhere
// else. A materialized view or an indexed view that reads such a table,
// directly or through other views, is read the same way: its definition
// (the materialized view's query, the view index's inlined query) is
// evaluated over its inputs as the block sees them, so that it agrees
// with the same query written out over the tables (which is what a plain
// view is). Reads of nothing the block wrote go to the backend.

// pendingFor returns the block's buffered diffs to a table, after its
// last buffered TRUNCATE, and whether one is buffered (the table's
// committed rows are then gone as far as the block is concerned).
func (s *Session) pendingFor(id plan.GlobalID) (diffs []RowDiff, truncated bool) {
	for _, w := range s.tx.pending {
		if w.id != id {
			continue
		}
		if w.truncate {
			diffs, truncated = nil, true
		}
		diffs = append(diffs, w.updates...)
	}
	return diffs, truncated
}

// pendingTable returns the name of a table the block wrote that one of
// ids reads, directly or through the definitions of views and
// materialized views (which Item.DependsOn lists, views included), or ""
// when none does.
func (s *Session) pendingTable(sn *snapshot, ids []plan.GlobalID) string {
	if len(s.tx.pending) == 0 {
		return ""
	}
	seen := map[plan.GlobalID]bool{}
	var visit func(id plan.GlobalID) string
	visit = func(id plan.GlobalID) string {
		if seen[id] {
			return ""
		}
		seen[id] = true
		for _, w := range s.tx.pending {
			if w.id == id {
				return w.name
			}
		}
		it, ok := sn.byID[id]
		if !ok || (it.Kind != KindView && it.Kind != KindMaterializedView) {
			return ""
		}
		for _, dep := range it.DependsOn {
			if name := visit(dep); name != "" {
				return name
			}
		}
		return ""
	}
	for _, id := range ids {
		if name := visit(id); name != "" {
			return name
		}
	}
	return ""
}

// definitionPlan returns what a materialized view or an indexed view
// holds, as a plan over Gets of other collections: the materialized
// view's query, or the inlined query an index of the view maintains.
func (sn *snapshot) definitionPlan(it *Item) (*plan.Plan, error) {
	switch it.Kind {
	case KindMaterializedView:
		if it.Plan != nil {
			return it.Plan, nil
		}
	case KindView:
		for i := range sn.items {
			if ix := &sn.items[i]; ix.Kind == KindIndex && ix.On == it.ID && ix.Plan != nil {
				return ix.Plan, nil
			}
		}
	}
	return nil, sqlerr.Errorf(sqlerr.InternalError, "%s %q has no definition to evaluate over the transaction's writes", kindName(it.Kind), it.Name)
}

// checkSubscribeInBlock refuses a SUBSCRIBE in a transaction block that
// reads a table the block has written, directly or through a view or a
// materialized view (pendingTable). A subscription reads committed
// data only (its dataflow runs on a replica, where the block's buffered
// writes do not exist), so its snapshot would contradict the block's own
// reads of that table. A SUBSCRIBE of anything else, before or after the
// block's writes, runs as outside a block; one opened before a write does
// not see it, as a PostgreSQL cursor does not see writes made after it
// was declared.
func (s *Session) checkSubscribeInBlock(ctx context.Context, q *planner.Query) error {
	if !s.tx.explicit || len(s.tx.pending) == 0 {
		return nil
	}
	sn, err := s.snapshot(ctx)
	if err != nil {
		return err
	}
	if name := s.pendingTable(sn, q.DependsOn); name != "" {
		return &sqlerr.Error{Code: sqlerr.FeatureNotSupported,
			Message: fmt.Sprintf("SUBSCRIBE cannot read table %q after this transaction block wrote to it", name),
			Detail:  "A subscription reads committed data, which does not include the block's uncommitted writes.",
			Hint:    "COMMIT the block first, or SUBSCRIBE before writing to the table."}
	}
	return nil
}

// readWithPending computes a query's rows (before finishing) over the
// committed contents of the collections it reads plus the block's
// buffered writes to them.
func (s *Session) readWithPending(ctx context.Context, sn *snapshot, q *planner.Query) ([]RowDiff, error) {
	rows, err := s.evalWithPending(ctx, sn, &q.Plan)
	if err != nil {
		return nil, err
	}
	diffs := make([]RowDiff, 0, len(rows))
	for k, n := range rows {
		if n != 0 {
			diffs = append(diffs, RowDiff{Row: row.Row(k), Diff: n})
		}
	}
	slices.SortFunc(diffs, func(a, b RowDiff) int { return strings.Compare(string(a.Row), string(b.Row)) })
	return diffs, nil
}

// evalWithPending evaluates p over the collections it reads as the block
// sees them.
func (s *Session) evalWithPending(ctx context.Context, sn *snapshot, p *plan.Plan) (reference.Collection, error) {
	deps := p.DependsOn()
	env := make(map[plan.GlobalID]reference.Result, len(deps))
	for _, id := range deps {
		coll, err := s.contentsWithPending(ctx, sn, id)
		if err != nil {
			return nil, err
		}
		env[id] = reference.Result{Rows: coll, Errors: reference.Collection{}}
	}
	res, err := reference.EvalPlan(p, env)
	if err != nil {
		return nil, fmt.Errorf("evaluate read over the transaction's writes: %w", err)
	}
	if errs := res.Errs(); len(errs) > 0 {
		return nil, errs[0]
	}
	return res.Rows, nil
}

// contentsWithPending returns a collection's rows as the block sees them:
// a materialized view or indexed view over a table the block wrote is
// its definition evaluated over its inputs as the block sees them.
func (s *Session) contentsWithPending(ctx context.Context, sn *snapshot, id plan.GlobalID) (reference.Collection, error) {
	it, ok := sn.byID[id]
	if !ok {
		return nil, fmt.Errorf("read %s: unknown collection", id)
	}
	if (it.Kind == KindView || it.Kind == KindMaterializedView) && s.pendingTable(sn, []plan.GlobalID{id}) != "" {
		p, err := sn.definitionPlan(it)
		if err != nil {
			return nil, err
		}
		return s.evalWithPending(ctx, sn, p)
	}
	diffs, truncated := s.pendingFor(id)
	coll := reference.Collection{}
	if !truncated {
		rows, err := s.tableRows(ctx, it)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			coll[string(row.Pack(r...))]++
		}
	}
	for _, d := range diffs {
		coll[string(d.Row)] += d.Diff
	}
	for k, n := range coll {
		if n == 0 {
			delete(coll, k)
		}
	}
	return coll, nil
}

// netChange turns diffs (buffered, then a statement's) into the rows they
// add and remove on balance, for the key checks.
func netChange(diffs []RowDiff) (*tableChange, error) {
	net := map[string]int64{}
	var order []string
	for _, d := range diffs {
		k := string(d.Row)
		if _, ok := net[k]; !ok {
			order = append(order, k)
		}
		net[k] += d.Diff
	}
	ch := &tableChange{}
	for _, k := range order {
		n := net[k]
		if n == 0 {
			continue
		}
		r, err := row.Row(k).Unpack()
		if err != nil {
			return nil, fmt.Errorf("decode buffered row: %w", err)
		}
		for ; n > 0; n-- {
			ch.adds = append(ch.adds, r)
		}
		for ; n < 0; n++ {
			ch.removes = append(ch.removes, r)
		}
	}
	return ch, nil
}

// holdBlockLock takes Engine.writeMu for the rest of the transaction
// block: a buffered UPDATE or DELETE retracts rows read now, so no other
// writer may change the table before the block commits (a lost update).
// The lock is released when the block ends (endBlock).
func (s *Session) holdBlockLock(ctx context.Context) error {
	if s.tx.unlock != nil {
		return nil
	}
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return err
	}
	s.tx.unlock = unlock
	return nil
}

// endBlock discards the block's buffered writes and releases the lock it
// holds, if any.
func (s *Session) endBlock() {
	s.tx.pending, s.tx.reads = nil, nil
	s.releaseSnapshot()
	if s.tx.unlock != nil {
		s.tx.unlock()
		s.tx.unlock = nil
	}
}
