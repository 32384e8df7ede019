package storage

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// Sink shards hold the output of a materialized view. Unlike a table, whose
// writes are timestamped by the oracle, a sink shard is written by the
// view's dataflows with CompareAndAppend: updates at times the writer
// chooses, in [expected upper, new upper), accepted only if the shard's
// upper still is the expected one. Several writers (the replicas of a
// cluster, or one replica before and after a restart) may race: exactly one
// append per upper wins, the others learn the new upper and correct
// themselves (see pkg/compute/sink).

// UpperMismatchError is returned by CompareAndAppend when the shard's upper
// is not the expected one: another writer got there first.
type UpperMismatchError struct {
	Shard    string
	Expected frontier.Time
	Current  frontier.Frontier
}

func (e *UpperMismatchError) Error() string {
	return fmt.Sprintf("shard %s: append expected upper %d, upper is %v", e.Shard, e.Expected, e.Current)
}

// ErrNotSink is returned for compare-and-append on a table shard.
var ErrNotSink = errors.New("not a sink shard")

// CreateSinkShard creates an empty sink shard whose since and upper are
// initial: its first append covers times from initial on. Creating an
// existing sink shard is a no-op; an existing table shard of that id is an
// error.
func (st *Store) CreateSinkShard(id string, initial frontier.Time) error {
	if !validShardID.MatchString(id) {
		return fmt.Errorf("create sink shard %q: invalid id", id)
	}
	st.writeMu.Lock()
	defer st.writeMu.Unlock()
	if st.commits == nil {
		return errors.New("create sink shard: storage closed")
	}
	if s, err := st.shard(id); err == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.sink {
			return fmt.Errorf("create sink shard %s: %w: a table shard exists", id, ErrNotSink)
		}
		return nil
	}
	// since and upper are in the new log from the start (createLog writes
	// it whole or not at all), so it is a sink shard from its first byte.
	return st.createShardLocked(id, 0, encodeSince(initial), encodeAppend(initial, nil))
}

// IsSink reports whether a shard is a sink shard.
func (st *Store) IsSink(id string) (bool, error) {
	s, err := st.shard(id)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sink, nil
}

// CompareAndAppend writes updates to a sink shard and moves its upper from
// expected to upper, durably, if and only if its upper is expected. Every
// update's time must be in [expected, upper). An upper equal to expected
// with no updates is a no-op that still checks the upper. It returns an
// *UpperMismatchError when the upper differs (another writer won),
// ErrDropped (wrapped) for a dropped shard.
func (st *Store) CompareAndAppend(ctx context.Context, id string, expected, upper frontier.Time, updates []Update) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s, err := st.shard(id)
	if err != nil {
		return err
	}
	if upper < expected {
		return fmt.Errorf("append to shard %s: new upper %d before expected %d", id, upper, expected)
	}
	for _, u := range updates {
		if u.Time < expected || u.Time >= upper {
			return fmt.Errorf("append to shard %s: update at %d outside [%d, %d)", id, u.Time, expected, upper)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.log.broken != nil:
		return fmt.Errorf("shard %s: %w", id, s.log.broken)
	case !s.sink:
		return fmt.Errorf("append to shard %s: %w", id, ErrNotSink)
	case s.upper.IsClosed():
		return fmt.Errorf("shard %s: %w", id, ErrDropped)
	case s.upper != frontier.At(expected):
		return &UpperMismatchError{Shard: id, Expected: expected, Current: s.upper}
	case upper == expected && len(updates) == 0:
		return nil
	}
	sorted := make([]Update, len(updates))
	for i, u := range updates {
		sorted[i] = Update{Row: bytes.Clone(u.Row), Time: u.Time, Diff: u.Diff}
	}
	slices.SortStableFunc(sorted, func(a, b Update) int { return cmp.Compare(a.Time, b.Time) })
	if err := s.log.append(encodeAppend(upper, sorted)); err != nil {
		return fmt.Errorf("shard %s: %w", id, err)
	}
	s.updates = append(s.updates, sorted...)
	s.upper = frontier.At(upper)
	s.notifyLocked()
	return nil
}

// ReadFrom returns a shard's updates at times at or after from, with its
// upper and since. When from is at or before since (and not 0), updates
// before from were consolidated with later ones and cannot be told apart:
// then full is set and the updates are the shard's whole contents (every
// update, consolidated at since). A reader that knows the contents before
// from adds the updates when full is false and replaces its contents when
// it is true.
func (st *Store) ReadFrom(ctx context.Context, id string, from frontier.Time) (updates []Update, upper frontier.Frontier, since frontier.Time, full bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, frontier.Frontier{}, 0, false, err
	}
	s, err := st.shard(id)
	if err != nil {
		return nil, frontier.Frontier{}, 0, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	full = from == 0 || from <= s.since
	if full {
		cut := sort.Search(len(s.updates), func(i int) bool { return s.updates[i].Time > s.since })
		updates = append(settledAt(s.updates, s.settled, s.since), s.updates[cut:]...)
		return updates, s.upper, s.since, full, nil
	}
	lo := sort.Search(len(s.updates), func(i int) bool { return s.updates[i].Time >= from })
	// s.updates is replaced, never mutated in place, by compaction; appends
	// only grow it, so the copy is what a reader may keep.
	updates = slices.Clone(s.updates[lo:])
	return updates, s.upper, s.since, full, nil
}
