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
// in milliseconds, and never reissued across restarts. It is safe for
// concurrent use.
type Oracle struct {
	path string
	now  func() time.Time

	mu    sync.Mutex
	last  frontier.Time // the last timestamp handed out
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
	ts := max(o.last+1, frontier.Time(o.now().UnixMilli()))
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

// ReadTS returns the timestamp for a strict serializable read: the latest
// timestamp handed out, so every write acknowledged before the read started
// is visible at it.
func (o *Oracle) ReadTS() frontier.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.last
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
