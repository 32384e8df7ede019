package sql

import (
	"context"
	"sync"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// writeLock is a mutex a statement can stop waiting for: an explicit block
// holds it from its first UPDATE or DELETE until it ends, so a writer or a
// DDL statement queued behind an idle block must still honour
// statement_timeout and cancel requests. There is deliberately no Lock
// without a context: every statement waits through LockContext
// (Session.lockWrites). The zero value is unlocked.
type writeLock struct {
	once sync.Once
	ch   chan struct{}
}

func (l *writeLock) sem() chan struct{} {
	l.once.Do(func() { l.ch = make(chan struct{}, 1) })
	return l.ch
}

// LockContext waits for the lock until ctx ends, then fails with 57014
// (Session.Execute words it as a statement timeout when that is the cause).
func (l *writeLock) LockContext(ctx context.Context) error {
	select {
	case l.sem() <- struct{}{}:
		return nil
	case <-ctx.Done():
		return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	}
}

// Unlock releases the lock.
func (l *writeLock) Unlock() { <-l.sem() }
