package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// validShardID keeps shard ids usable as file names (GlobalIds like "u12").
var validShardID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Options configures a Store.
type Options struct {
	Log logr.Logger
	// Now is the wall clock; tests inject a fake.
	Now func() time.Time
}

// Store is the set of table shards in one directory. It is safe for
// concurrent use.
type Store struct {
	dir    string
	log    logr.Logger
	oracle *Oracle

	mu     sync.Mutex
	shards map[string]*shard
	closed bool
}

// Open opens (creating if needed) the store in dir and every shard in it.
func Open(dir string, opts Options) (*Store, error) {
	shardDir := filepath.Join(dir, "shards")
	if err := os.MkdirAll(shardDir, 0o755); err != nil {
		return nil, fmt.Errorf("open storage: %w", err)
	}
	oracle, err := OpenOracle(filepath.Join(dir, "oracle"), opts.Now)
	if err != nil {
		return nil, fmt.Errorf("open storage: %w", err)
	}
	st := &Store{dir: shardDir, log: opts.Log, oracle: oracle, shards: map[string]*shard{}}
	entries, err := os.ReadDir(shardDir)
	if err != nil {
		return nil, fmt.Errorf("open storage: %w", err)
	}
	// Every time up to the oracle's restart point may have been exposed as
	// an upper before the restart; recovered shards start there.
	minUpper := oracle.LastTS() + 1
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok || !validShardID.MatchString(id) {
			continue
		}
		s, err := openShard(shardDir, id, minUpper)
		if err != nil {
			st.Close()
			return nil, err
		}
		st.shards[id] = s
	}
	return st, nil
}

// Oracle returns the store's timestamp oracle.
func (st *Store) Oracle() *Oracle { return st.oracle }

// Close closes every shard file. Listeners see their shard end.
func (st *Store) Close() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.closed = true
	var errs []error
	for _, s := range st.shards {
		s.mu.Lock()
		errs = append(errs, s.f.Close())
		s.notifyLocked()
		s.mu.Unlock()
	}
	st.shards = map[string]*shard{}
	return errors.Join(errs...)
}

func (st *Store) shard(id string) (*shard, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	s, ok := st.shards[id]
	if !ok {
		return nil, fmt.Errorf("shard %s: %w", id, ErrUnknownShard)
	}
	return s, nil
}

// ErrUnknownShard is returned for a shard that does not exist.
var ErrUnknownShard = errors.New("unknown shard")

// CreateShard creates an empty shard; creating an existing one is a no-op.
// The shard's file exists durably when this returns.
func (st *Store) CreateShard(id string) error {
	if !validShardID.MatchString(id) {
		return fmt.Errorf("create shard %q: invalid id", id)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return errors.New("create shard: storage closed")
	}
	if _, ok := st.shards[id]; ok {
		return nil
	}
	s, err := openShard(st.dir, id, st.oracle.LastTS()+1)
	if err != nil {
		return err
	}
	if err := syncDir(st.dir); err != nil {
		s.f.Close()
		return fmt.Errorf("create shard %s: %w", id, err)
	}
	st.shards[id] = s
	return nil
}

// DropShard closes a shard's upper (listeners finish) and deletes its file.
func (st *Store) DropShard(id string) error {
	st.mu.Lock()
	s, ok := st.shards[id]
	delete(st.shards, id)
	st.mu.Unlock()
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.upper = frontier.Closed()
	s.notifyLocked()
	s.f.Close()
	if err := os.Remove(s.path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("drop shard %s: %w", id, err)
	}
	return syncDir(st.dir)
}

// Shards lists shard ids, sorted.
func (st *Store) Shards() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make([]string, 0, len(st.shards))
	for id := range st.shards {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Append writes rows to a shard at a fresh timestamp and returns it once
// the write is durable. Before it returns, every table's upper is past the
// write's timestamp and the oracle's read timestamp is at it, so a strict
// serializable read that starts afterwards sees the write and waits for no
// table's next tick (the group commit of Materialize's table writes, one
// write at a time).
func (st *Store) Append(ctx context.Context, id string, rows []RowDiff) (frontier.Time, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s, err := st.shard(id)
	if err != nil {
		return 0, err
	}
	ts, err := st.appendShard(s, rows)
	if err != nil {
		return 0, err
	}
	st.advanceTables(ts + 1)
	st.oracle.ApplyWrite(ts)
	return ts, nil
}

func (st *Store) appendShard(s *shard, rows []RowDiff) (frontier.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The timestamp is drawn under the shard lock: a concurrent Tick that
	// draws a later time must wait for this write before it moves upper.
	ts, err := st.oracle.WriteTS()
	if err != nil {
		return 0, err
	}
	if err := s.appendLocked(ts, rows); err != nil {
		return 0, err
	}
	return ts, nil
}

// Tick advances every shard's upper to a fresh timestamp, so readers see
// time pass without writes.
func (st *Store) Tick() error {
	ts, err := st.oracle.WriteTS()
	if err != nil {
		return err
	}
	st.advanceTables(ts + 1)
	return nil
}

// advanceTables moves every table shard's upper to upper. A write holding
// a shard's lock drew its time before upper was drawn; taking the lock
// waits for it, so no write lands below an upper.
func (st *Store) advanceTables(upper frontier.Time) {
	st.mu.Lock()
	shards := make([]*shard, 0, len(st.shards))
	for _, s := range st.shards {
		shards = append(shards, s)
	}
	st.mu.Unlock()
	for _, s := range shards {
		s.mu.Lock()
		if s.sink {
			// A sink's upper moves only with its writers' appends.
			s.mu.Unlock()
			continue
		}
		s.advanceUpperLocked(upper)
		s.mu.Unlock()
	}
}

// Run ticks every interval until ctx is done.
func (st *Store) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := st.Tick(); err != nil {
				st.log.Error(err, "Failed to advance table uppers")
			}
		}
	}
}

