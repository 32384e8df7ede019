package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// opTimeout bounds one client statement, so a stopped process cannot hold
// a writer (and with it a checkpoint) forever.
const opTimeout = 15 * time.Second

var schema = []string{
	`CREATE TABLE acct (k bigint, v bigint)`,
	`CREATE TABLE ledger (k bigint, note text)`,
	`CREATE TABLE clock (t bigint)`,
	`CREATE MATERIALIZED VIEW acct_mv AS SELECT count(*) AS n FROM acct`,
	`CREATE VIEW acct_buckets AS SELECT k % 16 AS b, count(*) AS n FROM acct GROUP BY k % 16`,
	`CREATE INDEX acct_buckets_idx ON acct_buckets (b)`,
	`CREATE INDEX acct_k ON acct (k)`,
}

// load is the workload and its checks.
type load struct {
	sys     *system
	writers int
	model   *model
	// gate pauses writers while a checkpoint reads the tables: writers
	// hold it shared for one operation, the checkpoint exclusively.
	gate  sync.RWMutex
	seeds []uint64

	acked, unknown, reads atomic.Int64
	clockAcked            atomic.Int64
	// frontiers is read and written only by checkpoint, under gate.
	frontiers     frontierCheck
	frontierReads atomic.Int64

	mu         sync.Mutex
	violations []string
}

func newLoad(sys *system, writers int, rng *rand.Rand) *load {
	l := &load{sys: sys, writers: writers, model: newModel()}
	for range writers + 2 {
		l.seeds = append(l.seeds, rng.Uint64())
	}
	return l
}

func (l *load) violation(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	logf("VIOLATION: %s", msg)
	l.mu.Lock()
	l.violations = append(l.violations, msg)
	l.mu.Unlock()
}

