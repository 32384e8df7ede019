package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// commitBase writes a store with table shards u1, u2, u3, one row each,
// to copy before every fault.
func commitBase(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	st, err := Open(dir, Options{FS: noSyncFS{}, Now: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, id := range []string{"u1", "u2", "u3"} {
		if err := st.CreateShard(id); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Append(context.Background(), id, []RowDiff{{Row: []byte("base"), Diff: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// largeRow, inserted and retracted in one batch, makes that batch (and
// the commit record) span two frames.
var largeRow = make([]byte, maxFramePayload/2+100)

// theCommit is the multi-shard commit the fault tests write.
func theCommit(large bool) []TableWrite {
	u2 := []RowDiff{{Row: []byte("new2"), Diff: 1}}
	if large {
		u2 = append(u2, RowDiff{Row: largeRow, Diff: 1}, RowDiff{Row: largeRow, Diff: -1})
	}
	return []TableWrite{
		{Shard: "u1", Rows: []RowDiff{{Row: []byte("new1"), Diff: 1}, {Row: []byte("base"), Diff: -1}}},
		{Shard: "u2", Rows: u2},
		{Shard: "u3", Rows: []RowDiff{{Row: []byte("new3"), Diff: 2}}},
	}
}

// committed reports whether the commit is in every shard (true), in none
// (false), or fails the test when it is in some.
func committed(t *testing.T, st *Store) bool {
	t.Helper()
	ts := st.Oracle().ReadTS()
	var state []string
	for _, id := range []string{"u1", "u2", "u3"} {
		got, err := st.Snapshot(context.Background(), id, ts)
		if err != nil {
			t.Fatal(err)
		}
		state = append(state, fmtUpdates(got))
	}
	switch s := strings.Join(state, " | "); s {
	case "new1@1 | base@1 new2@1 | base@1 new3@2":
		return true
	case "base@1 | base@1 | base@1":
		return false
	default:
		t.Fatalf("a partial commit after the crash: %s", s)
		return false
	}
}

// crashCommit runs theCommit on a copy of base through a FaultFS set up
// by arm, then reopens the copy through the OS and returns the store, the
// commit's error and the fault counts.
func crashCommit(t *testing.T, base string, large bool, arm func(*FaultFS)) (st *Store, commitErr error, crashed bool) {
	t.Helper()
	dir := t.TempDir()
	copyDir(t, base, dir)
	ffs := NewFaultFS(noSyncFS{})
	st, err := Open(dir, Options{FS: ffs, Now: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	arm(ffs)
	_, commitErr = st.AppendMany(context.Background(), theCommit(large))
	st.Close()
	st, err = Open(dir, Options{FS: noSyncFS{}})
	if err != nil {
		t.Fatalf("reopen after the crash: %v", err)
	}
	return st, commitErr, ffs.Crashed()
}

func TestMultiShardCommitIsAllOrNothingAfterACrashAnywhere(t *testing.T) {
	base := commitBase(t)
	for _, large := range []bool{false, true} {
		t.Run(fmt.Sprint("large=", large), func(t *testing.T) {
			if large && (testing.Short() || raceEnabled) {
				t.Skip("slow under -short and the race detector; the small commit covers the same code")
			}
			bytesTotal, opsTotal, boundaries := measureCommit(t, base, large)
			t.Logf("the commit takes %d operations, %d bytes in %d writes", opsTotal, bytesTotal, len(boundaries)/2)
			check := func(t *testing.T, arm func(*FaultFS)) {
				t.Helper()
				st, err, crashed := crashCommit(t, base, large, arm)
				defer st.Close()
				got := committed(t, st)
				if err == nil && !got {
					t.Fatal("an acknowledged commit is gone after reopen")
				}
				if !crashed && err != nil {
					t.Fatalf("commit failed without a crash: %v", err)
				}
				// The store stays usable.
				if _, err := st.AppendMany(context.Background(), []TableWrite{{Shard: "u1", Rows: []RowDiff{{Row: []byte("after"), Diff: 1}}}, {Shard: "u3"}}); err != nil {
					t.Fatalf("commit after recovery: %v", err)
				}
			}
			for k := range opsTotal + 1 {
				check(t, func(f *FaultFS) { f.CrashAfterOps(k) })
				if t.Failed() {
					t.Fatalf("crash before operation %d of %d", k, opsTotal)
				}
			}
			for k := int64(0); k <= bytesTotal; k++ {
				// The small commit at every byte; the large one at the
				// fields of every frame header and write boundary, and
				// every 65521st byte inside payloads.
				if large && !nearBoundary(k, boundaries) && k%65521 != 0 {
					continue
				}
				check(t, func(f *FaultFS) { f.CrashAfterBytes(k) })
				if t.Failed() {
					t.Fatalf("crash at byte %d of %d", k, bytesTotal)
				}
			}
		})
	}
}

// measureCommit runs the commit without faults and returns the bytes and
// operations it takes and where its writes start and end.
func measureCommit(t *testing.T, base string, large bool) (bytesTotal, opsTotal int64, boundaries []int64) {
	t.Helper()
	dir := t.TempDir()
	copyDir(t, base, dir)
	rec := &writeRecorder{FS: noSyncFS{}}
	ffs := NewFaultFS(rec)
	st, err := Open(dir, Options{FS: ffs, Now: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b0, o0 := ffs.Counts()
	rec.start(b0)
	if _, err := st.AppendMany(context.Background(), theCommit(large)); err != nil {
		t.Fatal(err)
	}
	b1, o1 := ffs.Counts()
	return b1 - b0, o1 - o0, rec.stop()
}

// nearBoundary reports whether byte k is at a frame header field of, or
// next to, a write's start or end.
func nearBoundary(k int64, boundaries []int64) bool {
	for _, b := range boundaries {
		switch k - b {
		case -1, 0, 1, 4, 8, 16, 24, 28, frameHeaderSize - 1, frameHeaderSize, frameHeaderSize + 1:
			return true
		}
	}
	return false
}

// writeRecorder is an FS that records where each write starts and ends,
// counted in bytes written since start.
type writeRecorder struct {
	FS
	mu     sync.Mutex
	on     bool
	offset int64
	bounds []int64
}

func (r *writeRecorder) start(written int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on, r.offset, r.bounds = true, -written, nil
}

func (r *writeRecorder) stop() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.bounds
}

func (r *writeRecorder) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := r.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &recordedFile{File: f, r: r}, nil
}

type recordedFile struct {
	File
	r *writeRecorder
}

func (f *recordedFile) Write(p []byte) (int, error) {
	f.r.mu.Lock()
	f.r.offset += int64(len(p))
	if f.r.on {
		f.r.bounds = append(f.r.bounds, f.r.offset-int64(len(p)), f.r.offset)
	}
	f.r.mu.Unlock()
	return f.File.Write(p)
}

func TestENOSPC(t *testing.T) {
	ctx := context.Background()
	writes := map[string]func(st *Store, row string) error{
		"Append": func(st *Store, row string) error {
			_, err := st.Append(ctx, "u1", []RowDiff{{Row: []byte(row), Diff: 1}})
			return err
		},
		"AppendMany": func(st *Store, row string) error {
			_, err := st.AppendMany(ctx, []TableWrite{
				{Shard: "u1", Rows: []RowDiff{{Row: []byte(row), Diff: 1}}},
				{Shard: "u2", Rows: []RowDiff{{Row: []byte(row), Diff: 1}}},
			})
			return err
		},
	}
	// The lost write's rows are 3000 bytes: its commit record (both rows)
	// takes about 6100 bytes, each shard's batch about 3050.
	limits := []struct {
		name       string
		space      int64
		atSync     bool
		commitOnly bool // the commit record fits, a shard's batch does not
	}{
		{"no space at all", 0, false, false},
		{"space for a few bytes", 10, false, false},
		{"space for a frame header", frameHeaderSize + 5, false, false},
		{"space for the commit record only", 7000, false, true},
		{"at fsync", 0, true, false},
		{"at fsync after the commit record", 7000, true, true},
	}
	for name, write := range writes {
		for _, lim := range limits {
			t.Run(name+"/"+lim.name, func(t *testing.T) {
				if lim.commitOnly && name == "Append" {
					t.Skip("a one-shard append has no commit record")
				}
				dir := t.TempDir()
				ffs := NewFaultFS(nil)
				st, err := Open(dir, Options{FS: ffs, Now: fixedClock})
				if err != nil {
					t.Fatal(err)
				}
				for _, id := range []string{"u1", "u2"} {
					if err := st.CreateShard(id); err != nil {
						t.Fatal(err)
					}
				}
				if err := write(st, "first"); err != nil {
					t.Fatal(err)
				}
				ffs.LimitSpace(lim.space, lim.atSync)
				err = write(st, "lost"+strings.Repeat(".", 2996))
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("write on a full disk: %v, want ENOSPC", err)
				}
				// The failed write drew a timestamp; a tick completes it.
				st.Tick()
				for _, id := range []string{"u1", "u2"} {
					got, _ := st.Snapshot(ctx, id, st.Oracle().ReadTS())
					if strings.Contains(fmtUpdates(got), "lost") {
						t.Fatalf("%s shows an unacknowledged write: %s", id, fmtUpdates(got))
					}
				}
				ffs.LimitSpace(-1, false)
				if err := write(st, "second"); err != nil {
					t.Fatalf("write after space returned: %v", err)
				}
				st.Close()
				st = openStore(t, dir)
				defer st.Close()
				got, _ := st.Snapshot(ctx, "u1", st.Oracle().ReadTS())
				if fmtUpdates(got) != "first@1 second@1" {
					t.Fatalf("u1 after reopen = %s, want first and second only", fmtUpdates(got))
				}
			})
		}
	}
}

func TestCompactionRewriteCrashKeepsTheLog(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	st, err := Open(base, Options{Now: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	st.CreateShard("u1")
	var last frontier.Time
	for i := range 200 {
		row := []byte(fmt.Sprint("row", i%10, strings.Repeat(".", 400)))
		if last, err = st.Append(ctx, "u1", []RowDiff{{Row: row, Diff: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := st.Snapshot(ctx, "u1", last)
	if n, _ := st.LogBytes("u1"); n <= rewriteSlack {
		t.Fatalf("log of %d bytes would not be rewritten", n)
	}
	st.Close()
	for k := int64(0); ; k++ {
		dir := t.TempDir()
		copyDir(t, base, dir)
		ffs := NewFaultFS(nil)
		st, err := Open(dir, Options{FS: ffs, Now: fixedClock})
		if err != nil {
			t.Fatal(err)
		}
		ffs.CrashAfterOps(k)
		// Force a rewrite: the log is far past twice its compacted size
		// once the 200 batches consolidate.
		st.shards["u1"].compactedBytes = 0
		cerr := st.AllowCompaction("u1", last)
		st.Close()
		st = openStore(t, dir)
		got, err := st.Snapshot(ctx, "u1", last)
		st.Close()
		if err != nil || fmtUpdates(got) != fmtUpdates(want) {
			t.Fatalf("crash at operation %d of a rewrite: %s, %v; want %s", k, fmtUpdates(got), err, fmtUpdates(want))
		}
		if !ffs.Crashed() {
			if cerr != nil {
				t.Fatal(cerr)
			}
			if k < 3 {
				t.Fatalf("the rewrite took only %d operations", k)
			}
			return
		}
		// The reopen removed the rewrite's temporary file, if any.
		if matches, _ := filepath.Glob(filepath.Join(dir, "shards", "*.tmp")); len(matches) != 0 {
			t.Fatalf("leftover %v after reopen", matches)
		}
	}
}

// A crash while reopening (completing a pending commit) must not break
// all-or-nothing either: crash the commit at every operation, then the
// recovery at every operation, then recover for real.
func TestCommitRecoveryCrashAnywhere(t *testing.T) {
	base := commitBase(t)
	_, opsTotal, _ := measureCommit(t, base, false)
	for k := range opsTotal {
		crashed := t.TempDir()
		copyDir(t, base, crashed)
		ffs := NewFaultFS(noSyncFS{})
		st, err := Open(crashed, Options{FS: ffs, Now: fixedClock})
		if err != nil {
			t.Fatal(err)
		}
		ffs.CrashAfterOps(k)
		st.AppendMany(context.Background(), theCommit(false))
		st.Close()
		for j := int64(0); ; j++ {
			dir := t.TempDir()
			copyDir(t, crashed, dir)
			rfs := NewFaultFS(noSyncFS{})
			rfs.CrashAfterOps(j)
			if st, err := Open(dir, Options{FS: rfs, Now: fixedClock}); err == nil {
				st.Close()
			}
			st, err := Open(dir, Options{FS: noSyncFS{}})
			if err != nil {
				t.Fatalf("commit crashed at operation %d, recovery at %d: reopen: %v", k, j, err)
			}
			committed(t, st)
			st.Close()
			if t.Failed() {
				t.Fatalf("commit crashed at operation %d, recovery at %d", k, j)
			}
			if !rfs.Crashed() {
				break
			}
		}
	}
}
