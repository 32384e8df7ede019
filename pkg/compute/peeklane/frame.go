package peeklane

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"
)

// MaxFrame bounds one frame's payload; a point read's answer is far
// smaller, and anything larger goes over the command stream (stashed).
const MaxFrame = 16 << 20

// appendFrame appends m, length-prefixed, to buf.
func appendFrame(buf []byte, m proto.Message) ([]byte, error) {
	start := len(buf)
	buf = append(buf, 0, 0, 0, 0)
	buf, err := proto.MarshalOptions{}.MarshalAppend(buf, m)
	if err != nil {
		return buf[:start], fmt.Errorf("encode frame: %w", err)
	}
	n := len(buf) - start - 4
	if n > MaxFrame {
		return buf[:start], fmt.Errorf("encode frame: %d bytes exceed the lane's %d", n, MaxFrame)
	}
	binary.BigEndian.PutUint32(buf[start:], uint32(n))
	return buf, nil
}

// readFrame reads one frame's payload into buf (grown as needed) and
// decodes it into m.
func readFrame(r *bufio.Reader, buf []byte, m proto.Message) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return buf, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrame {
		return buf, fmt.Errorf("frame of %d bytes exceeds the lane's %d", n, MaxFrame)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		return buf, err
	}
	if err := proto.Unmarshal(buf, m); err != nil {
		return buf, fmt.Errorf("decode frame: %w", err)
	}
	return buf, nil
}
