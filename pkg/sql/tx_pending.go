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
// else. Reads of tables the block did not write go to the backend.

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

// pendingTouches reports whether the block has buffered writes to any of
// ids.
func (s *Session) pendingTouches(ids []plan.GlobalID) bool {
	for _, w := range s.tx.pending {
		if slices.Contains(ids, w.id) {
			return true
		}
	}
	return false
}

// checkSubscribeInBlock refuses a SUBSCRIBE in a transaction block that
// reads a table the block has written. A subscription reads committed
// data only (its dataflow runs on a replica, where the block's buffered
// writes do not exist), so its snapshot would contradict the block's own
// reads of that table. A SUBSCRIBE of anything else, before or after the
// block's writes, runs as outside a block; one opened before a write does
// not see it, as a PostgreSQL cursor does not see writes made after it
// was declared.
func (s *Session) checkSubscribeInBlock(q *planner.Query) error {
	if !s.tx.explicit {
		return nil
	}
	for _, w := range s.tx.pending {
		if slices.Contains(q.DependsOn, w.id) {
			return &sqlerr.Error{Code: sqlerr.FeatureNotSupported,
				Message: fmt.Sprintf("SUBSCRIBE cannot read table %q after this transaction block wrote to it", w.name),
				Detail:  "A subscription reads committed data, which does not include the block's uncommitted writes.",
				Hint:    "COMMIT the block first, or SUBSCRIBE before writing to the table."}
		}
	}
	return nil
}

// readWithPending computes a query's rows (before finishing) over the
// committed contents of the collections it reads plus the block's
// buffered writes to them.
func (s *Session) readWithPending(ctx context.Context, sn *snapshot, q *planner.Query) ([]RowDiff, error) {
	env := make(map[plan.GlobalID]reference.Result, len(q.DependsOn))
	for _, id := range q.DependsOn {
		coll, err := s.contentsWithPending(ctx, sn, id)
		if err != nil {
			return nil, err
		}
		env[id] = reference.Result{Rows: coll, Errors: reference.Collection{}}
	}
	res, err := reference.EvalPlan(&q.Plan, env)
	if err != nil {
		return nil, fmt.Errorf("evaluate read over the transaction's writes: %w", err)
	}
	if errs := res.Errs(); len(errs) > 0 {
		return nil, errs[0]
	}
	diffs := make([]RowDiff, 0, len(res.Rows))
	for k, n := range res.Rows {
		if n != 0 {
			diffs = append(diffs, RowDiff{Row: row.Row(k), Diff: n})
		}
	}
	slices.SortFunc(diffs, func(a, b RowDiff) int { return strings.Compare(string(a.Row), string(b.Row)) })
	return diffs, nil
}

// contentsWithPending returns a collection's rows as the block sees them.
func (s *Session) contentsWithPending(ctx context.Context, sn *snapshot, id plan.GlobalID) (reference.Collection, error) {
	it, ok := sn.byID[id]
	if !ok {
		return nil, fmt.Errorf("read %s: unknown collection", id)
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
	s.tx.pending = nil
	if s.tx.unlock != nil {
		s.tx.unlock()
		s.tx.unlock = nil
	}
}
