package storage

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// rewriteSlack is the log growth tolerated beyond twice the compacted size
// before a rewrite, so tiny shards are not rewritten on every compaction.
const rewriteSlack = 64 << 10

// shard is one table's updates. Its mutex guards everything below it.
type shard struct {
	id   string
	path string

	mu  sync.Mutex
	log *logFile
	// compactedBytes is the log's length right after the last rewrite (or
	// open).
	compactedBytes int64
	// updates are sorted by time; updates[:settled] is the consolidated
	// prefix and readers take every time at or before since as since
	// (settle.go).
	updates []Update
	settled int
	since   frontier.Time
	upper   frontier.Frontier
	// written is the latest time a batch was written to the log at; a
	// replayed commit (commit.go) at or before it is already here.
	written frontier.Time
	// sink shards (materialized views) are written only by
	// compare-and-append: their upper is durable in the log and moves only
	// with an append, never with the oracle's ticks.
	sink bool
	// changed is closed and replaced whenever upper, since or updates change.
	changed chan struct{}
}

// shardPath is where shard id's log lives in dir.
func shardPath(dir, id string) string { return filepath.Join(dir, id+".log") }

// createShardLog writes a new shard log holding records, atomically: a
// crash leaves no file or the whole one, never an empty or torn one.
func createShardLog(env *storeEnv, dir, id string, records ...[]byte) error {
	l, _, err := createLog(env.fs, shardPath(dir, id), env.metrics, func(add func([]byte) error) error {
		for _, r := range records {
			if err := add(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("create shard %s: %w", id, err)
	}
	return l.close()
}

// openShard opens an existing shard log. A legacy-format log is rewritten
// in the current format.
func openShard(env *storeEnv, dir, id string, minUpper frontier.Time) (*shard, error) {
	path := shardPath(dir, id)
	var c logContents
	l, legacy, torn, err := openLog(env.fs, path, env.metrics, c.apply)
	if err != nil {
		return nil, fmt.Errorf("open shard %s: %w", id, err)
	}
	if torn > 0 {
		env.log.Info("Discarded the torn last record of a shard log (an unacknowledged write)", "shard", id, "path", path, "bytes", torn)
	}
	upper := minUpper
	if c.sink {
		// A sink's upper is what its writers appended; it is durable in
		// the log and independent of the oracle.
		upper = c.sinkUpper
	}
	for _, u := range c.updates {
		upper = max(upper, u.Time+1)
	}
	s := &shard{
		id: id, path: path, log: l,
		compactedBytes: l.size,
		updates:        c.updates, since: c.since, upper: frontier.At(upper),
		written: c.written, sink: c.sink,
		changed: make(chan struct{}),
	}
	s.updates, s.settled = compactUpTo(s.updates, 0, s.since, true)
	if legacy {
		env.log.Info("Rewriting a shard log of the legacy format in the current one", "shard", id, "path", path)
		if err := s.rewriteLocked(env); err != nil {
			l.close()
			return nil, err
		}
	}
	return s, nil
}

// notifyLocked wakes every listener.
func (s *shard) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// checkWritableLocked reports why a table write to s cannot happen.
func (s *shard) checkWritableLocked() error {
	switch {
	case s.log.broken != nil:
		return fmt.Errorf("shard %s: %w", s.id, s.log.broken)
	case s.upper.IsClosed():
		return fmt.Errorf("shard %s: %w", s.id, ErrDropped)
	case s.sink:
		return fmt.Errorf("shard %s: a sink shard takes only compare-and-append writes", s.id)
	}
	return nil
}

// appendLocked writes rows at ts durably and applies them.
func (s *shard) appendLocked(ts frontier.Time, rows []RowDiff) error {
	if err := s.checkWritableLocked(); err != nil {
		return err
	}
	if !s.upper.LessEqualTime(ts) {
		return fmt.Errorf("shard %s: write at %d is before upper %v", s.id, ts, s.upper)
	}
	payload, err := s.writeBatchLocked(ts, rows)
	if err != nil {
		return err
	}
	s.applyBatchLocked(payload)
	return nil
}

// writeBatchLocked writes a batch record durably, without applying it.
func (s *shard) writeBatchLocked(ts frontier.Time, rows []RowDiff) ([]byte, error) {
	payload := encodeBatch(ts, rows)
	if err := s.log.append(payload); err != nil {
		return nil, fmt.Errorf("shard %s: %w", s.id, err)
	}
	return payload, nil
}

// applyBatchLocked applies a batch written by writeBatchLocked and moves
// upper past it. The in-memory rows alias the encoded record, decoded as a
// reopen would decode it, so a large batch is not held twice.
func (s *shard) applyBatchLocked(payload []byte) {
	var c logContents
	if err := c.apply(payload); err != nil {
		panic(fmt.Sprintf("shard %s: a batch this process encoded does not decode: %v", s.id, err))
	}
	s.updates = append(s.updates, c.updates...)
	s.written = max(s.written, c.written)
	s.upper = frontier.At(max(c.written+1, s.upperTime()))
	s.notifyLocked()
}

// upperTime is the upper's time, 0 when closed.
func (s *shard) upperTime() frontier.Time {
	t, _ := s.upper.Time()
	return t
}

// advanceUpperLocked moves upper to u if that is an advance.
func (s *shard) advanceUpperLocked(u frontier.Time) {
	if s.upper.LessEqualTime(u) && s.upper != frontier.At(u) {
		s.upper = frontier.At(u)
		s.notifyLocked()
	}
}

// compactLocked advances since, consolidates, and rewrites the log when it
// has grown past twice its compacted size.
func (s *shard) compactLocked(env *storeEnv, since frontier.Time) error {
	if ut, ok := s.upper.Time(); ok {
		// since never passes upper: times at or past upper are not written yet.
		since = min(since, ut)
	}
	if since <= s.since {
		return nil
	}
	s.since = since
	s.updates, s.settled = compactUpTo(s.updates, s.settled, since, false)
	s.notifyLocked()
	if s.log.size <= 2*s.compactedBytes+rewriteSlack {
		return nil
	}
	// The rewrite holds the consolidated contents, however few changed.
	s.updates, s.settled = compactUpTo(s.updates, s.settled, since, true)
	return s.rewriteLocked(env)
}

// rewriteLocked replaces the log with its compacted contents (createLog:
// temporary file, fsync, rename, directory fsync).
func (s *shard) rewriteLocked(env *storeEnv) error {
	l, replaced, err := createLog(env.fs, s.path, env.metrics, s.emitCompacted)
	if err != nil {
		if replaced {
			// The open file is no longer the shard's log: appending to it
			// would be lost.
			s.log.broken = fmt.Errorf("log replaced by a rewrite that then failed: %w", err)
		}
		return fmt.Errorf("rewrite shard %s: %w", s.id, err)
	}
	s.log.close()
	s.log = l
	s.compactedBytes = l.size
	return nil
}

// emitCompacted adds the records of the shard's compacted contents: a
// since record, one batch per distinct time, the latest written time (so a
// replayed commit knows it is here) and a sink's upper.
func (s *shard) emitCompacted(add func([]byte) error) error {
	if err := add(encodeSince(s.since)); err != nil {
		return err
	}
	last := frontier.Time(0)
	for i := 0; i < len(s.updates); {
		j := i
		var rows []RowDiff
		for ; j < len(s.updates) && s.updates[j].Time == s.updates[i].Time; j++ {
			rows = append(rows, RowDiff{Row: s.updates[j].Row, Diff: s.updates[j].Diff})
		}
		// Times at or before since are since (settle.go); replay
		// consolidates batches that share it.
		t := max(s.updates[i].Time, s.since)
		if err := add(encodeBatch(t, rows)); err != nil {
			return err
		}
		last = t
		i = j
	}
	if s.written > last {
		if err := add(encodeBatch(s.written, nil)); err != nil {
			return err
		}
	}
	if ut, ok := s.upper.Time(); ok && s.sink {
		// Keeps the shard a sink and its upper durable.
		return add(encodeAppend(ut, nil))
	}
	return nil
}

// ErrDropped is returned for operations on a dropped shard.
var ErrDropped = errors.New("shard dropped")

// ErrCompacted is returned for a read before a shard's since.
var ErrCompacted = errors.New("read before since")

// Consolidate sums the diffs of equal (time, row) pairs and drops zeros, in
// place; the result is sorted by (time, row). The slots it no longer uses
// are cleared so that their rows can be collected.
func Consolidate(us []Update) []Update {
	slices.SortFunc(us, func(a, b Update) int {
		if c := cmp.Compare(a.Time, b.Time); c != 0 {
			return c
		}
		return bytes.Compare(a.Row, b.Row)
	})
	out := us[:0]
	for _, u := range us {
		if n := len(out); n > 0 && out[n-1].Time == u.Time && bytes.Equal(out[n-1].Row, u.Row) {
			out[n-1].Diff += u.Diff
			if out[n-1].Diff == 0 {
				out = out[:n-1]
			}
			continue
		}
		out = append(out, u)
	}
	clear(us[len(out):])
	return out
}
