package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Transactions. Tandem applies a transaction's writes to all its tables in
// one WriteTables (one timestamp, all or nothing) and cannot undo a write
// or a catalog change, so a transaction is emulated
// the way PostgreSQL clients observe it, as far as that is possible
// without lying:
//
//   - In an explicit BEGIN block every write (INSERT, UPDATE, DELETE,
//     COPY FROM, TRUNCATE) is checked at once and buffered as row diffs;
//     COMMIT applies them all in one WriteTables and ROLLBACK or an error
//     discards them. A TRUNCATE removes, at COMMIT, the rows the table
//     has then. An UPDATE or DELETE, and any read of a table the block
//     wrote, is computed over the committed rows plus the block's diffs
//     (readWithPending, tx_pending.go); so is a read of a materialized
//     view or an indexed view over such a table, from its definition. Key checks combine the block's
//     diffs with the statement's (withPending) and are made again at
//     COMMIT under the engine's write lock.
//   - A buffered UPDATE or DELETE retracts rows read when it ran, which
//     another session must not change before COMMIT: the block takes the
//     write lock at its first UPDATE or DELETE and holds it until it ends
//     (holdBlockLock, endBlock), so such blocks serialise writers. A
//     block that only inserts takes the lock only at COMMIT: added rows
//     cannot conflict with other writes except by key, checked again then.
//   - INSERT ... ON CONFLICT in a block resolves conflicts against the
//     committed rows plus the block's diffs (resolveConflicts); DO UPDATE
//     retracts the row it hits, so it holds the lock like an UPDATE. In
//     an implicit transaction DO UPDATE is applied at once, like UPDATE.
//   - In an explicit block, statements that cannot be rolled back (DDL,
//     ALTER SYSTEM) are refused. A SUBSCRIBE reads committed data: one
//     that reads a table the block wrote is refused, as its snapshot
//     would contradict the block's reads (checkSubscribeInBlock).
//   - A query string of several statements is one implicit transaction,
//     as in PostgreSQL: its INSERTs are buffered and applied at the end
//     of the string.
//   - In an implicit transaction, a statement that reads a table, writes
//     otherwise than by INSERT, or changes the catalog first applies the
//     INSERTs before it, so that it sees them (DDL then runs at once as
//     before): an error undoes only the INSERTs since the last such
//     statement.
//   - An error inside a block aborts it: later statements fail with 25P02
//     until ROLLBACK or COMMIT (which then rolls back), as in PostgreSQL.

// pendingWrite is a buffered write (INSERT, UPDATE, DELETE, COPY) or TRUNCATE.
type pendingWrite struct {
	id      plan.GlobalID
	name    string
	updates []RowDiff
	// truncate: the table's rows at COMMIT are removed before updates
	// are applied.
	truncate bool
}

// txState is a session's transaction.
type txState struct {
	explicit bool // inside BEGIN ... COMMIT/ROLLBACK
	implicit bool // inside a query string of several statements
	failed   bool // an explicit block that saw an error
	pending  []pendingWrite
	// now is the block's now() in micros, fixed at its first use.
	now int64
	// reads are the tables the transaction read and their versions then,
	// validated when its writes are applied (tx_conflict.go).
	reads map[plan.GlobalID]readVersion
	// unlock releases Engine.writeMu, which an explicit block holds from
	// its first UPDATE or DELETE until it ends (holdBlockLock).
	unlock func()
	// snap is an explicit block's read time, taken at its first read
	// (tx_snapshot.go); snapVersions are the table versions just before.
	snap         ReadSnapshot
	snapVersions map[plan.GlobalID]uint64
}

func (t *txState) buffering() bool { return t.explicit || t.implicit }

// TransactionFailed reports whether the explicit transaction block has
// failed and ignores statements until it ends (status 'E').
func (s *Session) TransactionFailed() bool { return s.tx.failed }

// BeginImplicit starts the implicit transaction of a query string of n
// statements; a single statement needs none. End it with EndImplicit.
func (s *Session) BeginImplicit(n int) {
	if n > 1 && !s.tx.explicit {
		s.tx.implicit, s.tx.now = true, 0
	}
}

// EndImplicit ends the implicit transaction: it applies its buffered
// INSERTs when failed is false and discards them otherwise. A failure to
// apply them is returned.
func (s *Session) EndImplicit(ctx context.Context, failed bool) error {
	if !s.tx.implicit {
		return nil
	}
	s.tx.implicit, s.tx.now = false, 0
	defer func() { s.tx.reads = nil }()
	if failed {
		s.tx.pending = nil
		return nil
	}
	if err := s.flushWrites(ctx); err != nil {
		return sqlerr.Convert(err)
	}
	return nil
}