func (l *load) setup(ctx context.Context) error {
	conn, err := l.sys.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, s := range schema {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// start runs the writers and readers until ctx ends; the returned channel
// closes when they all returned.
func (l *load) start(ctx context.Context) <-chan struct{} {
	var wg sync.WaitGroup
	for w := range l.writers {
		wg.Go(func() { l.client(ctx, l.writer(w)) })
	}
	wg.Go(func() { l.client(ctx, l.clockWriter()) })
	wg.Go(func() { l.client(ctx, l.strictReader()) })
	wg.Go(func() { l.client(ctx, l.viewReader()) })
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done
}

// client runs step on a connection until ctx ends, reconnecting after any
// error (a fault may have broken the connection).
func (l *load) client(ctx context.Context, step func(ctx context.Context, conn *pgx.Conn) error) {
	for ctx.Err() == nil {
		conn, err := l.sys.connect(ctx)
		if err != nil {
			return
		}
		for ctx.Err() == nil {
			if err := step(ctx, conn); err != nil {
				break
			}
		}
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = conn.Close(cctx)
		cancel()
	}
}

// writer returns writer w's step: one insert, update, delete or
// transaction on keys only it writes.
func (l *load) writer(w int) func(ctx context.Context, conn *pgx.Conn) error {
	rng := rand.New(rand.NewPCG(l.seeds[w], uint64(w)))
	var seq int64
	var mine []int64 // keys this writer inserted and has not deleted
	return func(ctx context.Context, conn *pgx.Conn) error {
		l.gate.RLock()
		defer l.gate.RUnlock()
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		defer cancel()
		switch p := rng.IntN(100); {
		case p < 40 || len(mine) == 0:
			seq++
			k := int64(w+1)<<40 | seq
			_, err := conn.Exec(octx, `INSERT INTO acct VALUES ($1, 0)`, k)
			l.record(k, err, false, insert)
			if err == nil {
				mine = append(mine, k)
			}
			return err
		case p < 60:
			seq++
			k := int64(w+1)<<40 | seq
			err := transaction(octx, conn, k)
			l.record(k, err, true, insert)
			return err
		default:
			i := rng.IntN(len(mine))
			k := mine[i]
			before, ok := l.model.known(k)
			if !ok || !before.present {
				mine = append(mine[:i], mine[i+1:]...)
				return nil
			}
			if l.model.paired(k) {
				return nil // transactions' rows stay, so their pairing can be checked
			}
			if p < 85 {
				tag, err := conn.Exec(octx, `UPDATE acct SET v = v + 1 WHERE k = $1`, k)
				l.record(k, err, false, incr)
				if err == nil && tag.RowsAffected() != 1 {
					l.violation("UPDATE of key %d (known %v) acknowledged with %d rows", k, before, tag.RowsAffected())
				}
				return err
			}
			tag, err := conn.Exec(octx, `DELETE FROM acct WHERE k = $1`, k)
			l.record(k, err, false, remove)
			if err == nil {
				mine = append(mine[:i], mine[i+1:]...)
				if tag.RowsAffected() != 1 {
					l.violation("DELETE of key %d (known %v) acknowledged with %d rows", k, before, tag.RowsAffected())
				}
			}
			return err
		}
	}
}

// transaction commits a row of acct and of ledger for k in one
// transaction.
func transaction(ctx context.Context, conn *pgx.Conn, k int64) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO acct VALUES ($1, 0)`, k); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO ledger VALUES ($1, 'pair')`, k); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func insert(state) state { return state{present: true} }
func incr(s state) state { return state{present: s.present, v: s.v + 1} }
func remove(state) state { return state{} }

// record notes a write's outcome: acknowledged, or unknown after any error
// (the statement may have been applied before the connection broke).
func (l *load) record(k int64, err error, paired bool, next func(state) state) {
	l.model.write(k, err == nil, paired, next)
	if err == nil {
		l.acked.Add(1)
	} else {
		l.unknown.Add(1)
	}
}

// clockWriter inserts increasing values into clock.
func (l *load) clockWriter() func(ctx context.Context, conn *pgx.Conn) error {
	var t int64
	return func(ctx context.Context, conn *pgx.Conn) error {
		t++
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		defer cancel()
		if _, err := conn.Exec(octx, `INSERT INTO clock VALUES ($1)`, t); err != nil {
			return err
		}
		l.clockAcked.Store(t)
		return sleep(ctx, 20*time.Millisecond)
	}
}

// strictReader reads max(clock) at strict serializable: never below a
// value acknowledged before the read began, never below an earlier read.
func (l *load) strictReader() func(ctx context.Context, conn *pgx.Conn) error {
	var last int64
	return func(ctx context.Context, conn *pgx.Conn) error {
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		defer cancel()
		if _, err := conn.Exec(octx, `SET transaction_isolation = 'strict serializable'`); err != nil {
			return err
		}
		before := l.clockAcked.Load()
		var got *int64
		if err := conn.QueryRow(octx, `SELECT max(t) FROM clock`).Scan(&got); err != nil {
			return err
		}
		v := deref(got)
		if v < before {
			l.violation("strict serializable read of max(clock) = %d misses %d, acknowledged before the read began", v, before)
		}
		if v < last {
			l.violation("strict serializable read of max(clock) = %d is older than an earlier read (%d)", v, last)
		}
		last = max(last, v)
		l.reads.Add(1)
		return nil
	}
}

// viewReader reads the materialized view, the indexed view and their query
// over acct in one statement: all three must agree.
func (l *load) viewReader() func(ctx context.Context, conn *pgx.Conn) error {
	return func(ctx context.Context, conn *pgx.Conn) error {
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		defer cancel()
		var mv, buckets, direct *int64
		err := conn.QueryRow(octx, `SELECT (SELECT n FROM acct_mv), (SELECT sum(n) FROM acct_buckets), (SELECT count(*) FROM acct)`).Scan(&mv, &buckets, &direct)
		if err != nil {
			return err
		}
		if deref(mv) != deref(direct) || deref(buckets) != deref(direct) {
			l.violation("views disagree with their query at one timestamp: acct_mv %d, acct_buckets %d, count(*) over acct %d", deref(mv), deref(buckets), deref(direct))
		}
		l.reads.Add(1)
		return sleep(ctx, 50*time.Millisecond)
	}
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// checkpoint pauses the writers, waits until the system answers, reads acct
// and ledger at strict serializable and checks them against the model, and
// reads the replica's introspection frontiers (checkFrontiers).
func (l *load) checkpoint(ctx context.Context, recovery time.Duration) error {
	l.gate.Lock()
	defer l.gate.Unlock()
	rctx, cancel := context.WithTimeout(ctx, recovery)
	defer cancel()
	var last error
	for {
		obs, err := l.observe(rctx)
		if err == nil {
			if err = l.checkFrontiers(rctx); err == nil {
				for _, v := range l.model.check(obs) {
					l.violation("%s", v)
				}
				keys, uncertain := l.model.counts()
				logf("check: %d keys, %d uncertain, %d writes acknowledged, %d unknown, %d reads checked, %d frontier reports compared",
					keys, uncertain, l.acked.Load(), l.unknown.Load(), l.reads.Load(), l.frontiers.compared)
				return nil
			}
		}
		last = err
		if sleep(rctx, 500*time.Millisecond) != nil {
			return fmt.Errorf("system did not answer within %v: %w", recovery, errors.Join(last, rctx.Err()))
		}
	}
}

func (l *load) observe(ctx context.Context) (observed, error) {
	obs := observed{acct: map[int64][]int64{}, ledger: map[int64]int{}}
	conn, err := l.sys.connect(ctx)
	if err != nil {
		return obs, err
	}
	defer conn.Close(context.Background())
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	rows, err := conn.Query(octx, `SELECT k, v FROM acct`)
	if err != nil {
		return obs, err
	}
	for rows.Next() {
		var k, v int64
		if err := rows.Scan(&k, &v); err != nil {
			return obs, err
		}
		obs.acct[k] = append(obs.acct[k], v)
	}
	if err := rows.Err(); err != nil {
		return obs, err
	}
	rows, err = conn.Query(octx, `SELECT k FROM ledger`)
	if err != nil {
		return obs, err
	}
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			return obs, err
		}
		obs.ledger[k]++
	}
	return obs, rows.Err()
}

// loseAWrite deletes one acknowledged, known-present row of acct without
// telling the model: the next checkpoint must report it lost.
func (l *load) loseAWrite(ctx context.Context) error {
	l.gate.Lock()
	defer l.gate.Unlock()
	conn, err := l.sys.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, `SELECT k FROM acct`)
	if err != nil {
		return err
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return err
	}
	for _, k := range keys {
		if s, ok := l.model.known(k); ok && s.present && !l.model.paired(k) {
			logf("sabotage: deleting key %d behind the clients' back", k)
			_, err := conn.Exec(ctx, `DELETE FROM acct WHERE k = $1`, k)
			return err
		}
	}
	return errors.New("no acknowledged row to delete")
}
