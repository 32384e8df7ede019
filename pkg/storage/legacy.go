package storage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
)

// The legacy log format (format version 0, written before logs had a
// header) is a sequence of
//
//	u32 payload length (at most legacyMaxRecord) | u32 CRC-32C of payload | payload
//
// with the payloads of record.go. It is still read so that a data
// directory of that release opens; on open such a log is rewritten in the
// current format (temporary file and rename), so it is read only once.
//
// The legacy format cannot tell a torn last record from a damaged one in
// the middle (nothing ties a record to its position), so it keeps its old
// rule: the first record that does not verify ends the log. The previous
// release applied the same rule on every open, so nothing it had kept is
// lost by the upgrade.
const legacyMaxRecord = 256 << 20

// isLegacyLog reports whether a log starting with head is in the legacy
// format: empty (a shard created but never written), or starting with a
// record length of at most legacyMaxRecord, whose first byte is then at
// most 0x10. The versioned header starts with 'T' (0x54), and no single
// flipped bit makes that 0x10 or less, so a damaged header is never taken
// for the legacy format.
func isLegacyLog(head []byte) bool {
	return len(head) == 0 || head[0] <= byte(legacyMaxRecord>>24)
}

// readLegacyLog applies the records of a legacy log and returns the length
// of its verified prefix.
func readLegacyLog(r io.Reader, apply func([]byte) error) (int64, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var valid int64
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return valid, legacyEOF(err)
		}
		n := binary.BigEndian.Uint32(hdr[0:4])
		if n == 0 || n > legacyMaxRecord {
			return valid, nil
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			return valid, legacyEOF(err)
		}
		if crc32.Checksum(payload, crcTable) != binary.BigEndian.Uint32(hdr[4:8]) {
			return valid, nil
		}
		if err := apply(payload); err != nil {
			return valid, err
		}
		valid += int64(8 + n)
	}
}

// legacyEOF maps the end of the file, whole or mid-record, to nil.
func legacyEOF(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return err
}
