package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
	// FS is the file system the store reads and writes through; nil is the
	// operating system's (OSFS). Tests and the chaos suite pass a FaultFS.
	FS FS
	// Metrics records fsync latency, log bytes, failed appends and
	// corruption (NewMetrics); nil records nothing.
	Metrics *Metrics
}

// storeEnv is what every part of a store writes through.
type storeEnv struct {
	fs      FS
	metrics *Metrics
	log     logr.Logger
}

// Store is the set of table shards in one directory. It is safe for
// concurrent use.
type Store struct {
	dir    string
	env    *storeEnv
	oracle *Oracle

	// writeMu serialises table writes (Append, AppendMany) with each other
	// and with shard creation and drops: a commit's shards cannot change
	// under it, and the commit log holds at most one pending commit.
	writeMu sync.Mutex
	commits *logFile

	mu     sync.Mutex
	shards map[string]*shard
	closed bool
}

// Open opens (creating if needed) the store in dir and every shard in it,
// and completes a multi-shard commit that a crash interrupted.
func Open(dir string, opts Options) (*Store, error) {
	env := &storeEnv{fs: opts.FS, metrics: opts.Metrics, log: opts.Log}
	if env.fs == nil {
		env.fs = OSFS{}
	}
	shardDir := filepath.Join(dir, "shards")
	if err := env.fs.MkdirAll(shardDir, 0o755); err != nil {
		return nil, fmt.Errorf("open storage: %w", err)
	}
	if err := env.fs.SyncDir(dir); err != nil {
		return nil, fmt.Errorf("open storage: %w", err)
	}
	oracle, err := openOracle(env, filepath.Join(dir, "oracle"), opts.Now)
	if err != nil {
		return nil, fmt.Errorf("open storage: %w", err)
	}
	st := &Store{dir: shardDir, env: env, oracle: oracle, shards: map[string]*shard{}}
	if err := st.openShards(); err != nil {
		st.Close()
		return nil, err
	}
	if err := st.openCommits(filepath.Join(dir, "commit.log")); err != nil {
		st.Close()
		return nil, fmt.Errorf("open storage: %w", err)
	}
	return st, nil
}

// openShards opens every shard log in the shard directory and removes
// the temporary files of interrupted creations and rewrites.
func (st *Store) openShards() error {
	entries, err := st.env.fs.ReadDir(st.dir)
	if err != nil {
		return fmt.Errorf("open storage: %w", err)
	}
	// Every time up to the oracle's restart point may have been exposed as
	// an upper before the restart; recovered shards start there.
	minUpper := st.oracle.LastTS() + 1
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			if err := st.env.fs.Remove(filepath.Join(st.dir, e.Name())); err != nil {
				return fmt.Errorf("open storage: remove leftover %s: %w", e.Name(), err)
			}
			continue
		}
		id, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok || !validShardID.MatchString(id) {
			continue
		}
		s, err := openShard(st.env, st.dir, id, minUpper)
		if err != nil {
			return err
		}
		st.shards[id] = s
	}
	return nil
}

// Oracle returns the store's timestamp oracle.
func (st *Store) Oracle() *Oracle { return st.oracle }

// Close closes every shard file. Listeners see their shard end.
func (st *Store) Close() error {
	st.writeMu.Lock()
	defer st.writeMu.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.closed = true
	var errs []error
	if st.commits != nil {
		errs = append(errs, st.commits.close())
		st.commits = nil
	}
	for _, s := range st.shards {
		s.mu.Lock()
		errs = append(errs, s.log.close())
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

// ErrShardMissing is returned by RequireShard for a shard whose log is not
// in the data directory.
var ErrShardMissing = errors.New("shard log missing")

// CreateShard creates an empty table shard; creating an existing one is a
// no-op, so a caller recovering an interrupted creation may repeat it. The
// shard's file exists durably when this returns.
func (st *Store) CreateShard(id string) error {
	if !validShardID.MatchString(id) {
		return fmt.Errorf("create shard %q: invalid id", id)
	}
	st.writeMu.Lock()
	defer st.writeMu.Unlock()
	if err := st.checkCommitsLocked(); err != nil {
		return fmt.Errorf("create shard %s: %w", id, err)
	}
	if st.HasShard(id) {
		return nil
	}
	return st.createShardLocked(id, st.oracle.LastTS()+1)
}

// createShardLocked writes a new shard log holding records and opens it.
// The caller holds writeMu and has checked that the shard does not exist.
func (st *Store) createShardLocked(id string, minUpper frontier.Time, records ...[]byte) error {
	if err := createShardLog(st.env, st.dir, id, records...); err != nil {
		return err
	}
	s, err := openShard(st.env, st.dir, id, minUpper)
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		s.log.close()
		return fmt.Errorf("create shard %s: storage closed", id)
	}
	st.shards[id] = s
	return nil
}

// HasShard reports whether a shard exists.
func (st *Store) HasShard(id string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	_, ok := st.shards[id]
	return ok
}

// RequireShard returns an error wrapping ErrShardMissing unless the shard
// exists. Recovery calls it, instead of CreateShard, for every table the
// catalog holds: a catalogued table whose log is gone lost its data, and
// must not come back empty.
func (st *Store) RequireShard(id string) error {
	if st.HasShard(id) {
		return nil
	}
	return fmt.Errorf("shard %s: %s: %w", id, shardPath(st.dir, id), ErrShardMissing)
}

// DropShard closes a shard's upper (listeners finish) and deletes its file.
func (st *Store) DropShard(id string) error {
	st.writeMu.Lock()
	defer st.writeMu.Unlock()
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
	s.log.close()
	if err := st.env.fs.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("drop shard %s: %w", id, err)
	}
	if err := st.env.fs.SyncDir(st.dir); err != nil {
		return fmt.Errorf("drop shard %s: %w", id, err)
	}
	return nil
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
// the write is durable. It is AppendMany of one shard.
func (st *Store) Append(ctx context.Context, id string, rows []RowDiff) (frontier.Time, error) {
	return st.AppendMany(ctx, []TableWrite{{Shard: id, Rows: rows}})
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
				st.env.log.Error(err, "Failed to advance table uppers")
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
	return s.compactLocked(st.env, since)
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
	return s.log.size, nil
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
			p.Updates = settledAt(s.updates, s.settled, asOf)
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
