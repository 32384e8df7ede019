package storage

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv("STORAGE_HELPER_WRITER"); dir != "" {
		helperWriter(dir)
		return
	}
	os.Exit(m.Run())
}

// helperWriter appends row i to shard "u1" forever, printing "acked i" after
// each acknowledged write, until it is killed.
func helperWriter(dir string) {
	st, err := Open(dir, Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	if err := st.CreateShard("u1"); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for i := 0; ; i++ {
		if _, err := st.Append(context.Background(), "u1", []RowDiff{{Row: []byte(strconv.Itoa(i)), Diff: 1}}); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Printf("acked %d\n", i)
	}
}

// fakeClock is a settable wall clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

func TestOracleMonotonicAcrossRestartsAndClockSteps(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{t: time.UnixMilli(1_000_000)}
	o, err := OpenOracle(filepath.Join(dir, "oracle"), clock.now)
	if err != nil {
		t.Fatal(err)
	}
	var last frontier.Time
	next := func(o *Oracle) frontier.Time {
		t.Helper()
		ts, err := o.WriteTS()
		if err != nil {
			t.Fatal(err)
		}
		if ts <= last {
			t.Fatalf("timestamp %d not after %d", ts, last)
		}
		last = ts
		return ts
	}
	if ts := next(o); ts != 1_000_000 {
		t.Fatalf("first timestamp %d, want the wall clock 1000000", ts)
	}
	next(o) // same millisecond: still strictly increasing
	clock.set(time.UnixMilli(1_000_500))
	if ts := next(o); ts != 1_000_500 {
		t.Fatalf("timestamp %d did not follow the wall clock", ts)
	}
	// Handing out a time is not completing a write: ReadTS moves only with
	// ApplyWrite and ApplyRead, and never backwards.
	if o.ReadTS() != 0 {
		t.Fatalf("ReadTS %d before any write completed, want 0", o.ReadTS())
	}
	o.ApplyWrite(last)
	o.ApplyWrite(last - 1)
	if o.ReadTS() != last {
		t.Fatalf("ReadTS %d, want the last completed write %d", o.ReadTS(), last)
	}
	// A strict read ahead of every handed-out time: later writes come after it.
	read := last + 100
	o.ApplyRead(read)
	if ts := next(o); ts <= read {
		t.Fatalf("write at %d, not after the read at %d", ts, read)
	}
	// The clock steps back and the process restarts: still no reuse.
	clock.set(time.UnixMilli(900_000))
	o, err = OpenOracle(filepath.Join(dir, "oracle"), clock.now)
	if err != nil {
		t.Fatal(err)
	}
	next(o)
	next(o)
}

func TestAppendReopenAndTornTail(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := st.CreateShard("u1"); err != nil {
		t.Fatal(err)
	}
	t1, err := st.Append(ctx, "u1", []RowDiff{{Row: []byte("a"), Diff: 1}, {Row: []byte("b"), Diff: 2}})
	if err != nil {
		t.Fatal(err)
	}
	t2, err := st.Append(ctx, "u1", []RowDiff{{Row: []byte("a"), Diff: -1}})
	if err != nil {
		t.Fatal(err)
	}
	_, upper, _ := st.Frontiers("u1")
	if upper != frontier.At(t2+1) {
		t.Fatalf("upper %v after write at %d", upper, t2)
	}
	st.Close()
	// A torn half-record at the end, as a crash mid-write leaves it.
	appendTornRecord(t, filepath.Join(dir, "shards", "u1.log"), encodeBatch(t2+5, []RowDiff{{Row: []byte("zzz"), Diff: 1}}), 2)

	st, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, upper, _ = st.Frontiers("u1")
	if !upper.IsComplete(t2) {
		t.Fatalf("upper regressed across reopen: %v", upper)
	}
	got, err := st.Snapshot(ctx, "u1", t1)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a@1 b@2"; fmtUpdates(got) != want {
		t.Fatalf("snapshot at t1 = %s, want %s", fmtUpdates(got), want)
	}
	got, _ = st.Snapshot(ctx, "u1", t2)
	if want := "b@2"; fmtUpdates(got) != want {
		t.Fatalf("snapshot at t2 = %s, want %s", fmtUpdates(got), want)
	}
	// The torn tail was cut: a new write after reopen is readable.
	t3, err := st.Append(ctx, "u1", []RowDiff{{Row: []byte("c"), Diff: 1}})
	if err != nil || t3 <= t2 {
		t.Fatalf("append after reopen: %d, %v", t3, err)
	}
	st.Close()
	st, _ = Open(dir, Options{})
	defer st.Close()
	got, _ = st.Snapshot(ctx, "u1", t3)
	if want := "b@2 c@1"; fmtUpdates(got) != want {
		t.Fatalf("snapshot at t3 = %s, want %s", fmtUpdates(got), want)
	}
}

func fmtUpdates(us []Update) string {
	s := ""
	for i, u := range us {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s@%d", u.Row, u.Diff)
	}
	return s
}

