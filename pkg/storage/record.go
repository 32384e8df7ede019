package storage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// A shard log is a sequence of records, each
//
//	u32 payload length | u32 CRC-32C of payload | payload
//
// and a payload is one kind byte followed by:
//
//	recordBatch:  u64 time | uvarint n | n x (uvarint len | row | varint diff)
//	recordSince:  u64 since
//	recordAppend: u64 upper | uvarint n | n x (u64 time | uvarint len | row | varint diff)
//
// recordAppend is a sink shard's compare-and-append: its updates (at times
// below upper) and its new upper in one checksummed record, so a crash
// leaves either all of an acknowledged append or none of it. A shard whose
// log holds an append record is a sink shard: its upper is the last
// appended upper, not derived from the oracle.
//
// A record whose length or checksum does not verify ends the log: it is the
// torn tail of a write that was never acknowledged.
const (
	recordBatch  byte = 1
	recordSince  byte = 2
	recordAppend byte = 3

	// maxRecord bounds one record so a corrupt length cannot make us
	// allocate gigabytes.
	maxRecord = 256 << 20
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Update is one change to a shard.
type Update struct {
	Row  []byte
	Time frontier.Time
	Diff int64
}

// RowDiff is a row and its multiplicity change, before it has a time.
type RowDiff struct {
	Row  []byte
	Diff int64
}

func encodeBatch(t frontier.Time, rows []RowDiff) []byte {
	p := make([]byte, 8, 8+16*len(rows)) // 8: the frame header, filled by frame
	p = append(p, recordBatch)
	p = binary.BigEndian.AppendUint64(p, uint64(t))
	p = binary.AppendUvarint(p, uint64(len(rows)))
	for _, r := range rows {
		p = binary.AppendUvarint(p, uint64(len(r.Row)))
		p = append(p, r.Row...)
		p = binary.AppendVarint(p, r.Diff)
	}
	return frame(p)
}

// encodeAppend encodes a sink append: updates (sorted by time) and upper.
func encodeAppend(upper frontier.Time, updates []Update) []byte {
	p := make([]byte, 8, 8+24*len(updates)+17)
	p = append(p, recordAppend)
	p = binary.BigEndian.AppendUint64(p, uint64(upper))
	p = binary.AppendUvarint(p, uint64(len(updates)))
	for _, u := range updates {
		p = binary.BigEndian.AppendUint64(p, uint64(u.Time))
		p = binary.AppendUvarint(p, uint64(len(u.Row)))
		p = append(p, u.Row...)
		p = binary.AppendVarint(p, u.Diff)
	}
	return frame(p)
}

func encodeSince(since frontier.Time) []byte {
	p := make([]byte, 8, 17)
	p = append(p, recordSince)
	p = binary.BigEndian.AppendUint64(p, uint64(since))
	return frame(p)
}

// frame fills the 8-byte header reserved at the start of p.
func frame(p []byte) []byte {
	payload := p[8:]
	binary.BigEndian.PutUint32(p[0:4], uint32(len(payload)))
	binary.BigEndian.PutUint32(p[4:8], crc32.Checksum(payload, crcTable))
	return p
}

// logContents is what replaying a log yields.
type logContents struct {
	since frontier.Time
	// sinkUpper is the last append record's upper; sink is set when the
	// log holds one.
	sinkUpper frontier.Time
	sink      bool
	updates   []Update
	// valid is the length of the verified prefix; anything after it is a
	// torn tail to truncate.
	valid int64
}

var errTorn = errors.New("torn record")

// readLog replays a log, stopping at the first record that does not verify.
func readLog(r io.Reader) (logContents, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var out logContents
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return out, nil
			}
			return out, err
		}
		n := binary.BigEndian.Uint32(hdr[0:4])
		if n == 0 || n > maxRecord {
			return out, nil
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return out, nil
			}
			return out, err
		}
		if crc32.Checksum(payload, crcTable) != binary.BigEndian.Uint32(hdr[4:8]) {
			return out, nil
		}
		if err := out.apply(payload); err != nil {
			// A verified record that does not decode is corruption, not a
			// torn write: refuse to guess.
			return out, fmt.Errorf("record at offset %d: %w", out.valid, err)
		}
		out.valid += int64(8 + n)
	}
}

func (c *logContents) apply(p []byte) error {
	if len(p) < 9 {
		return errTorn
	}
	kind, p := p[0], p[1:]
	t := frontier.Time(binary.BigEndian.Uint64(p))
	p = p[8:]
	switch kind {
	case recordSince:
		c.since = t
		return nil
	case recordBatch:
		n, k := binary.Uvarint(p)
		if k <= 0 {
			return errTorn
		}
		p = p[k:]
		for range n {
			l, k := binary.Uvarint(p)
			if k <= 0 || uint64(len(p)-k) < l {
				return errTorn
			}
			row := p[k : k+int(l) : k+int(l)]
			p = p[k+int(l):]
			d, k := binary.Varint(p)
			if k <= 0 {
				return errTorn
			}
			p = p[k:]
			c.updates = append(c.updates, Update{Row: row, Time: t, Diff: d})
		}
		return nil
	case recordAppend:
		n, k := binary.Uvarint(p)
		if k <= 0 {
			return errTorn
		}
		p = p[k:]
		for range n {
			if len(p) < 8 {
				return errTorn
			}
			ut := frontier.Time(binary.BigEndian.Uint64(p))
			p = p[8:]
			l, k := binary.Uvarint(p)
			if k <= 0 || uint64(len(p)-k) < l {
				return errTorn
			}
			row := p[k : k+int(l) : k+int(l)]
			p = p[k+int(l):]
			d, k := binary.Varint(p)
			if k <= 0 {
				return errTorn
			}
			p = p[k:]
			if ut >= t {
				return fmt.Errorf("append record: update at %d not below its upper %d", ut, t)
			}
			c.updates = append(c.updates, Update{Row: row, Time: ut, Diff: d})
		}
		c.sink, c.sinkUpper = true, t
		return nil
	default:
		return fmt.Errorf("unknown record kind %d", kind)
	}
}
