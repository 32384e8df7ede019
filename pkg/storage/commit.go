package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// Multi-shard commits. AppendMany writes one timestamp's rows to several
// table shards as one durable unit, through the store's commit log
// (commit.log next to the shard directory):
//
//  1. a commit record naming every shard's rows is appended to the commit
//     log and fsynced: from here the commit survives a crash;
//  2. each shard's batch at that time is appended to its log and fsynced;
//  3. the commit log is cut back to its header (fsynced), and the rows
//     become visible.
//
// Open replays a commit record still in the commit log (a crash between 1
// and 3) into every shard whose log does not have it yet: a shard's batches
// are in time order, so a shard whose latest written time is at or past
// the commit's has it. A failure in 2 cuts the shards written so far and
// then the commit record; if a cut fails, the commit record stays, the
// store refuses table writes until it is reopened, and reopening completes
// the commit. Either way a crash at any point leaves all of the commit or
// none of it.

// TableWrite is the rows one AppendMany writes to one table shard.
type TableWrite struct {
	Shard string
	Rows  []RowDiff
}

// AppendMany writes rows to one or more table shards at one fresh
// timestamp, all or nothing, and returns the timestamp once every write is
// durable. Writes naming the same shard are concatenated. It is serialised
// with every other table write.
//
// Before it returns, every table's upper is past the write's timestamp and
// the oracle's read timestamp is at it, so a strict serializable read that
// starts afterwards sees the write and waits for no table's next tick.
func (st *Store) AppendMany(ctx context.Context, writes []TableWrite) (frontier.Time, error) {
	ts, err := st.appendMany(ctx, writes)
	if err != nil {
		return 0, err
	}
	// After the shard locks are released: advancing takes each of them.
	st.advanceTables(ts + 1)
	st.oracle.ApplyWrite(ts)
	return ts, nil
}

func (st *Store) appendMany(ctx context.Context, writes []TableWrite) (frontier.Time, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	writes = mergeWrites(writes)
	if len(writes) == 0 {
		return 0, errors.New("append: no shards to write")
	}
	st.writeMu.Lock()
	defer st.writeMu.Unlock()
	if err := st.checkCommitsLocked(); err != nil {
		return 0, fmt.Errorf("append: %w", err)
	}
	shards, err := st.lockShards(writes)
	if err != nil {
		return 0, err
	}
	defer func() {
		for _, s := range shards {
			s.mu.Unlock()
		}
	}()
	// The timestamp is drawn under the shard locks: a concurrent Tick that
	// draws a later time must wait for this write before it moves upper.
	ts, err := st.oracle.WriteTS()
	if err != nil {
		return 0, err
	}
	for _, s := range shards {
		if !s.upper.LessEqualTime(ts) {
			return 0, fmt.Errorf("shard %s: write at %d is before upper %v", s.id, ts, s.upper)
		}
	}
	if len(shards) == 1 {
		// One record in one log is atomic by itself.
		err = shards[0].appendLocked(ts, writes[0].Rows)
	} else {
		err = st.commitLocked(ts, shards, writes)
	}
	if err != nil {
		return 0, err
	}
	return ts, nil
}

// mergeWrites sorts writes by shard (the lock order) and concatenates the
// rows of writes to the same shard.
func mergeWrites(writes []TableWrite) []TableWrite {
	out := slices.Clone(writes)
	slices.SortStableFunc(out, func(a, b TableWrite) int { return strings.Compare(a.Shard, b.Shard) })
	merged := out[:0]
	for _, w := range out {
		if n := len(merged); n > 0 && merged[n-1].Shard == w.Shard {
			merged[n-1].Rows = append(slices.Clip(merged[n-1].Rows), w.Rows...)
			continue
		}
		merged = append(merged, w)
	}
	return merged
}

// lockShards locks the shards of writes (sorted by id) and checks that
// each takes table writes. On error nothing is left locked.
func (st *Store) lockShards(writes []TableWrite) ([]*shard, error) {
	shards := make([]*shard, 0, len(writes))
	unlock := func() {
		for _, s := range shards {
			s.mu.Unlock()
		}
	}
	for _, w := range writes {
		s, err := st.shard(w.Shard)
		if err != nil {
			unlock()
			return nil, err
		}
		s.mu.Lock()
		shards = append(shards, s)
		if err := s.checkWritableLocked(); err != nil {
			unlock()
			return nil, err
		}
	}
	return shards, nil
}

// checkCommitsLocked refuses writes while a failed commit could not be
// rolled back: until a reopen completes it, a later write to one of its
// shards would make the replay skip that shard.
func (st *Store) checkCommitsLocked() error {
	if st.commits == nil {
		return errors.New("storage closed")
	}
	if st.commits.broken != nil {
		return fmt.Errorf("reopen the store: %w", st.commits.broken)
	}
	return nil
}

// commitLocked writes a multi-shard commit (see the top of this file).
func (st *Store) commitLocked(ts frontier.Time, shards []*shard, writes []TableWrite) error {
	if err := st.commits.append(encodeCommit(ts, writes)); err != nil {
		return fmt.Errorf("commit at %d: %w", ts, err)
	}
	payloads := make([][]byte, len(shards))
	marks := make([]logMark, len(shards))
	for i, s := range shards {
		marks[i] = s.log.mark()
		p, err := s.writeBatchLocked(ts, writes[i].Rows)
		if err != nil {
			return st.abortCommitLocked(ts, shards[:i], marks, err)
		}
		payloads[i] = p
	}
	if err := st.commits.cutTo(logHeaderSize, 0); err != nil {
		// Every shard has the commit; a replay would find it there. But a
		// later write would hide it from the replay for its shard, so
		// refuse writes until a reopen.
		st.commits.broken = fmt.Errorf("commit log could not be cleared after the commit at %d: %w", ts, err)
	}
	for i, s := range shards {
		s.applyBatchLocked(payloads[i])
	}
	return nil
}

