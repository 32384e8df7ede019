package sql

import (
	"context"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// One snapshot per transaction block.
//
// An explicit block's reads are made at one time, taken at its first
// read that goes to the backend: every statement of a read-only block
// sees one state of the data, as in PostgreSQL's REPEATABLE READ and
// SERIALIZABLE, however many other sessions commit meanwhile. The backend
// holds every collection the block could read (its time domain: every
// table, materialized view, source and index) readable at that time until
// the block ends, so no later read of the block finds its input compacted
// past it.
//
// A block that writes is validated at COMMIT against the table versions
// taken just before its snapshot (tx_conflict.go): a table it read that
// another session wrote after the snapshot fails the COMMIT with 40001.
// So the block commits only if what it read is still what it would read
// at its commit, including the reads made apart from the snapshot: those
// of tables the block wrote (read-your-writes over the latest committed
// rows, tx_pending.go) and the rows an UPDATE or DELETE retracts (read
// under the write lock at the latest time).
//
// Left out of the snapshot: introspection relations (each replica's own
// data, read at that replica's times), SUBSCRIBE (a stream from its own
// start), implicit transactions (a query string of several statements,
// whose statements read at their own times as under PostgreSQL's READ
// COMMITTED), and backends that do not implement Snapshots (the tests'
// fake), whose blocks read as implicit transactions do.

// Snapshots is implemented by backends that can hold one read time for
// several reads.
type Snapshots interface {
	// BeginSnapshot picks a read time at the isolation level, as a read
	// of every table, materialized view, source and index would, and
	// holds all of them readable there until the snapshot is released.
	BeginSnapshot(ctx context.Context, isolation string) (ReadSnapshot, error)
}

// ReadSnapshot is a read time held by the backend.
type ReadSnapshot interface {
	Time() frontier.Time
	// Release lets the held collections compact past Time. It is
	// idempotent.
	Release()
}

// blockSnapshot returns the read time of the explicit block's reads,
// taking the snapshot at the block's first read; nil outside a block or
// when the backend has no snapshots.
func (s *Session) blockSnapshot(ctx context.Context) (*frontier.Time, error) {
	if !s.tx.explicit {
		return nil, nil
	}
	if s.tx.snap == nil {
		b, ok := s.engine.backend.(Snapshots)
		if !ok {
			return nil, nil
		}
		versions := s.engine.versions.all()
		snap, err := b.BeginSnapshot(ctx, s.txIsolation())
		if err != nil {
			return nil, err
		}
		s.tx.snap, s.tx.snapVersions = snap, versions
	}
	t := s.tx.snap.Time()
	return &t, nil
}

// versionSeen is the version of table id that the transaction's reads
// see: the one taken before its snapshot, or, without one, the latest.
func (s *Session) versionSeen(id plan.GlobalID) uint64 {
	if s.tx.snap != nil {
		return s.tx.snapVersions[id]
	}
	return s.engine.versions.get(id)
}

// releaseSnapshot gives the block's snapshot back to the backend.
func (s *Session) releaseSnapshot() {
	if s.tx.snap != nil {
		s.tx.snap.Release()
		s.tx.snap, s.tx.snapVersions = nil, nil
	}
}
