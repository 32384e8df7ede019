package sql

import (
	"cmp"
	"maps"
	"slices"
	"sync"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Serializable commits: optimistic validation of a transaction's reads.
//
// A transaction block that reads a table and then writes (an INSERT or
// COPY buffered after a SELECT: such blocks take the write lock only at
// COMMIT) could otherwise commit write skew: two blocks each read what
// the other writes, each writes what the other reads, and both commit.
// So every table write bumps the table's version (Engine.versions, in
// applyWrites, the one place writes reach the backend, after the write
// returns), and a transaction records, before each read, the version of
// every table the read depends on (directly, or through views,
// materialized views and indexes). At COMMIT, under the write lock, a
// block that writes fails with 40001 and writes nothing when a table it
// read has a version other than the one recorded: another transaction
// wrote it after the read, which then may not have seen that write.
//
// This is sound because reads in a transaction are strict serializable
// (txIsolation): a read issued after a write returned sees it, so a
// write the read missed returned after the version was recorded, and
// bumped it after. Writes hold the write lock, so no write is in flight
// while COMMIT validates, and the validated block's reads are what every
// table it read still holds at its commit: the block is equivalent to
// running whole at its commit. A write in flight while a read is issued
// may be seen by the read and still fail the COMMIT: a retry succeeds.
//
// In an explicit block with a snapshot (tx_snapshot.go) every read is
// made at the snapshot's time and the versions recorded are those taken
// just before it was picked: the same argument holds with the snapshot
// time in place of each read's. A read-only block is not validated: with
// a snapshot it saw one state of the data; without one (a backend
// without snapshots) each of its statements read at its own time, as
// under PostgreSQL's READ COMMITTED. An implicit
// transaction (a query string of several statements) is validated at
// each application of its buffered writes, which also starts its next
// read set. Reads made under the write lock (a block's UPDATE or DELETE,
// which holds it until the block ends) cannot be invalidated.

// tableVersions counts the writes to each table since the engine
// started. It is shared by the engine's sessions.
type tableVersions struct {
	mu sync.Mutex
	v  map[plan.GlobalID]uint64
}

// get returns the version of table id.
func (tv *tableVersions) get(id plan.GlobalID) uint64 {
	tv.mu.Lock()
	defer tv.mu.Unlock()
	return tv.v[id]
}

// all returns a copy of every table's version.
func (tv *tableVersions) all() map[plan.GlobalID]uint64 {
	tv.mu.Lock()
	defer tv.mu.Unlock()
	return maps.Clone(tv.v)
}

// bump records one more write to each table.
func (tv *tableVersions) bump(ids []plan.GlobalID) {
	tv.mu.Lock()
	defer tv.mu.Unlock()
	if tv.v == nil {
		tv.v = map[plan.GlobalID]uint64{}
	}
	for _, id := range ids {
		tv.v[id]++
	}
}

// readVersion is the version of a table when the transaction first read
// it.
type readVersion struct {
	name    string
	version uint64
}

// txIsolation is the isolation a read runs at: strict serializable in a
// transaction of several statements, whose COMMIT validates its reads
// against later writes (see above), else the session's.
func (s *Session) txIsolation() string {
	if s.tx.buffering() {
		return IsolationStrictSerializable
	}
	iso, _ := s.vars.Get(VarTransactionIsolation)
	return iso
}

// recordReads notes, before a read in a transaction, the version of
// every table the read depends on that the transaction has not read yet.
func (s *Session) recordReads(sn *snapshot, ids []plan.GlobalID) {
	if !s.tx.buffering() {
		return
	}
	for id, name := range readTables(sn, ids) {
		if _, ok := s.tx.reads[id]; ok {
			continue
		}
		if s.tx.reads == nil {
			s.tx.reads = map[plan.GlobalID]readVersion{}
		}
		s.tx.reads[id] = readVersion{name: name, version: s.versionSeen(id)}
	}
}

// readTables returns the tables (by id, with their names) that ids read:
// tables themselves, and the tables under views, materialized views and
// indexes. Sources are not written by transactions and are left out.
func readTables(sn *snapshot, ids []plan.GlobalID) map[plan.GlobalID]string {
	out := map[plan.GlobalID]string{}
	seen := map[plan.GlobalID]bool{}
	var visit func(id plan.GlobalID)
	visit = func(id plan.GlobalID) {
		if seen[id] {
			return
		}
		seen[id] = true
		it, ok := sn.byID[id]
		if !ok {
			return
		}
		switch it.Kind {
		case KindTable:
			out[id] = it.Name
		case KindIndex:
			visit(it.On)
		case KindView, KindMaterializedView:
			for _, dep := range it.DependsOn {
				visit(dep)
			}
		}
	}
	for _, id := range ids {
		visit(id)
	}
	return out
}

// validateReads fails with 40001 when a table the transaction read was
// written since it read it. The caller holds the write lock.
func (s *Session) validateReads(reads map[plan.GlobalID]readVersion) error {
	ids := slices.SortedFunc(maps.Keys(reads), func(a, b plan.GlobalID) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.N, b.N))
	})
	for _, id := range ids {
		if r := reads[id]; s.engine.versions.get(id) != r.version {
			return &sqlerr.Error{Code: sqlerr.SerializationFailure,
				Message: "could not serialize access due to read/write dependencies among transactions",
				Detail:  "Table \"" + r.name + "\" was written by another transaction after this transaction read it.",
				Hint:    "The transaction might succeed if retried."}
		}
	}
	return nil
}
