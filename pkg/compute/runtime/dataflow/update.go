package dataflow

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// Update is one (key, val, time, diff) change to a collection. Unkeyed
// collections leave Key nil and carry the row in Val. Key and Val are encoded
// rows; this package never interprets them.
type Update struct {
	Key, Val []byte
	Time     frontier.Time
	Diff     int64
}

// wire kinds of a cross-process message.
const (
	wireData     byte = 1
	wireFrontier byte = 2
)

// wireMessage is the decoded form of one Fabric message: data or a frontier
// for one exchange input of one dataflow on one worker.
type wireMessage struct {
	kind     byte
	target   int // global worker index of the receiver
	from     int // global worker index of the sender
	seq      uint64
	op, port int
	front    frontier.Frontier
	updates  []Update
}

var errShortMessage = errors.New("dataflow: truncated fabric message")

func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// encode appends the wire form of m to b.
func (m *wireMessage) encode(b []byte) []byte {
	b = append(b, m.kind)
	b = appendUvarint(b, uint64(m.target))
	b = appendUvarint(b, uint64(m.from))
	b = appendUvarint(b, m.seq)
	b = appendUvarint(b, uint64(m.op))
	b = appendUvarint(b, uint64(m.port))
	switch m.kind {
	case wireFrontier:
		if t, ok := m.front.Time(); ok {
			b = append(b, 0)
			b = appendUvarint(b, uint64(t))
		} else {
			b = append(b, 1)
		}
	case wireData:
		b = appendUvarint(b, uint64(len(m.updates)))
		for _, u := range m.updates {
			b = appendBytes(b, u.Key)
			b = appendBytes(b, u.Val)
			b = appendUvarint(b, uint64(u.Time))
			b = binary.AppendVarint(b, u.Diff)
		}
	}
	return b
}

type wireReader struct {
	b   []byte
	err error
}

func (r *wireReader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.err = errShortMessage
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *wireReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errShortMessage
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *wireReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errShortMessage
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *wireReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if uint64(len(r.b)) < n {
		r.err = errShortMessage
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// decodeWire parses a Fabric message. The returned updates alias b, which the
// caller must not reuse.
func decodeWire(b []byte) (wireMessage, error) {
	r := wireReader{b: b}
	var m wireMessage
	m.kind = r.byte()
	m.target = int(r.uvarint())
	m.from = int(r.uvarint())
	m.seq = r.uvarint()
	m.op = int(r.uvarint())
	m.port = int(r.uvarint())
	switch m.kind {
	case wireFrontier:
		if r.byte() == 0 {
			m.front = frontier.At(frontier.Time(r.uvarint()))
		} else {
			m.front = frontier.Closed()
		}
	case wireData:
		n := r.uvarint()
		if r.err == nil && n > uint64(len(r.b)) {
			// Every update takes at least four bytes; a count beyond the
			// remaining length is corrupt and must not drive an allocation.
			return m, fmt.Errorf("decode fabric message: %d updates in %d bytes", n, len(r.b))
		}
		m.updates = make([]Update, 0, n)
		for i := uint64(0); i < n && r.err == nil; i++ {
			var u Update
			u.Key = r.bytes()
			u.Val = r.bytes()
			u.Time = frontier.Time(r.uvarint())
			u.Diff = r.varint()
			m.updates = append(m.updates, u)
		}
	default:
		if r.err == nil {
			return m, fmt.Errorf("decode fabric message: unknown kind %d", m.kind)
		}
	}
	if r.err != nil {
		return m, fmt.Errorf("decode fabric message: %w", r.err)
	}
	if len(r.b) != 0 {
		return m, fmt.Errorf("decode fabric message: %d trailing bytes", len(r.b))
	}
	return m, nil
}
