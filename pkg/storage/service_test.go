package storage

import (
	"context"
	"errors"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

func TestServiceStreamsChunkedSnapshotAndLiveUpdates(t *testing.T) {
	st, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st.CreateShard("u7")
	// 3000 rows of 1 KiB: the snapshot must be split into several messages.
	var rows []RowDiff
	for i := range 3000 {
		r := make([]byte, 1024)
		r[0], r[1] = byte(i>>8), byte(i)
		rows = append(rows, RowDiff{Row: r, Diff: 1})
	}
	t1, err := st.Append(ctx, "u7", rows)
	if err != nil {
		t.Fatal(err)
	}

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

	got := make(chan Progress, 10)
	done := make(chan error, 1)
	go func() { done <- c.Listen(ctx, "u7", t1, func(p Progress) error { got <- p; return nil }) }()
	first := <-got
	if len(first.Updates) != 3000 || first.Upper != frontier.At(t1+1) {
		t.Fatalf("first progress: %d updates, upper %v", len(first.Updates), first.Upper)
	}
	t2, _ := st.Append(ctx, "u7", []RowDiff{{Row: []byte("x"), Diff: -2}})
	p := <-got
	if len(p.Updates) != 1 || p.Updates[0].Time != t2 || p.Updates[0].Diff != -2 {
		t.Fatalf("live progress %+v", p)
	}
	st.DropShard("u7")
	for p := range got {
		if p.Upper.IsClosed() {
			break
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("listen ended with %v after drop", err)
	}
	err = c.Listen(ctx, "nope", 0, func(Progress) error { return nil })
	if s, ok := status.FromError(errors.Unwrap(err)); !ok || s.Code() != codes.NotFound {
		t.Fatalf("unknown shard: %v", err)
	}
}