// AllowCompaction lets a shard forget distinctions before since.
func (st *Store) AllowCompaction(id string, since frontier.Time) error {
	s, err := st.shard(id)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.compactLocked(since)
}

// Frontiers returns a shard's since and upper.
func (st *Store) Frontiers(id string) (since frontier.Time, upper frontier.Frontier, err error) {
	s, err := st.shard(id)
	if err != nil {
		return 0, frontier.Frontier{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.since, s.upper, nil
}

// LogBytes returns a shard's log size (for tests and metrics).
func (st *Store) LogBytes(id string) (int64, error) {
	s, err := st.shard(id)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logBytes, nil
}

// Progress is one step of a Listen: updates with times in [previous upper,
// Upper), and the new upper. The first Progress carries the snapshot at
// as_of (times advanced to as_of, consolidated) plus any later updates.
type Progress struct {
	Updates []Update
	Upper   frontier.Frontier
}

// Listen streams a shard from asOf: it waits until the snapshot at asOf is
// complete (upper > asOf), sends it, then sends every later change. It
// returns when ctx ends, send fails, or after sending a closed upper.
func (st *Store) Listen(ctx context.Context, id string, asOf frontier.Time, send func(Progress) error) error {
	s, err := st.shard(id)
	if err != nil {
		return err
	}
	// Wait for the snapshot to be complete.
	for {
		s.mu.Lock()
		ready := s.upper.IsComplete(asOf)
		changed := s.changed
		s.mu.Unlock()
		if ready {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
	sent := asOf + 1 // everything before sent has been delivered (after the snapshot)
	first := true
	for {
		s.mu.Lock()
		if s.since > asOf && first {
			s.mu.Unlock()
			return fmt.Errorf("listen to %s at %d: %w (since %d)", id, asOf, ErrCompacted, s.since)
		}
		if !first && s.since > sent {
			s.mu.Unlock()
			return fmt.Errorf("listen to %s: compacted to %d past delivered %d: %w", id, s.since, sent, ErrCompacted)
		}
		upper, changed := s.upper, s.changed
		var p Progress
		if first {
			p.Updates = snapshotLocked(s.updates, asOf)
		}
		lo := sort.Search(len(s.updates), func(i int) bool { return s.updates[i].Time >= sent })
		for _, u := range s.updates[lo:] {
			if !upper.LessEqualTime(u.Time) {
				p.Updates = append(p.Updates, u)
			}
		}
		s.mu.Unlock()
		if first || upper != frontier.At(sent) {
			p.Upper = upper
			if err := send(p); err != nil {
				return err
			}
			first = false
			if upper.IsClosed() {
				return nil
			}
			sent, _ = upper.Time()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
		st.mu.Lock()
		closed := st.closed
		st.mu.Unlock()
		if closed {
			return errors.New("storage closed")
		}
	}
}

// snapshotLocked returns the contents at asOf, consolidated, at time asOf.
func snapshotLocked(updates []Update, asOf frontier.Time) []Update {
	hi := sort.Search(len(updates), func(i int) bool { return updates[i].Time > asOf })
	out := make([]Update, hi)
	copy(out, updates[:hi])
	for i := range out {
		out[i].Time = asOf
	}
	return Consolidate(out)
}

// Snapshot returns a shard's contents at asOf once they are complete.
func (st *Store) Snapshot(ctx context.Context, id string, asOf frontier.Time) ([]Update, error) {
	var out []Update
	stop := errors.New("stop")
	err := st.Listen(ctx, id, asOf, func(p Progress) error {
		for _, u := range p.Updates {
			if u.Time <= asOf {
				out = append(out, u)
			}
		}
		return stop
	})
	if errors.Is(err, stop) {
		err = nil
	}
	return out, err
}
