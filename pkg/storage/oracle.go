package storage

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// leaseLength is how far ahead of the wall clock the oracle reserves times
// durably; one fsync per lease.
const leaseLength = 10 * time.Second

// Oracle hands out write timestamps: strictly increasing, >= the wall clock
// in milliseconds, and never reissued across restarts. It also keeps the
// linearized read timestamp (ReadTS): the latest time a strict serializable
// read must include. It is safe for concurrent use.
type Oracle struct {
	path string
	now  func() time.Time

	mu   sync.Mutex
	last frontier.Time // the last timestamp handed out
	// read is the largest timestamp of a completed write or of a strict
	// serializable read (ApplyWrite, ApplyRead); <= last, or a later write
	// could land at or before a time already read.
	read  frontier.Time
	lease frontier.Time // every handed-out time is < lease; durable
}

// OpenOracle opens the oracle whose lease lives at path. A fresh oracle
// starts at the wall clock; a reopened one starts at its durable lease.
func OpenOracle(path string, now func() time.Time) (*Oracle, error) {
	if now == nil {
		now = time.Now
	}
	o := &Oracle{path: path, now: now}
	b, err := os.ReadFile(path)
	switch {
	case err == nil && len(b) == 8:
		o.lease = frontier.Time(binary.BigEndian.Uint64(b))
		// Times below the old lease may have been handed out (or exposed as
		// uppers); start after all of them.
		o.last = o.lease
		// Which writes completed before the restart is not recorded:
		// reads start after all of them.
		o.read = o.lease
	case err == nil:
		return nil, fmt.Errorf("open oracle %s: corrupt lease (%d bytes)", path, len(b))
	case os.IsNotExist(err):
	default:
		return nil, fmt.Errorf("open oracle %s: %w", path, err)
	}
	return o, nil
}

// WriteTS returns a fresh timestamp for a write (or an upper advance).
func (o *Oracle) WriteTS() (frontier.Time, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ts := max(max(o.last, o.read)+1, frontier.Time(o.now().UnixMilli()))
	if ts >= o.lease {
		lease := ts + frontier.Time(leaseLength.Milliseconds())
		if err := writeFileSync(o.path, binary.BigEndian.AppendUint64(nil, uint64(lease))); err != nil {
			return 0, fmt.Errorf("extend oracle lease: %w", err)
		}
		o.lease = lease
	}
	o.last = ts
	return ts, nil
}

// ReadTS returns the linearized read timestamp: the largest timestamp of a
// completed write (ApplyWrite) or strict serializable read (ApplyRead). A
// strict serializable read at ReadTS or later sees every write
// acknowledged before it started and nothing older than an earlier strict
// read saw. Upper advances (Tick) are not writes: they change no data, so
// they do not move ReadTS, and a read at ReadTS does not wait for inputs
// that are complete at it but not at the latest tick.
func (o *Oracle) ReadTS() frontier.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.read
}

// LastTS returns the latest timestamp handed out (or read at): every
// later WriteTS is after it.
func (o *Oracle) LastTS() frontier.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return max(o.last, o.read)
}

// ApplyWrite records that the write at ts completed (is durable and
// visible in its shard's upper): ReadTS is at least ts from now on.
func (o *Oracle) ApplyWrite(ts frontier.Time) { o.apply(ts) }

// ApplyRead records a strict serializable read at ts: later strict reads
// are at ts or after (they never go back in time), and later writes are
// after ts (a read never misses a write at a time it already read).
func (o *Oracle) ApplyRead(ts frontier.Time) { o.apply(ts) }

func (o *Oracle) apply(ts frontier.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.read = max(o.read, ts)
}

// writeFileSync replaces path atomically and durably with data.
func writeFileSync(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
