package storage

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// A shard log (logfile.go frames them) holds records whose payload is one
// kind byte followed by:
//
//	recordBatch:  u64 time | uvarint n | n x (uvarint len | row | varint diff)
//	recordSince:  u64 since
//	recordAppend: u64 upper | uvarint n | n x (u64 time | uvarint len | row | varint diff)
//
// and the store's commit log (commit.go) holds
//
//	recordCommit: u64 time | uvarint shards | shards x (uvarint len | shard id | uvarint n | n x (uvarint len | row | varint diff))
//
// recordAppend is a sink shard's compare-and-append: its updates (at times
// below upper) and its new upper in one record, so a crash leaves either
// all of an acknowledged append or none of it. A shard whose log holds an
// append record is a sink shard: its upper is the last appended upper, not
// derived from the oracle.
const (
	recordBatch  byte = 1
	recordSince  byte = 2
	recordAppend byte = 3
	recordCommit byte = 4
)

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
	p := make([]byte, 0, 9+binary.MaxVarintLen64+rowsSize(rows))
	p = append(p, recordBatch)
	p = binary.BigEndian.AppendUint64(p, uint64(t))
	return appendRows(p, rows)
}

// rowsSize is an upper bound of appendRows' output, so that a large batch
// is encoded without regrowing its buffer.
func rowsSize(rows []RowDiff) int {
	n := binary.MaxVarintLen64
	for _, r := range rows {
		n += 2*binary.MaxVarintLen64 + len(r.Row)
	}
	return n
}

func appendRows(p []byte, rows []RowDiff) []byte {
	p = binary.AppendUvarint(p, uint64(len(rows)))
	for _, r := range rows {
		p = binary.AppendUvarint(p, uint64(len(r.Row)))
		p = append(p, r.Row...)
		p = binary.AppendVarint(p, r.Diff)
	}
	return p
}

// encodeAppend encodes a sink append: updates (sorted by time) and upper.
func encodeAppend(upper frontier.Time, updates []Update) []byte {
	p := make([]byte, 0, 24*len(updates)+9+binary.MaxVarintLen64)
	p = append(p, recordAppend)
	p = binary.BigEndian.AppendUint64(p, uint64(upper))
	p = binary.AppendUvarint(p, uint64(len(updates)))
	for _, u := range updates {
		p = binary.BigEndian.AppendUint64(p, uint64(u.Time))
		p = binary.AppendUvarint(p, uint64(len(u.Row)))
		p = append(p, u.Row...)
		p = binary.AppendVarint(p, u.Diff)
	}
	return p
}

func encodeSince(since frontier.Time) []byte {
	p := make([]byte, 0, 9)
	p = append(p, recordSince)
	return binary.BigEndian.AppendUint64(p, uint64(since))
}

// logContents is what replaying a shard log yields.
type logContents struct {
	since frontier.Time
	// sinkUpper is the last append record's upper; sink is set when the
	// log holds one.
	sinkUpper frontier.Time
	sink      bool
	updates   []Update
	// written is the latest batch time in the log, with or without rows:
	// a commit (commit.go) at a later time is not in this log yet.
	written frontier.Time
}

var errTorn = errors.New("record ends early")

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
		c.written = max(c.written, t)
		rows, rest, err := decodeRows(p)
		if err != nil {
			return err
		}
		if len(rest) != 0 {
			return errTrailing
		}
		for _, r := range rows {
			c.updates = append(c.updates, Update{Row: r.Row, Time: t, Diff: r.Diff})
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

var errTrailing = errors.New("bytes after the end of a record")

// decodeRows decodes appendRows' output at the start of p; the rows alias
// p.
func decodeRows(p []byte) ([]RowDiff, []byte, error) {
	n, k := binary.Uvarint(p)
	if k <= 0 {
		return nil, nil, errTorn
	}
	p = p[k:]
	// Every row takes at least two bytes, so a damaged count cannot make
	// us allocate more than the record's size.
	if n > uint64(len(p)/2) {
		return nil, nil, errTorn
	}
	rows := make([]RowDiff, 0, n)
	for range n {
		l, k := binary.Uvarint(p)
		if k <= 0 || uint64(len(p)-k) < l {
			return nil, nil, errTorn
		}
		row := p[k : k+int(l) : k+int(l)]
		p = p[k+int(l):]
		d, k := binary.Varint(p)
		if k <= 0 {
			return nil, nil, errTorn
		}
		p = p[k:]
		rows = append(rows, RowDiff{Row: row, Diff: d})
	}
	return rows, p, nil
}
