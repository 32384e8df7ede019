package storage

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
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

	mu sync.Mutex
	f  *os.File
	// logBytes is the log's length; compactedBytes its length right after
	// the last rewrite (or open).
	logBytes, compactedBytes int64
	// updates are sorted by time; those at or before since are consolidated
	// at since.
	updates []Update
	since   frontier.Time
	upper   frontier.Frontier
	// sink shards (materialized views) are written only by
	// compare-and-append: their upper is durable in the log and moves only
	// with an append, never with the oracle's ticks.
	sink bool
	// broken is set when a failed write could not be rolled back; the shard
	// then refuses writes rather than risk an unreadable log.
	broken error
	// changed is closed and replaced whenever upper, since or updates change.
	changed chan struct{}
}

func openShard(dir, id string, minUpper frontier.Time) (*shard, error) {
	path := filepath.Join(dir, id+".log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open shard %s: %w", id, err)
	}
	c, err := readLog(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open shard %s: %w", id, err)
	}
	// Drop a torn tail so later appends follow a verified prefix.
	if err := f.Truncate(c.valid); err != nil {
		f.Close()
		return nil, fmt.Errorf("open shard %s: truncate torn tail: %w", id, err)
	}
	if _, err := f.Seek(c.valid, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("open shard %s: %w", id, err)
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
		id: id, path: path, f: f,
		logBytes: c.valid, compactedBytes: c.valid,
		updates: c.updates, since: c.since, upper: frontier.At(upper),
		sink:    c.sink,
		changed: make(chan struct{}),
	}
	s.updates = consolidateUpTo(s.updates, s.since)
	return s, nil
}

// notifyLocked wakes every listener.
func (s *shard) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// appendLocked writes rows at ts durably and applies them.
func (s *shard) appendLocked(ts frontier.Time, rows []RowDiff) error {
	if s.broken != nil {
		return fmt.Errorf("shard %s: %w", s.id, s.broken)
	}
	if s.upper.IsClosed() {
		return fmt.Errorf("shard %s: %w", s.id, ErrDropped)
	}
	if s.sink {
		return fmt.Errorf("shard %s: a sink shard takes only compare-and-append writes", s.id)
	}
	if !s.upper.LessEqualTime(ts) {
		return fmt.Errorf("shard %s: write at %d is before upper %v", s.id, ts, s.upper)
	}
	rec := encodeBatch(ts, rows)
	if _, err := s.f.Write(rec); err != nil {
		return s.rollbackLocked(fmt.Errorf("append to shard %s: %w", s.id, err))
	}
	if err := s.f.Sync(); err != nil {
		return s.rollbackLocked(fmt.Errorf("sync shard %s: %w", s.id, err))
	}
	s.logBytes += int64(len(rec))
	for _, r := range rows {
		s.updates = append(s.updates, Update{Row: slices.Clone(r.Row), Time: ts, Diff: r.Diff})
	}
	s.upper = frontier.At(ts + 1)
	s.notifyLocked()
	return nil
}

// rollbackLocked cuts the log back to its last acknowledged length after a
// failed write; if even that fails, the shard is marked broken.
func (s *shard) rollbackLocked(err error) error {
	if terr := s.f.Truncate(s.logBytes); terr != nil {
		s.broken = fmt.Errorf("log could not be rolled back after %v: %w", err, terr)
	} else if _, serr := s.f.Seek(s.logBytes, 0); serr != nil {
		s.broken = serr
	}
	return err
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
func (s *shard) compactLocked(since frontier.Time) error {
	if ut, ok := s.upper.Time(); ok {
		// since never passes upper: times at or past upper are not written yet.
		since = min(since, ut)
	}
	if since <= s.since {
		return nil
	}
	s.since = since
	s.updates = consolidateUpTo(s.updates, since)
	s.notifyLocked()
	if s.logBytes <= 2*s.compactedBytes+rewriteSlack {
		return nil
	}
	return s.rewriteLocked()
}

// rewriteLocked replaces the log with its compacted contents: a since
// record, then one batch per distinct time.
func (s *shard) rewriteLocked() error {
	var buf bytes.Buffer
	buf.Write(encodeSince(s.since))
	for i := 0; i < len(s.updates); {
		j := i
		var rows []RowDiff
		for ; j < len(s.updates) && s.updates[j].Time == s.updates[i].Time; j++ {
			rows = append(rows, RowDiff{Row: s.updates[j].Row, Diff: s.updates[j].Diff})
		}
		buf.Write(encodeBatch(s.updates[i].Time, rows))
		i = j
	}
	if ut, ok := s.upper.Time(); ok && s.sink {
		// Keeps the shard a sink and its upper durable.
		buf.Write(encodeAppend(ut, nil))
	}
	if err := writeFileSync(s.path, buf.Bytes()); err != nil {
		return fmt.Errorf("rewrite shard %s: %w", s.id, err)
	}
	f, err := os.OpenFile(s.path, os.O_RDWR, 0o644)
	if err != nil {
		s.broken = err
		return fmt.Errorf("reopen shard %s: %w", s.id, err)
	}
	if _, err := f.Seek(int64(buf.Len()), 0); err != nil {
		f.Close()
		s.broken = err
		return fmt.Errorf("reopen shard %s: %w", s.id, err)
	}
	s.f.Close()
	s.f = f
	s.logBytes, s.compactedBytes = int64(buf.Len()), int64(buf.Len())
	return nil
}

// ErrDropped is returned for operations on a dropped shard.
var ErrDropped = errors.New("shard dropped")

// ErrCompacted is returned for a read before a shard's since.
var ErrCompacted = errors.New("read before since")

// consolidateUpTo advances every update at or before since to since and
// consolidates them (rows summed, zero diffs dropped). The result is a new
// slice sorted by time; listeners never see a slice mutated in place.
func consolidateUpTo(updates []Update, since frontier.Time) []Update {
	cut := sort.Search(len(updates), func(i int) bool { return updates[i].Time > since })
	if cut == 0 {
		return updates
	}
	head := make([]Update, cut)
	copy(head, updates[:cut])
	for i := range head {
		head[i].Time = since
	}
	head = Consolidate(head)
	out := make([]Update, 0, len(head)+len(updates)-cut)
	out = append(out, head...)
	return append(out, updates[cut:]...)
}

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
