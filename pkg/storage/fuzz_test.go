package storage

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReplayLog feeds arbitrary bytes to the log decoders (header, frames,
// the torn-or-corrupt scan, the legacy format, record payloads and commit
// records): they may reject the input but must never panic, nor allocate
// beyond what the input can justify. Seeds: testdata/fuzz/FuzzReplayLog
// and the logs below.
func FuzzReplayLog(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var c logContents
		apply := func(p []byte) error {
			if len(p) > 0 && p[0] == recordCommit {
				_, _, err := decodeCommit(p)
				return err
			}
			return c.apply(p)
		}
		if isLegacyLog(b[:min(len(b), logHeaderSize)]) {
			readLegacyLog(bytes.NewReader(b), apply)
			return
		}
		id, err := parseLogHeader("fuzz", b)
		if err != nil {
			return
		}
		res, err := replayLog(bytes.NewReader(b), "fuzz", int64(len(b)), id, apply)
		if err == nil && (res.end > int64(len(b)) || res.end+res.torn != int64(len(b))) {
			t.Fatalf("replay result %+v for %d bytes", res, len(b))
		}
	})
}

// fuzzSeeds returns logs the store writes: a table shard, a sink shard, a
// commit log with a pending commit, and the legacy fixture.
func fuzzSeeds(f testing.TB) [][]byte {
	dir := f.TempDir()
	var seeds [][]byte
	add := func(records ...[]byte) {
		path := filepath.Join(dir, "seed.log")
		l, _, err := createLog(OSFS{}, path, nil, func(add func([]byte) error) error {
			for _, r := range records {
				if err := add(r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			f.Fatal(err)
		}
		l.close()
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	rows := []RowDiff{{Row: []byte("a"), Diff: 1}, {Row: []byte("bb"), Diff: -2}}
	add(encodeSince(5), encodeBatch(7, rows), encodeBatch(9, nil))
	add(encodeSince(10), encodeAppend(20, []Update{{Row: []byte("x"), Time: 12, Diff: 1}}))
	add(encodeCommit(30, []TableWrite{{Shard: "u1", Rows: rows}, {Shard: "u2", Rows: rows[:1]}}))
	legacy, err := os.ReadFile(filepath.Join("testdata", "legacy-v0", "shards", "u1.log"))
	if err != nil {
		f.Fatal(err)
	}
	return append(seeds, legacy)
}
