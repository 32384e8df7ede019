package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"sync"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// leaseLength is how far ahead of the wall clock the oracle reserves times
// durably; one fsync per lease.
const leaseLength = 10 * time.Second

// The lease file is
//
//	"TNDORC" | u16 version | u64 lease | u32 CRC-32C of the first 16 bytes
//
// replaced atomically (writeFileSync) at every extension. The release
// before it wrote the bare u64 lease (8 bytes), which is still read; the
// next extension writes the current format.
const (
	oracleMagic    = "TNDORC"
	oracleVersion  = 1
	oracleFileSize = 20
)

// Oracle hands out write timestamps: strictly increasing, >= the wall clock
// in milliseconds, and never reissued across restarts. It also keeps the
// linearized read timestamp (ReadTS): the latest time a strict serializable
// read must include. It is safe for concurrent use.
type Oracle struct {
	path string
	now  func() time.Time
	env  *storeEnv

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
	return openOracle(&storeEnv{fs: OSFS{}}, path, now)
}

func openOracle(env *storeEnv, path string, now func() time.Time) (*Oracle, error) {
	if now == nil {
		now = time.Now
	}
	o := &Oracle{path: path, now: now, env: env}
	b, err := readFile(env.fs, path)
	switch {
	case err == nil:
		lease, err := decodeLease(path, b)
		if err != nil {
			return nil, fmt.Errorf("open oracle: %w", err)
		}
		// Times below the old lease may have been handed out (or exposed as
		// uppers); start after all of them.
		o.lease, o.last = lease, lease
		// Which writes completed before the restart is not recorded:
		// reads start after all of them.
		o.read = lease
	case errors.Is(err, fs.ErrNotExist):
	default:
		return nil, fmt.Errorf("open oracle %s: %w", path, err)
	}
	return o, nil
}

func encodeLease(lease frontier.Time) []byte {
	b := make([]byte, 0, oracleFileSize)
	b = append(b, oracleMagic...)
	b = binary.BigEndian.AppendUint16(b, oracleVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(lease))
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

func decodeLease(path string, b []byte) (frontier.Time, error) {
	if len(b) == 8 && string(b[:len(oracleMagic)]) != oracleMagic {
		return frontier.Time(binary.BigEndian.Uint64(b)), nil // the legacy format
	}
	if len(b) < 8 || string(b[:len(oracleMagic)]) != oracleMagic {
		return 0, &CorruptionError{Path: path, Reason: fmt.Sprintf("not an oracle lease (%d bytes)", len(b))}
	}
	if v := binary.BigEndian.Uint16(b[6:8]); v > oracleVersion {
		return 0, fmt.Errorf("%s: lease format version %d is newer than this release reads (up to %d): "+
			"run the release that wrote this data directory, or a newer one: %w", path, v, oracleVersion, ErrUnsupportedVersion)
	}
	if len(b) != oracleFileSize || crc32.Checksum(b[:16], crcTable) != binary.BigEndian.Uint32(b[16:20]) {
		return 0, &CorruptionError{Path: path, Reason: "lease checksum mismatch"}
	}
	return frontier.Time(binary.BigEndian.Uint64(b[8:16])), nil
}

// WriteTS returns a fresh timestamp for a write (or an upper advance).
func (o *Oracle) WriteTS() (frontier.Time, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ts := max(max(o.last, o.read)+1, frontier.Time(o.now().UnixMilli()))
	if ts >= o.lease {
		lease := ts + frontier.Time(leaseLength.Milliseconds())
		if err := writeFileSync(o.env.fs, o.path, encodeLease(lease)); err != nil {
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
