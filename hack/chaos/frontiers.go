package main

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/jackc/pgx/v5"
)

// chaosReplica is the embedded default's replica (environment.DefaultReplica),
// whose introspection the frontier check reads.
const chaosReplica = "r1"

// frontierKey is one worker's report of one collection.
type frontierKey struct {
	id     string
	worker int64
}

// frontierAt is a write frontier: a time, or closed (NULL).
type frontierAt struct {
	closed bool
	t      int64
}

func (a frontierAt) String() string {
	if a.closed {
		return "[]"
	}
	return fmt.Sprintf("[%d]", a.t)
}

// before reports whether a is strictly before b.
func (a frontierAt) before(b frontierAt) bool {
	switch {
	case a.closed:
		return false
	case b.closed:
		return true
	}
	return a.t < b.t
}

// frontierCheck checks, after each fault, that no collection's write
// frontier went back on any worker of the replica since the previous
// read by the same replica processes. A restarted process rebuilds its
// dataflows at the controller's as_of (the since, below the frontier it
// had reached), so the comparison starts afresh when the replica's
// processes changed; a reconnection of the same processes keeps their
// dataflows (the replayed as_of is never before the running one), so
// their frontiers must carry on.
type frontierCheck struct {
	pids []int
	last map[frontierKey]frontierAt
	// compared counts (collection, worker) reports compared with an
	// earlier one.
	compared int64
}

// observe compares a read made while the replica ran as pids with the
// previous read and returns the regressions it finds.
func (fc *frontierCheck) observe(pids []int, now map[frontierKey]frontierAt) []string {
	pids = slices.Sorted(slices.Values(pids))
	var out []string
	if slices.Equal(pids, fc.pids) {
		for k, was := range fc.last {
			is, ok := now[k]
			if !ok {
				continue // dropped (a re-created index has a new id)
			}
			fc.compared++
			if is.before(was) {
				out = append(out, fmt.Sprintf("write frontier of %s on worker %d of replica %s went back from %s to %s (same processes %v)",
					k.id, k.worker, chaosReplica, was, is, pids))
			}
		}
	}
	sort.Strings(out)
	fc.pids, fc.last = pids, now
	return out
}

// readFrontiers reads the replica's introspection frontiers.
func readFrontiers(ctx context.Context, conn *pgx.Conn) (map[frontierKey]frontierAt, error) {
	if _, err := conn.Exec(ctx, "SET cluster_replica = "+chaosReplica); err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, `SELECT id, worker, write_frontier FROM introspection.frontiers`)
	if err != nil {
		return nil, err
	}
	out := map[frontierKey]frontierAt{}
	for rows.Next() {
		var k frontierKey
		var w *int64
		if err := rows.Scan(&k.id, &k.worker, &w); err != nil {
			return nil, err
		}
		if w == nil {
			out[k] = frontierAt{closed: true}
		} else {
			out[k] = frontierAt{t: *w}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("replica %s reports no frontiers yet", chaosReplica)
	}
	return out, nil
}

// checkFrontiers reads the frontiers while the replica's processes stay
// the same and records any regression as a violation. It fails (to be
// retried) while the replica does not answer.
func (l *load) checkFrontiers(ctx context.Context) error {
	before, err := l.sys.replicas()
	if err != nil {
		return err
	}
	conn, err := l.sys.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	now, err := readFrontiers(octx, conn)
	if err != nil {
		return fmt.Errorf("read introspection frontiers: %w", err)
	}
	after, err := l.sys.replicas()
	if err != nil {
		return err
	}
	if !slices.Equal(slices.Sorted(slices.Values(before)), slices.Sorted(slices.Values(after))) {
		return fmt.Errorf("replica processes changed during the frontier read (%v, then %v)", before, after)
	}
	for _, v := range l.frontiers.observe(after, now) {
		l.violation("%s", v)
	}
	l.frontierReads.Add(1)
	return nil
}