func TestCompactionRewritesLogAndKeepsReadsAtSince(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st.CreateShard("u1")
	var last frontier.Time
	row := make([]byte, 500)
	for i := range 300 {
		// Insert and retract the same row: the consolidated shard is tiny.
		row[0] = byte(i % 7)
		if last, err = st.Append(ctx, "u1", []RowDiff{{Row: row, Diff: 1}}); err != nil {
			t.Fatal(err)
		}
		if last, err = st.Append(ctx, "u1", []RowDiff{{Row: row, Diff: -1}}); err != nil {
			t.Fatal(err)
		}
	}
	keep, _ := st.Append(ctx, "u1", []RowDiff{{Row: []byte("kept"), Diff: 3}})
	before, _ := st.LogBytes("u1")
	if err := st.AllowCompaction("u1", keep); err != nil {
		t.Fatal(err)
	}
	after, _ := st.LogBytes("u1")
	if after >= before/10 {
		t.Fatalf("log %d bytes after compaction, %d before: not rewritten", after, before)
	}
	if _, err := st.Snapshot(ctx, "u1", last); !errors.Is(err, ErrCompacted) {
		t.Fatalf("read before since: %v, want ErrCompacted", err)
	}
	st.Close()
	st, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	since, _, _ := st.Frontiers("u1")
	if since != keep {
		t.Fatalf("since after reopen %d, want %d", since, keep)
	}
	got, err := st.Snapshot(ctx, "u1", keep)
	if err != nil || fmtUpdates(got) != "kept@3" {
		t.Fatalf("snapshot at since after reopen = %s, %v", fmtUpdates(got), err)
	}
}

func TestListenSnapshotThenLiveUpdatesAndTicks(t *testing.T) {
	st, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st.CreateShard("u1")
	t1, _ := st.Append(ctx, "u1", []RowDiff{{Row: []byte("a"), Diff: 1}})
	t2, _ := st.Append(ctx, "u1", []RowDiff{{Row: []byte("b"), Diff: 1}})

	got := make(chan Progress, 100)
	done := make(chan error, 1)
	go func() {
		done <- st.Listen(ctx, "u1", t1, func(p Progress) error { got <- p; return nil })
	}()
	first := <-got
	if len(first.Updates) != 2 || first.Updates[0].Time != t1 || first.Updates[1].Time != t2 || first.Upper != frontier.At(t2+1) {
		t.Fatalf("first progress %+v", first)
	}
	t3, _ := st.Append(ctx, "u1", []RowDiff{{Row: []byte("a"), Diff: -1}})
	p := <-got
	if len(p.Updates) != 1 || p.Updates[0].Time != t3 || p.Updates[0].Diff != -1 || p.Upper != frontier.At(t3+1) {
		t.Fatalf("live progress %+v", p)
	}
	if err := st.Tick(); err != nil {
		t.Fatal(err)
	}
	p = <-got
	if len(p.Updates) != 0 || !frontier.At(t3+1).Less(p.Upper) {
		t.Fatalf("tick progress %+v", p)
	}
	// Uppers only advance.
	if err := st.DropShard("u1"); err != nil {
		t.Fatal(err)
	}
	p = <-got
	if !p.Upper.IsClosed() {
		t.Fatalf("drop progress %+v", p)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestListenWaitsForCompleteSnapshotAndCancels(t *testing.T) {
	st, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.CreateShard("u1")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, upper, _ := st.Frontiers("u1")
	ut, _ := upper.Time()
	err = st.Listen(ctx, "u1", ut+1_000_000, func(Progress) error { t.Error("snapshot sent before complete"); return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("listen in the future: %v", err)
	}
	if _, err := st.Append(context.Background(), "nope", nil); !errors.Is(err, ErrUnknownShard) {
		t.Fatalf("append to unknown shard: %v", err)
	}
}

// TestAcknowledgedWritesSurviveKill9 runs a writer process, kills it with
// SIGKILL while it writes, and checks every write it acknowledged.
func TestAcknowledgedWritesSurviveKill9(t *testing.T) {
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "STORAGE_HELPER_WRITER="+dir)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	acked := -1
	for sc.Scan() {
		var i int
		if _, err := fmt.Sscanf(sc.Text(), "acked %d", &i); err != nil {
			t.Fatalf("writer: %s", sc.Text())
		}
		acked = i
		if acked == 300 {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Drain what the writer printed before it died: those were acked too.
	for sc.Scan() {
		var i int
		if _, err := fmt.Sscanf(sc.Text(), "acked %d", &i); err == nil {
			acked = i
		}
	}
	_ = cmd.Wait()

	st, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, upper, _ := st.Frontiers("u1")
	ut, _ := upper.Time()
	got, err := st.Snapshot(context.Background(), "u1", ut-1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, u := range got {
		seen[string(u.Row)] = true
	}
	for i := 0; i <= acked; i++ {
		if !seen[strconv.Itoa(i)] {
			t.Fatalf("acknowledged write %d lost after kill -9 (acked up to %d, recovered %d rows)", i, acked, len(got))
		}
	}
	t.Logf("acked %d writes before kill -9; recovered %d rows", acked+1, len(got))
}

func TestConsolidate(t *testing.T) {
	tests := []struct {
		in   []Update
		want string
	}{
		{[]Update{{Row: []byte("a"), Diff: 1}, {Row: []byte("a"), Diff: -1}}, ""},
		{[]Update{{Row: []byte("b"), Diff: 1}, {Row: []byte("a"), Diff: 2}, {Row: []byte("b"), Diff: 1}}, "a@2 b@2"},
		{[]Update{{Row: []byte("a"), Diff: 1}, {Row: []byte("a"), Diff: -1}, {Row: []byte("a"), Diff: 1}}, "a@1"},
	}
	for _, tt := range tests {
		if got := fmtUpdates(Consolidate(tt.in)); got != tt.want {
			t.Errorf("consolidate = %q, want %q", got, tt.want)
		}
	}
}
