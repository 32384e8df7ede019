package storage

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// nextRecord frames payload as the next record of the versioned log at
// path, as the store would append it.
func nextRecord(t *testing.T, path string, payload []byte) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	id := binary.BigEndian.Uint64(b[8:16])
	res, err := replayLog(bytes.NewReader(b), path, int64(len(b)), id, func([]byte) error { return nil })
	if err != nil || res.torn != 0 {
		t.Fatalf("replay %s: %+v, %v", path, res, err)
	}
	var buf bytes.Buffer
	if _, err := writeRecord(&buf, id, int64(len(b)), res.seq+1, payload); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// appendTornRecord appends payload as the log's next record less its last
// drop bytes, as a crash in the middle of the write leaves it.
func appendTornRecord(t *testing.T, path string, payload []byte, drop int) {
	t.Helper()
	rec := nextRecord(t, path, payload)
	appendBytes(t, path, rec[:len(rec)-drop])
}

func appendBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// copyDir copies a directory tree of regular files.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// noSyncFS is the OS file system without fsyncs, for tests that simulate
// crashes (a FaultFS keeps a prefix of the writes; the page cache holds it)
// and need many iterations.
type noSyncFS struct{ OSFS }

func (noSyncFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := OSFS{}.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

func (noSyncFS) SyncDir(string) error { return nil }

type noSyncFile struct{ File }

func (noSyncFile) Sync() error { return nil }