// abortCommitLocked undoes a commit whose batch could not be written to
// every shard: the batches already written (the last record of each of
// those shards) are cut, then the commit record.
func (st *Store) abortCommitLocked(ts frontier.Time, written []*shard, marks []logMark, cause error) error {
	cause = fmt.Errorf("commit at %d: %w", ts, cause)
	for i, s := range written {
		if err := s.log.cutTo(marks[i].size, marks[i].seq); err != nil {
			s.log.broken = fmt.Errorf("commit at %d could not be rolled back: %w", ts, err)
			st.commits.broken = fmt.Errorf("a failed commit at %d could not be rolled back in shard %s (reopening completes it): %w", ts, s.id, err)
			return cause
		}
	}
	if err := st.commits.cutTo(logHeaderSize, 0); err != nil {
		st.commits.broken = fmt.Errorf("a failed commit at %d could not be rolled back (reopening completes it): %w", ts, err)
	}
	return cause
}

// openCommits opens (or creates) the commit log and completes the commit
// it holds, if any.
func (st *Store) openCommits(path string) error {
	var pending [][]byte
	collect := func(p []byte) error {
		if _, _, err := decodeCommit(p); err != nil {
			return err
		}
		pending = append(pending, p)
		return nil
	}
	l, legacy, _, err := openLog(st.env.fs, path, st.env.metrics, collect)
	switch {
	case errors.Is(err, fs.ErrNotExist) || (err == nil && legacy):
		// A new store, or one of the release before the commit log (or an
		// empty file of an interrupted creation: createLog never leaves
		// one, so nothing was committed through it).
		if l != nil {
			l.close()
		}
		l, _, err = createLog(st.env.fs, path, st.env.metrics, func(func([]byte) error) error { return nil })
		if err != nil {
			return err
		}
	case err != nil:
		return err
	}
	st.commits = l
	for _, p := range pending {
		if err := st.replayCommit(p); err != nil {
			return err
		}
	}
	if len(pending) > 0 || l.size > logHeaderSize {
		return l.cutTo(logHeaderSize, 0)
	}
	return nil
}

// replayCommit writes a commit's batch to every shard that does not have
// it yet.
func (st *Store) replayCommit(p []byte) error {
	ts, writes, err := decodeCommit(p)
	if err != nil {
		return err
	}
	var missing []string
	var todo []*shard
	for _, w := range writes {
		s, ok := st.shards[w.Shard]
		switch {
		case !ok:
			missing = append(missing, w.Shard)
		case s.written < ts:
			todo = append(todo, s)
		}
	}
	if len(missing) > 0 && len(todo) > 0 {
		return fmt.Errorf("complete the commit at %d: shard %s: %w", ts, missing[0], ErrShardMissing)
	}
	// With nothing to do, a missing shard was dropped after the commit.
	for _, w := range writes {
		s, ok := st.shards[w.Shard]
		if !ok || s.written >= ts {
			continue
		}
		payload, err := s.writeBatchLocked(ts, w.Rows)
		if err != nil {
			return fmt.Errorf("complete the commit at %d: %w", ts, err)
		}
		s.applyBatchLocked(payload)
		st.env.log.Info("Completed a commit interrupted by a crash", "shard", s.id, "time", ts)
	}
	return nil
}

func encodeCommit(ts frontier.Time, writes []TableWrite) []byte {
	size := 9 + binary.MaxVarintLen64
	for _, w := range writes {
		size += binary.MaxVarintLen64 + len(w.Shard) + rowsSize(w.Rows)
	}
	p := make([]byte, 0, size)
	p = append(p, recordCommit)
	p = binary.BigEndian.AppendUint64(p, uint64(ts))
	p = binary.AppendUvarint(p, uint64(len(writes)))
	for _, w := range writes {
		p = binary.AppendUvarint(p, uint64(len(w.Shard)))
		p = append(p, w.Shard...)
		p = appendRows(p, w.Rows)
	}
	return p
}

func decodeCommit(p []byte) (frontier.Time, []TableWrite, error) {
	if len(p) < 9 || p[0] != recordCommit {
		return 0, nil, errors.New("not a commit record")
	}
	ts := frontier.Time(binary.BigEndian.Uint64(p[1:9]))
	p = p[9:]
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)) {
		return 0, nil, errTorn
	}
	p = p[k:]
	writes := make([]TableWrite, 0, n)
	for range n {
		l, k := binary.Uvarint(p)
		if k <= 0 || uint64(len(p)-k) < l {
			return 0, nil, errTorn
		}
		id := string(p[k : k+int(l)])
		if !validShardID.MatchString(id) {
			return 0, nil, fmt.Errorf("commit names shard %q", id)
		}
		rows, rest, err := decodeRows(p[k+int(l):])
		if err != nil {
			return 0, nil, err
		}
		p = rest
		writes = append(writes, TableWrite{Shard: id, Rows: rows})
	}
	if len(p) != 0 {
		return 0, nil, errTrailing
	}
	if !slices.IsSortedFunc(writes, func(a, b TableWrite) int { return strings.Compare(a.Shard, b.Shard) }) {
		return 0, nil, errors.New("commit shards out of order")
	}
	return ts, writes, nil
}
