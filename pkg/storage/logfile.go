package storage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
)

// Every log this package writes (shard logs and the commit log) is
//
//	header | record...
//
// The 24-byte header is
//
//	"TNDLOG" | u16 version | u64 file id | u32 CRC-32C of the first 16 bytes | u32 zero
//
// and a record (a payload of any length: record.go) is written as one or
// more frames of at most maxFramePayload payload bytes, each
//
//	u32 len | u32 flags | u64 seq | u64 record length | u32 CRC-32C of the frame payload |
//	u32 CRC-32C of (file id, frame offset, the previous 28 header bytes) | len payload bytes
//
// flags bit 0 says more frames of the record follow; seq numbers the
// records of the file from 1, so every frame of a record carries it. A
// record is applied only once its final frame verifies: a record split
// over frames is all or nothing.
//
// Torn write or corruption: a log is written append-only and every append
// is fsynced before the next one starts, so a crash can damage only the
// last record. When a frame does not verify, the rest of the file is
// scanned for a frame header that verifies at its own offset; the header
// checksum covers the file's random id and the offset, so user data inside
// a payload (which cannot know the id) or a block of another or an older log
// passes for one only by a 32-bit checksum collision. A header found there of a record other than the damaged one (another
// seq) proves an append after the damaged record was written, so the
// damaged record had been acknowledged: that is corruption, and the log
// refuses to open (*CorruptionError) and is left untouched. Otherwise the
// damage is the torn last record of an unacknowledged write, and it is cut.
const (
	logMagic        = "TNDLOG"
	logVersion      = 1
	logHeaderSize   = 24
	frameHeaderSize = 32
	// maxFramePayload bounds one frame, so a damaged length cannot make a
	// reader allocate much; records are not bounded (they span frames).
	maxFramePayload = 1 << 20
	// smallFrame payloads are copied behind their header to make one write.
	smallFrame = 64 << 10
	frameMore  = 1
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt matches every *CorruptionError.
var ErrCorrupt = errors.New("storage log corrupt")

// ErrUnsupportedVersion is returned for a log written by a newer release.
var ErrUnsupportedVersion = errors.New("unsupported storage format version")

// CorruptionError is a log that cannot be read as written: a record that
// does not verify with valid data after it, a damaged header, or a verified
// record that does not decode. The log is not modified.
type CorruptionError struct {
	Path   string
	Offset int64
	Reason string
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("%s: corrupt at byte offset %d: %s; the file was left as it is: "+
		"restore the data directory from a backup (or move the file aside to give up its data)", e.Path, e.Offset, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptionError) Is(target error) bool { return target == ErrCorrupt }

func encodeLogHeader(fileID uint64) []byte {
	b := make([]byte, 0, logHeaderSize)
	b = append(b, logMagic...)
	b = binary.BigEndian.AppendUint16(b, logVersion)
	b = binary.BigEndian.AppendUint64(b, fileID)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
	return binary.BigEndian.AppendUint32(b, 0)
}

// parseLogHeader returns the file id of a versioned log header.
func parseLogHeader(path string, b []byte) (uint64, error) {
	if len(b) < logHeaderSize {
		return 0, &CorruptionError{Path: path, Reason: "short log header"}
	}
	if crc32.Checksum(b[:16], crcTable) != binary.BigEndian.Uint32(b[16:20]) {
		return 0, &CorruptionError{Path: path, Reason: "log header checksum mismatch"}
	}
	switch v := binary.BigEndian.Uint16(b[6:8]); {
	case v == 0:
		return 0, &CorruptionError{Path: path, Reason: "log header has version 0"}
	case v > logVersion:
		return 0, fmt.Errorf("%s: log format version %d is newer than this release reads (up to %d): "+
			"run the release that wrote this data directory, or a newer one: %w", path, v, logVersion, ErrUnsupportedVersion)
	}
	return binary.BigEndian.Uint64(b[8:16]), nil
}

type frameHeader struct {
	len        int
	more       bool
	seq        uint64
	total      uint64
	payloadCRC uint32
}

func frameHeaderCRC(fileID uint64, off int64, h []byte) uint32 {
	var pre [16]byte
	binary.BigEndian.PutUint64(pre[:8], fileID)
	binary.BigEndian.PutUint64(pre[8:], uint64(off))
	return crc32.Update(crc32.Checksum(pre[:], crcTable), crcTable, h[:28])
}

func putFrameHeader(b []byte, fileID uint64, off int64, h frameHeader) {
	binary.BigEndian.PutUint32(b[0:4], uint32(h.len))
	var flags uint32
	if h.more {
		flags = frameMore
	}
	binary.BigEndian.PutUint32(b[4:8], flags)
	binary.BigEndian.PutUint64(b[8:16], h.seq)
	binary.BigEndian.PutUint64(b[16:24], h.total)
	binary.BigEndian.PutUint32(b[24:28], h.payloadCRC)
	binary.BigEndian.PutUint32(b[28:32], frameHeaderCRC(fileID, off, b))
}

// parseFrameHeader verifies a frame header read at off.
func parseFrameHeader(b []byte, fileID uint64, off int64) (frameHeader, bool) {
	if frameHeaderCRC(fileID, off, b) != binary.BigEndian.Uint32(b[28:32]) {
		return frameHeader{}, false
	}
	h := frameHeader{
		len:        int(binary.BigEndian.Uint32(b[0:4])),
		seq:        binary.BigEndian.Uint64(b[8:16]),
		total:      binary.BigEndian.Uint64(b[16:24]),
		payloadCRC: binary.BigEndian.Uint32(b[24:28]),
	}
	flags := binary.BigEndian.Uint32(b[4:8])
	h.more = flags&frameMore != 0
	if h.len == 0 || h.len > maxFramePayload || flags&^frameMore != 0 {
		return frameHeader{}, false
	}
	return h, true
}

// writeRecord writes payload as the frames of record seq, the first at
// file offset off, and returns the bytes written.
func writeRecord(w io.Writer, fileID uint64, off int64, seq uint64, payload []byte) (int64, error) {
	if len(payload) == 0 {
		return 0, errors.New("empty log record")
	}
	var written int64
	for rest := payload; len(rest) > 0; {
		chunk := rest[:min(len(rest), maxFramePayload)]
		rest = rest[len(chunk):]
		h := frameHeader{len: len(chunk), more: len(rest) > 0, seq: seq, total: uint64(len(payload)),
			payloadCRC: crc32.Checksum(chunk, crcTable)}
		buf := make([]byte, frameHeaderSize, frameHeaderSize+min(len(chunk), smallFrame))
		putFrameHeader(buf, fileID, off+written, h)
		if len(chunk) <= smallFrame {
			if _, err := w.Write(append(buf, chunk...)); err != nil {
				return written, err
			}
		} else {
			if _, err := w.Write(buf); err != nil {
				return written, err
			}
			if _, err := w.Write(chunk); err != nil {
				return written, err
			}
		}
		written += int64(frameHeaderSize + len(chunk))
	}
	return written, nil
}

// frameReader reads the records of a versioned log in order.
type frameReader struct {
	br     *bufio.Reader
	off    int64 // file offset of the next byte of br
	size   int64
	fileID uint64
}

// record reads record seq. On failure it returns the offset of the frame
// that did not verify and why.
func (r *frameReader) record(seq uint64) (payload []byte, badAt int64, reason string) {
	var hdr [frameHeaderSize]byte
	for first := true; ; first = false {
		at := r.off
		if _, err := io.ReadFull(r.br, hdr[:]); err != nil {
			return nil, at, "short frame header"
		}
		h, ok := parseFrameHeader(hdr[:], r.fileID, at)
		switch {
		case !ok:
			return nil, at, "frame header does not verify"
		case h.seq != seq:
			return nil, at, fmt.Sprintf("frame of record %d where record %d was due", h.seq, seq)
		case first && h.total > uint64(r.size-at):
			return nil, at, "record longer than the rest of the file"
		case first:
			payload = make([]byte, 0, h.total)
		case h.total != uint64(cap(payload)):
			return nil, at, "frame disagrees with its record's length"
		}
		if uint64(len(payload)+h.len) > h.total {
			return nil, at, "frames longer than their record"
		}
		chunk := payload[len(payload) : len(payload)+h.len]
		if _, err := io.ReadFull(r.br, chunk); err != nil {
			return nil, at, "short frame payload"
		}
		if crc32.Checksum(chunk, crcTable) != h.payloadCRC {
			return nil, at, "frame payload checksum mismatch"
		}
		payload = payload[:len(payload)+h.len]
		r.off += int64(frameHeaderSize + h.len)
		if !h.more {
			if uint64(len(payload)) != h.total {
				return nil, at, "record shorter than its length"
			}
			return payload, 0, ""
		}
	}
}

// replayResult is what replaying a versioned log found.
type replayResult struct {
	end  int64  // length of the whole records
	seq  uint64 // the last whole record's seq
	torn int64  // bytes of a torn last record after end
}

// replayLog applies every whole record of a versioned log in order; see
// the comment at the top of this file for how a torn last record is told
// from corruption.
func replayLog(f io.ReaderAt, path string, size int64, fileID uint64, apply func([]byte) error) (replayResult, error) {
	r := &frameReader{
		br:  bufio.NewReaderSize(io.NewSectionReader(f, logHeaderSize, size-logHeaderSize), 1<<16),
		off: logHeaderSize, size: size, fileID: fileID,
	}
	var seq uint64
	for r.off < size {
		start := r.off
		payload, bad, reason := r.record(seq + 1)
		if reason != "" {
			later, found, err := findOtherRecord(f, size, fileID, bad, seq+1)
			if err != nil {
				return replayResult{}, fmt.Errorf("%s: scan after a damaged record at offset %d: %w", path, bad, err)
			}
			if found {
				return replayResult{}, &CorruptionError{Path: path, Offset: bad, Reason: fmt.Sprintf(
					"%s, yet record data of a later write verifies at offset %d", reason, later)}
			}
			return replayResult{end: start, seq: seq, torn: size - start}, nil
		}
		if err := apply(payload); err != nil {
			return replayResult{}, &CorruptionError{Path: path, Offset: start, Reason: fmt.Sprintf("record %d verifies but does not decode: %v", seq+1, err)}
		}
		seq++
	}
	return replayResult{end: r.off, seq: seq}, nil
}

// findOtherRecord scans the file from off for a frame header that verifies
// at its own offset and belongs to a record other than seq. Frames of
// record seq itself (the possibly torn one) are skipped.
func findOtherRecord(f io.ReaderAt, size int64, fileID uint64, off int64, seq uint64) (int64, bool, error) {
	buf := make([]byte, min(1<<20, max(0, size-off))+frameHeaderSize)
	for base := off; base+frameHeaderSize <= size; {
		n, err := f.ReadAt(buf, base)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, false, err
		}
		if n < frameHeaderSize {
			return 0, false, nil
		}
		next := base + int64(n-frameHeaderSize+1)
		for i := 0; i+frameHeaderSize <= n; i++ {
			b := buf[i : i+frameHeaderSize]
			// Cheap filter before the checksum: a frame's length is below
			// 16 MiB and not zero, its flags 0 or 1.
			if b[0] != 0 || b[1]|b[2]|b[3] == 0 || b[4]|b[5]|b[6] != 0 || b[7] > frameMore {
				continue
			}
			h, ok := parseFrameHeader(b, fileID, base+int64(i))
			if !ok {
				continue
			}
			if h.seq != seq {
				return base + int64(i), true, nil
			}
			next = base + int64(i+frameHeaderSize+h.len)
			break
		}
		base = next
	}
	return 0, false, nil
}

// logFile is an open versioned log, appended to at its end.
type logFile struct {
	fsys    FS
	path    string
	f       File
	id      uint64
	size    int64  // bytes of whole, acknowledged records (and the header)
	seq     uint64 // the last record's seq
	metrics *Metrics
	// broken is set when a failed append could not be rolled back; the
	// log then refuses appends rather than risk an unreadable file.
	broken error
}

// append writes payload as one record and fsyncs it. On failure nothing of
// it stays in the file.
func (l *logFile) append(payload []byte) error {
	if l.broken != nil {
		return fmt.Errorf("%s: %w", l.path, l.broken)
	}
	n, err := writeRecord(l.f, l.id, l.size, l.seq+1, payload)
	if err != nil {
		err = fmt.Errorf("append to %s: %w", l.path, err)
	} else if serr := l.metrics.timeSync(l.f.Sync); serr != nil {
		err = fmt.Errorf("sync %s: %w", l.path, serr)
	}
	if err != nil {
		l.metrics.appendFailed()
		if rerr := l.cutTo(l.size, l.seq); rerr != nil {
			l.broken = fmt.Errorf("log could not be rolled back after %v: %w", err, rerr)
		}
		return err
	}
	l.size += n
	l.seq++
	l.metrics.addLogBytes(n)
	return nil
}

// logMark is a log's length and last seq, to cut back to.
type logMark struct {
	size int64
	seq  uint64
}

func (l *logFile) mark() logMark { return logMark{l.size, l.seq} }

// cutTo truncates the log back to an earlier length (and its seq), durably.
func (l *logFile) cutTo(size int64, seq uint64) error {
	if err := l.f.Truncate(size); err != nil {
		return err
	}
	if _, err := l.f.Seek(size, io.SeekStart); err != nil {
		return err
	}
	if err := l.metrics.timeSync(l.f.Sync); err != nil {
		return err
	}
	l.metrics.addLogBytes(size - l.size)
	l.size, l.seq = size, seq
	return nil
}

func (l *logFile) close() error {
	l.metrics.addLogBytes(-l.size)
	l.size = 0
	return l.f.Close()
}

// openLog opens the log at path, replays its records into apply and cuts a
// torn last record. A file without the versioned header is replayed as the
// legacy format (legacy.go) and reported with legacy set: the caller
// rewrites it with createLog.
func openLog(fsys FS, path string, m *Metrics, apply func([]byte) error) (l *logFile, legacy bool, torn int64, err error) {
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, false, 0, err
	}
	defer func() {
		if err != nil {
			f.Close()
			if errors.Is(err, ErrCorrupt) {
				m.corruptionDetected()
			}
		}
	}()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, 0, err
	}
	size := fi.Size()
	head := make([]byte, min(size, logHeaderSize))
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, false, 0, err
	}
	if isLegacyLog(head) {
		valid, err := readLegacyLog(io.NewSectionReader(f, 0, size), apply)
		if err != nil {
			return nil, false, 0, &CorruptionError{Path: path, Offset: valid, Reason: err.Error()}
		}
		return &logFile{fsys: fsys, path: path, f: f, metrics: m}, true, size - valid, nil
	}
	if string(head[:min(len(head), len(logMagic))]) != logMagic {
		return nil, false, 0, &CorruptionError{Path: path, Reason: "neither a versioned log header nor the legacy format"}
	}
	id, err := parseLogHeader(path, head)
	if err != nil {
		return nil, false, 0, err
	}
	res, err := replayLog(f, path, size, id, apply)
	if err != nil {
		return nil, false, 0, err
	}
	l = &logFile{fsys: fsys, path: path, f: f, id: id, size: size, seq: res.seq, metrics: m}
	m.addLogBytes(size)
	if res.torn > 0 {
		m.tornTail()
		if err := l.cutTo(res.end, res.seq); err != nil {
			return nil, false, 0, fmt.Errorf("%s: cut torn tail: %w", path, err)
		}
	} else if _, err := f.Seek(size, io.SeekStart); err != nil {
		return nil, false, 0, err
	}
	return l, false, res.torn, nil
}

// createLog atomically replaces (or creates) the log at path with a new
// file holding the records emit adds, and opens it for appends. On error,
// replaced says whether path may already be the new file.
func createLog(fsys FS, path string, m *Metrics, emit func(add func(payload []byte) error) error) (l *logFile, replaced bool, err error) {
	id := rand.Uint64()
	var size int64
	var seq uint64
	replaced, err = replaceFile(fsys, path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		if _, err := bw.Write(encodeLogHeader(id)); err != nil {
			return err
		}
		size = logHeaderSize
		err := emit(func(payload []byte) error {
			n, err := writeRecord(bw, id, size, seq+1, payload)
			size += n
			seq++
			return err
		})
		if err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return nil, replaced, fmt.Errorf("write %s: %w", path, err)
	}
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, true, err
	}
	if _, err := f.Seek(size, io.SeekStart); err != nil {
		f.Close()
		return nil, true, err
	}
	m.addLogBytes(size)
	return &logFile{fsys: fsys, path: path, f: f, id: id, size: size, seq: seq, metrics: m}, true, nil
}
