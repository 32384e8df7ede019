package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// fixedClock keeps the oracle from extending its lease in the middle of a
// test, so the bytes a test writes do not depend on the wall clock.
func fixedClock() time.Time { return time.UnixMilli(1_800_000_000_000) }

func TestLargeAppendSurvivesReopen(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("writes and reads 300 MiB")
	}
	const rows, rowSize = 300, 1 << 20
	dir := t.TempDir()
	st := openStore(t, dir)
	if err := st.CreateShard("u1"); err != nil {
		t.Fatal(err)
	}
	var sum uint32
	batch := make([]RowDiff, rows)
	for i := range batch {
		row := bytes.Repeat([]byte{byte(i)}, rowSize)
		binary.BigEndian.PutUint32(row, uint32(i))
		sum = crc32.Update(sum, crcTable, row)
		batch[i] = RowDiff{Row: row, Diff: 1}
	}
	ts, err := st.Append(context.Background(), "u1", batch)
	if err != nil {
		t.Fatal(err)
	}
	batch = nil
	st.Close()

	st = openStore(t, dir)
	defer st.Close()
	got, err := st.Snapshot(context.Background(), "u1", ts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != rows {
		t.Fatalf("%d rows after reopen, want %d", len(got), rows)
	}
	// Snapshot sorts rows; each starts with its index, so the order is the
	// written one.
	var gotSum uint32
	for _, u := range got {
		gotSum = crc32.Update(gotSum, crcTable, u.Row)
	}
	if gotSum != sum {
		t.Fatal("rows differ after reopen")
	}
}