// flushWrites applies the buffered writes, merging those of one table
// into one write. It holds writeMu and checks the tables' keys again
// against their contents now, as other sessions may have written the
// same keys since the statements were buffered. The buffer is cleared
// whatever happens.
func (s *Session) flushWrites(ctx context.Context) error {
	pending := s.tx.pending
	s.tx.pending = nil
	if len(pending) == 0 {
		return nil
	}
	reads := s.tx.reads
	s.tx.reads = nil // the next writes of an implicit transaction validate the reads after these
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.validateReads(reads); err != nil {
		return err
	}
	var order []plan.GlobalID
	byID := map[plan.GlobalID]*pendingWrite{}
	for i := range pending {
		w := &pending[i]
		if m, ok := byID[w.id]; ok {
			if w.truncate {
				m.updates, m.truncate = nil, true
			}
			m.updates = append(m.updates, w.updates...)
			continue
		}
		byID[w.id] = w
		order = append(order, w.id)
	}
	sn, err := s.snapshot(ctx)
	if err != nil {
		return err
	}
	writes := make([]pendingWrite, 0, len(order))
	for _, id := range order {
		w, err := s.prepareCommit(ctx, sn, byID[id])
		if err != nil {
			return err
		}
		writes = append(writes, w)
	}
	return s.applyWrites(ctx, writes)
}

// prepareCommit turns a table's buffered writes into the write to apply
// now: a TRUNCATE's removal of the current rows, and the inserted rows
// after a check of the table's keys. The caller holds writeMu.
func (s *Session) prepareCommit(ctx context.Context, sn *snapshot, w *pendingWrite) (pendingWrite, error) {
	it, ok := sn.byID[w.id]
	if !ok || it.Kind != KindTable {
		return pendingWrite{}, sqlerr.Errorf(sqlerr.UndefinedTable, "table %q was dropped before the transaction committed", w.name)
	}
	out := pendingWrite{id: w.id, name: w.name}
	ch := &tableChange{truncated: w.truncate}
	if w.truncate {
		rows, err := s.tableRows(ctx, it)
		if err != nil {
			return pendingWrite{}, err
		}
		for _, r := range rows {
			out.updates = append(out.updates, RowDiff{Row: row.Pack(r...), Diff: -1})
		}
	}
	out.updates = append(out.updates, w.updates...)
	rules, err := rulesFor(s.planner(sn, nil, nil), sn, it)
	if err != nil {
		return pendingWrite{}, err
	}
	if len(rules.keys) == 0 {
		return out, nil
	}
	net, err := netChange(w.updates)
	if err != nil {
		return pendingWrite{}, err
	}
	for _, r := range slices.Concat(net.adds, net.removes) {
		if len(r) != it.Desc.Arity() {
			return pendingWrite{}, sqlerr.Errorf(sqlerr.InvalidTransactionState, "table %q was altered before the transaction committed", w.name)
		}
	}
	ch.adds, ch.removes = net.adds, net.removes
	if err := s.checkKeys(ctx, sn, rules, ch); err != nil {
		return pendingWrite{}, err
	}
	return out, nil
}

// applyWrites appends each table's updates, one write per table. This is
// the one place table writes reach the backend: when storage offers an
// atomic append to several tables at one timestamp, a transaction that
// wrote several tables commits through it here.
func (s *Session) applyWrites(ctx context.Context, writes []pendingWrite) error {
	// One write for the whole statement or transaction: a COMMIT over
	// several tables is applied all or nothing, at one timestamp.
	var tws []TableWrite
	var names []string
	var ids []plan.GlobalID
	for _, w := range writes {
		if len(w.updates) == 0 {
			continue
		}
		tws = append(tws, TableWrite{Table: w.id, Updates: w.updates})
		names = append(names, w.name)
		ids = append(ids, w.id)
	}
	if len(tws) == 0 {
		return nil
	}
	// After the write returns, failed or not (a failed write may still
	// have been applied): a transaction's read recorded before this sees
	// the write or fails its COMMIT (tx_conflict.go).
	defer s.engine.versions.bump(ids)
	if err := s.engine.backend.WriteTables(ctx, tws); err != nil {
		return fmt.Errorf("write %s: %w", strings.Join(names, ", "), err)
	}
	return nil
}

// withPending returns a change to a table combined with the
// transaction's buffered writes to it (and whether it truncated it), for
// the key check of a statement buffered after them.
func (s *Session) withPending(it *Item, ch *tableChange) (*tableChange, error) {
	diffs, truncated := s.pendingFor(it.ID)
	out, err := netChange(append(slices.Clip(diffs), ch.updates()...))
	if err != nil {
		return nil, err
	}
	out.truncated = truncated || ch.truncated
	return out, nil
}

