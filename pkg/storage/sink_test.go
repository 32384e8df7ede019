package storage

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

func openStore(t *testing.T, dir string) *Store {
	t.Helper()
	st, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCompareAndAppend(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	defer st.Close()
	if err := st.CreateSinkShard("u5", 100); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name            string
		expected, upper frontier.Time
		updates         []Update
		wantErr         func(error) bool
		wantUpper       frontier.Time
	}{
		{"first append", 100, 105, []Update{{Row: []byte("a"), Time: 100, Diff: 1}, {Row: []byte("b"), Time: 103, Diff: 2}}, nil, 105},
		{"stale expected upper loses", 100, 110, []Update{{Row: []byte("x"), Time: 104, Diff: 1}}, isMismatch(105), 105},
		{"update before expected", 105, 110, []Update{{Row: []byte("x"), Time: 104, Diff: 1}}, anyErr, 105},
		{"update at new upper", 105, 110, []Update{{Row: []byte("x"), Time: 110, Diff: 1}}, anyErr, 105},
		{"empty advance", 105, 120, nil, nil, 120},
		{"no-op at upper", 120, 120, nil, nil, 120},
		{"upper backwards", 120, 119, nil, anyErr, 120},
		{"retraction", 120, 121, []Update{{Row: []byte("a"), Time: 120, Diff: -1}}, nil, 121},
	}
	for _, tc := range tests {
		err := st.CompareAndAppend(ctx, "u5", tc.expected, tc.upper, tc.updates)
		switch {
		case tc.wantErr == nil && err != nil:
			t.Fatalf("%s: %v", tc.name, err)
		case tc.wantErr != nil && (err == nil || !tc.wantErr(err)):
			t.Fatalf("%s: error %v not the expected one", tc.name, err)
		}
		if _, upper, _ := st.Frontiers("u5"); upper != frontier.At(tc.wantUpper) {
			t.Fatalf("%s: upper %v, want %d", tc.name, upper, tc.wantUpper)
		}
	}
	// Ticks move table uppers, never a sink's.
	st.Tick()
	if _, upper, _ := st.Frontiers("u5"); upper != frontier.At(121) {
		t.Fatalf("tick moved the sink's upper to %v", upper)
	}
	if _, err := st.Append(ctx, "u5", []RowDiff{{Row: []byte("t"), Diff: 1}}); err == nil {
		t.Fatal("a table write to a sink shard was accepted")
	}
	st.CreateShard("u6")
	if err := st.CompareAndAppend(ctx, "u6", 0, 1, nil); !errors.Is(err, ErrNotSink) {
		t.Fatalf("compare-and-append to a table: %v", err)
	}
	got, _ := st.Snapshot(ctx, "u5", 120)
	if want := "b@2"; fmtUpdates(got) != want {
		t.Fatalf("snapshot at 120 = %s, want %s", fmtUpdates(got), want)
	}
	got, _ = st.Snapshot(ctx, "u5", 104)
	if want := "a@1 b@2"; fmtUpdates(got) != want {
		t.Fatalf("snapshot at 104 = %s, want %s", fmtUpdates(got), want)
	}
	if err := st.DropShard("u5"); err != nil {
		t.Fatal(err)
	}
	if err := st.CompareAndAppend(ctx, "u5", 121, 122, nil); !errors.Is(err, ErrUnknownShard) {
		t.Fatalf("append to a dropped shard: %v", err)
	}
}

func isMismatch(current frontier.Time) func(error) bool {
	return func(err error) bool {
		var m *UpperMismatchError
		return errors.As(err, &m) && m.Current == frontier.At(current)
	}
}

func anyErr(error) bool { return true }