// corruptionLog writes a shard log of five records (the third split over
// three frames) and returns its path and each record's offset.
func corruptionLog(t *testing.T) (dir, path string, offs []int64) {
	t.Helper()
	dir = t.TempDir()
	st, err := Open(dir, Options{Now: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateShard("u1"); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		off, _ := st.LogBytes("u1")
		offs = append(offs, off)
		row := []byte{byte('a' + i)}
		if i == 2 {
			row = bytes.Repeat(row, 2*maxFramePayload+100)
		}
		if _, err := st.Append(context.Background(), "u1", []RowDiff{{Row: row, Diff: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	end, _ := st.LogBytes("u1")
	return dir, shardPath(filepath.Join(dir, "shards"), "u1"), append(offs, end)
}

func TestFlippedByteMidLogIsCorruptionAndInLastRecordIsTornTail(t *testing.T) {
	big := int64(frameHeaderSize + maxFramePayload) // the third record's second frame
	cases := []struct {
		name string
		// at picks the byte to flip from the records' offsets (the last
		// one is the end of the log).
		at func(offs []int64) int64
		// corruptAt is the offset the error must name; -1: a torn tail.
		corruptAt func(offs []int64) int64
		// rows left after a torn tail is cut.
		rows int
	}{
		{"payload of a middle record", func(o []int64) int64 { return o[1] + frameHeaderSize + 3 }, func(o []int64) int64 { return o[1] }, 0},
		{"length of a middle record", func(o []int64) int64 { return o[3] + 2 }, func(o []int64) int64 { return o[3] }, 0},
		{"second frame of a multi-frame middle record", func(o []int64) int64 { return o[2] + big + 40 }, func(o []int64) int64 { return o[2] + big }, 0},
		{"first record", func(o []int64) int64 { return o[0] + 10 }, func(o []int64) int64 { return o[0] }, 0},
		{"file header", func(o []int64) int64 { return 12 }, func(o []int64) int64 { return 0 }, 0},
		{"payload of the last record", func(o []int64) int64 { return o[5] - 1 }, nil, 4},
		{"header of the last record", func(o []int64) int64 { return o[4] + 9 }, nil, 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, path, offs := corruptionLog(t)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b[tc.at(offs)] ^= 0x40
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			st, err := Open(dir, Options{})
			if tc.corruptAt == nil {
				if err != nil {
					t.Fatalf("a damaged last record must be a torn tail: %v", err)
				}
				defer st.Close()
				got, err := st.Snapshot(context.Background(), "u1", st.Oracle().ReadTS())
				if err != nil || len(got) != tc.rows {
					t.Fatalf("%d rows after the torn tail was cut (%v), want %d", len(got), err, tc.rows)
				}
				return
			}
			if err == nil {
				st.Close()
				t.Fatal("open succeeded on a corrupt log")
			}
			var ce *CorruptionError
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) {
				t.Fatalf("open: %v, want a *CorruptionError", err)
			}
			if want := tc.corruptAt(offs); ce.Path != path || ce.Offset != want {
				t.Fatalf("corruption at %s offset %d, want %s offset %d (%v)", ce.Path, ce.Offset, path, want, err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the file: %v", err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, b) {
				t.Fatal("a corrupt log was modified")
			}
		})
	}
}

func TestTornTails(t *testing.T) {
	cases := []struct {
		name string
		tail func(t *testing.T, path string) []byte
	}{
		{"half a frame header", func(t *testing.T, path string) []byte {
			return nextRecord(t, path, encodeBatch(1<<62, []RowDiff{{Row: []byte("x"), Diff: 1}}))[:20]
		}},
		{"all but the last payload byte", func(t *testing.T, path string) []byte {
			rec := nextRecord(t, path, encodeBatch(1<<62, []RowDiff{{Row: []byte("x"), Diff: 1}}))
			return rec[:len(rec)-1]
		}},
		{"a multi-frame record without its final frame", func(t *testing.T, path string) []byte {
			rec := nextRecord(t, path, encodeBatch(1<<62, []RowDiff{{Row: make([]byte, 3*maxFramePayload), Diff: 1}}))
			return rec[:len(rec)-frameHeaderSize-maxFramePayload/2]
		}},
		{"a multi-frame record with a damaged first frame", func(t *testing.T, path string) []byte {
			rec := nextRecord(t, path, encodeBatch(1<<62, []RowDiff{{Row: make([]byte, 3*maxFramePayload), Diff: 1}}))
			rec[frameHeaderSize+100] ^= 1
			return rec
		}},
		{"zeros, as a file extended but not written", func(t *testing.T, path string) []byte {
			return make([]byte, 8192)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, path, offs := corruptionLog(t)
			appendBytes(t, path, tc.tail(t, path))
			st, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if n, _ := st.LogBytes("u1"); n != offs[len(offs)-1] {
				t.Fatalf("log is %d bytes after the torn tail was cut, want %d", n, offs[len(offs)-1])
			}
			got, _ := st.Snapshot(context.Background(), "u1", st.Oracle().ReadTS())
			if len(got) != 5 {
				t.Fatalf("%d rows, want 5", len(got))
			}
		})
	}
}

func TestLegacyDataDirectoryOpensAndIsUpgraded(t *testing.T) {
	dir := t.TempDir()
	copyDir(t, filepath.Join("testdata", "legacy-v0"), dir)
	ctx := context.Background()
	// Written at 1_700_000_000_000 (+1, +2) by the release before the
	// versioned format (see the commit that added the fixture).
	const t1 = frontier.Time(1_700_000_000_000)
	check := func(st *Store) {
		t.Helper()
		got, err := st.Snapshot(ctx, "u1", t1+2)
		if err != nil || fmtUpdates(got) != "b@2 c@1 d@3" {
			t.Fatalf("u1 = %s, %v", fmtUpdates(got), err)
		}
		got, err = st.Snapshot(ctx, "u1", t1)
		if err != nil || fmtUpdates(got) != "a@1 b@2" {
			t.Fatalf("u1 at t1 = %s, %v", fmtUpdates(got), err)
		}
		if !st.HasShard("u2") {
			t.Fatal("empty legacy shard u2 lost")
		}
		since, upper, _ := st.Frontiers("u3")
		if sink, _ := st.IsSink("u3"); !sink || since != 100 || upper != frontier.At(200) {
			t.Fatalf("u3 sink %v since %d upper %v", sink, since, upper)
		}
		got, _ = st.Snapshot(ctx, "u3", 199)
		if fmtUpdates(got) != "x@1" {
			t.Fatalf("u3 = %s", fmtUpdates(got))
		}
		if st.Oracle().ReadTS() < t1+10_000 {
			t.Fatalf("oracle restarted at %d, below the legacy lease", st.Oracle().ReadTS())
		}
	}
	st := openStore(t, dir)
	check(st)
	ts, err := st.Append(ctx, "u1", []RowDiff{{Row: []byte("e"), Diff: 1}})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, id := range []string{"u1", "u2", "u3"} {
		b, _ := os.ReadFile(filepath.Join(dir, "shards", id+".log"))
		if !bytes.HasPrefix(b, []byte(logMagic)) {
			t.Fatalf("%s was not rewritten in the versioned format", id)
		}
	}
	st = openStore(t, dir)
	defer st.Close()
	check(st)
	if got, _ := st.Snapshot(ctx, "u1", ts); fmtUpdates(got) != "b@2 c@1 d@3 e@1" {
		t.Fatalf("u1 after an append = %s", fmtUpdates(got))
	}
}

func TestNewerFormatVersionIsRefused(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	if err := st.CreateShard("u1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(context.Background(), "u1", []RowDiff{{Row: []byte("a"), Diff: 1}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	bump := func(path string, at int) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		binary.BigEndian.PutUint16(b[at:], 9)
		binary.BigEndian.PutUint32(b[16:], crc32.Checksum(b[:16], crcTable))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{filepath.Join(dir, "shards", "u1.log"), filepath.Join(dir, "commit.log"), filepath.Join(dir, "oracle")} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			orig, _ := os.ReadFile(path)
			defer os.WriteFile(path, orig, 0o644)
			bump(path, 6)
			st, err := Open(dir, Options{})
			if err == nil {
				st.Close()
				t.Fatal("opened a file of a newer format")
			}
			if !errors.Is(err, ErrUnsupportedVersion) || !strings.Contains(err.Error(), "version 9") ||
				!strings.Contains(err.Error(), "run the release that wrote") || !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not say what and what to do: %v", err)
			}
		})
	}
}

func TestRequireShardReportsAMissingLog(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	for _, id := range []string{"u1", "u2"} {
		if err := st.CreateShard(id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Append(context.Background(), "u1", []RowDiff{{Row: []byte("a"), Diff: 1}}); err != nil {
		t.Fatal(err)
	}
	// Idempotent: a repeated creation keeps the data.
	if err := st.CreateShard("u1"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	os.Remove(filepath.Join(dir, "shards", "u1.log"))
	st = openStore(t, dir)
	defer st.Close()
	if err := st.RequireShard("u2"); err != nil {
		t.Fatal(err)
	}
	if err := st.RequireShard("u1"); !errors.Is(err, ErrShardMissing) || !strings.Contains(err.Error(), "u1.log") {
		t.Fatalf("RequireShard of a lost shard: %v, want ErrShardMissing naming the file", err)
	}
	if st.HasShard("u1") {
		t.Fatal("RequireShard created the lost shard")
	}
}