// hasPendingWrites reports whether the transaction has buffered writes.
func (s *Session) hasPendingWrites() bool { return len(s.tx.pending) > 0 }

// checkTransaction decides, before st runs, whether the transaction
// allows it, and in an implicit transaction applies the buffered INSERTs
// before any statement but an INSERT.
func (s *Session) checkTransaction(ctx context.Context, st parse.Statement) error {
	kind := txKindOf(st)
	if s.tx.failed && kind != txControl {
		return sqlerr.New(sqlerr.InFailedTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	if s.tx.implicit {
		// Reads of data apply them lazily (peekRows), so that a string
		// like "INSERT ...; SELECT 1/0" still undoes its INSERT.
		_, sub := st.(*parse.Subscribe)
		_, declSub := st.(*parse.DeclareSubscribe)
		if kind == txModify || kind == txDDL || sub || declSub {
			return s.flushWrites(ctx)
		}
		return nil
	}
	if !s.tx.explicit {
		return nil
	}
	// Reads of tables the block wrote are answered with its writes
	// (peekRows) or, for SUBSCRIBE, refused (checkSubscribeInBlock).
	if kind == txDDL {
		return sqlerr.Errorf(sqlerr.ActiveSQLTransaction, "%s cannot run inside a transaction block: Tandem cannot roll it back", statementName(st))
	}
	return nil
}

// beforeRead applies, before a read of tables in an implicit
// transaction, its buffered writes so the read sees them. (An explicit
// block reads its writes through readWithPending instead.)
func (s *Session) beforeRead(ctx context.Context) error {
	if s.tx.implicit && s.hasPendingWrites() {
		return s.flushWrites(ctx)
	}
	return nil
}

// bufferWrite keeps a write's updates until the transaction commits.
func (s *Session) bufferWrite(it *Item, updates []RowDiff) {
	if len(updates) > 0 {
		s.tx.pending = append(s.tx.pending, pendingWrite{id: it.ID, name: it.Name, updates: updates})
	}
}

// txKind classifies statements for transaction handling.
type txKind int

const (
	txRead    txKind = iota // reads or session state: allowed anywhere
	txInsert                // buffered
	txModify                // UPDATE, DELETE, INSERT ... ON CONFLICT DO UPDATE: buffered in a block, else applied at once
	txDDL                   // catalog and system changes: applied at once
	txControl               // BEGIN, COMMIT, ROLLBACK
	txSession               // SET, SHOW, cursors: no reads of data
)

func txKindOf(st parse.Statement) txKind {
	switch st := st.(type) {
	case *parse.Postgres:
		switch st.Node.Node.(type) {
		case *pg.Node_SelectStmt, *pg.Node_ExplainStmt, *pg.Node_DeclareCursorStmt:
			return txRead
		case *pg.Node_InsertStmt:
			if isUpsert(st.Node) {
				return txModify
			}
			return txInsert
		case *pg.Node_TruncateStmt, *pg.Node_CopyStmt:
			return txInsert
		case *pg.Node_UpdateStmt, *pg.Node_DeleteStmt:
			return txModify
		case *pg.Node_TransactionStmt:
			return txControl
		case *pg.Node_VariableSetStmt, *pg.Node_VariableShowStmt, *pg.Node_FetchStmt,
			*pg.Node_ClosePortalStmt, *pg.Node_DiscardStmt, *pg.Node_DeallocateStmt:
			return txSession
		}
		return txDDL
	case *parse.Subscribe, *parse.DeclareSubscribe:
		return txRead
	case *parse.Fetch, *parse.Show:
		return txSession
	}
	return txDDL
}

// statementName names st in messages ("CREATE TABLE").
func statementName(st parse.Statement) string {
	if p, ok := st.(*parse.Postgres); ok {
		if sql := strings.Fields(strings.ToUpper(p.SQL)); len(sql) > 0 {
			if len(sql) > 1 && (sql[0] == "CREATE" || sql[0] == "DROP" || sql[0] == "ALTER") {
				return sql[0] + " " + sql[1]
			}
			return sql[0]
		}
	}
	switch st.(type) {
	case *parse.CreateSource:
		return "CREATE SOURCE"
	case *parse.DropSource:
		return "DROP SOURCE"
	case *parse.CreateCluster:
		return "CREATE CLUSTER"
	case *parse.CreateClusterReplica:
		return "CREATE CLUSTER REPLICA"
	case *parse.DropCluster:
		return "DROP CLUSTER"
	case *parse.DropClusterReplica:
		return "DROP CLUSTER REPLICA"
	case *parse.CreateIndex:
		return "CREATE INDEX"
	case *parse.CreateMaterializedView:
		return "CREATE MATERIALIZED VIEW"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", st), "*parse.")
}