func TestSinkShardSurvivesReopenTornTailAndRewrite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openStore(t, dir)
	if err := st.CreateSinkShard("u5", 10); err != nil {
		t.Fatal(err)
	}
	// An empty append advances the upper durably too: it must not regress.
	if err := st.CompareAndAppend(ctx, "u5", 10, 20, []Update{{Row: []byte("a"), Time: 12, Diff: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := st.CompareAndAppend(ctx, "u5", 20, 30, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// A torn append at the end, as a crash mid-write leaves it.
	appendTornRecord(t, filepath.Join(dir, "shards", "u5.log"), encodeAppend(40, []Update{{Row: []byte("zzz"), Time: 35, Diff: 1}}), 3)

	st = openStore(t, dir)
	sink, err := st.IsSink("u5")
	if err != nil || !sink {
		t.Fatalf("reopened shard is a sink: %v, %v", sink, err)
	}
	since, upper, _ := st.Frontiers("u5")
	if since != 10 || upper != frontier.At(30) {
		t.Fatalf("reopened sink since %d upper %v, want 10 and [30]", since, upper)
	}
	st.Tick()
	if _, upper, _ := st.Frontiers("u5"); upper != frontier.At(30) {
		t.Fatalf("tick moved a recovered sink's upper to %v", upper)
	}
	// Many small appends, then compaction rewrites the log: still a sink
	// with the same upper and contents.
	row := make([]byte, 400)
	upperT := frontier.Time(30)
	for i := range 400 {
		row[0] = byte(i % 5)
		d := int64(1)
		if i%2 == 1 {
			d = -1
		}
		if err := st.CompareAndAppend(ctx, "u5", upperT, upperT+1, []Update{{Row: row, Time: upperT, Diff: d}}); err != nil {
			t.Fatal(err)
		}
		upperT++
	}
	before, _ := st.LogBytes("u5")
	if err := st.AllowCompaction("u5", upperT-1); err != nil {
		t.Fatal(err)
	}
	after, _ := st.LogBytes("u5")
	if after >= before {
		t.Fatalf("compaction did not rewrite the log: %d -> %d bytes", before, after)
	}
	st.Close()
	st = openStore(t, dir)
	defer st.Close()
	if sink, _ := st.IsSink("u5"); !sink {
		t.Fatal("rewritten shard is no longer a sink")
	}
	if _, upper, _ := st.Frontiers("u5"); upper != frontier.At(upperT) {
		t.Fatalf("rewritten sink upper %v, want [%d]", upper, upperT)
	}
	got, _ := st.Snapshot(ctx, "u5", upperT-1)
	if want := "a@1"; fmtUpdates(got) != want {
		t.Fatalf("contents after rewrite = %s, want %s", fmtUpdates(got), want)
	}
}

func TestReadFrom(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	defer st.Close()
	st.CreateSinkShard("u5", 0)
	st.CompareAndAppend(ctx, "u5", 0, 10, []Update{{Row: []byte("a"), Time: 3, Diff: 1}})
	st.CompareAndAppend(ctx, "u5", 10, 20, []Update{{Row: []byte("b"), Time: 15, Diff: 1}, {Row: []byte("a"), Time: 12, Diff: -1}})
	tests := []struct {
		name     string
		compact  frontier.Time
		from     frontier.Time
		want     string
		wantFull bool
	}{
		{"everything", 0, 0, "a@1 a@-1 b@1", true},
		{"the second append", 0, 10, "a@-1 b@1", false},
		{"nothing new", 0, 20, "", false},
		{"from before since", 12, 10, "b@1", true},
		{"from after since", 12, 13, "b@1", false},
	}
	for _, tc := range tests {
		if tc.compact > 0 {
			st.AllowCompaction("u5", tc.compact)
		}
		got, upper, _, full, err := st.ReadFrom(ctx, "u5", tc.from)
		if err != nil {
			t.Fatal(err)
		}
		if fmtUpdates(got) != tc.want || full != tc.wantFull || upper != frontier.At(20) {
			t.Fatalf("%s: got %s full=%v upper %v, want %s full=%v [20]", tc.name, fmtUpdates(got), full, upper, tc.want, tc.wantFull)
		}
	}
}

func TestSinkServiceRoundTrip(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	defer st.Close()
	st.CreateSinkShard("u5", 1)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	NewService(st).Register(srv)
	go srv.Serve(l)
	defer srv.Stop()
	conn, err := grpc.NewClient(l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := NewClient(conn)
	// 3000 rows of 1 KiB: the append and the read are both chunked.
	var ups []Update
	for i := range 3000 {
		r := make([]byte, 1024)
		r[0], r[1] = byte(i>>8), byte(i)
		ups = append(ups, Update{Row: r, Time: 1 + frontier.Time(i%3), Diff: 1})
	}
	if err := c.CompareAndAppend(ctx, "u5", 1, 5, ups); err != nil {
		t.Fatal(err)
	}
	var m *UpperMismatchError
	if err := c.CompareAndAppend(ctx, "u5", 1, 6, nil); !errors.As(err, &m) || m.Current != frontier.At(5) {
		t.Fatalf("stale append through the service: %v", err)
	}
	got, upper, since, full, err := c.ReadFrom(ctx, "u5", 0)
	if err != nil || len(got) != 3000 || upper != frontier.At(5) || since != 1 || !full {
		t.Fatalf("read: %d updates, upper %v, since %d, full %v, %v", len(got), upper, since, full, err)
	}
	if _, _, _, _, err := c.ReadFrom(ctx, "nope", 0); !errors.Is(err, ErrUnknownShard) {
		t.Fatalf("read of an unknown shard: %v", err)
	}
	st.DropShard("u5")
	if err := c.CompareAndAppend(ctx, "u5", 5, 6, nil); !errors.Is(err, ErrUnknownShard) && !errors.Is(err, ErrDropped) {
		t.Fatalf("append to a dropped shard through the service: %v", err)
	}
}
