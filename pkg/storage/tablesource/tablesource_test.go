package tablesource

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/storage"
)

// flakyLister breaks the first stream after its first progress, as a
// controller restart would.
type flakyLister struct {
	inner *storage.Client
	mu    sync.Mutex
	broke bool
}

func (f *flakyLister) Listen(ctx context.Context, shard string, asOf frontier.Time, fn func(storage.Progress) error) error {
	f.mu.Lock()
	breakIt := !f.broke
	f.broke = true
	f.mu.Unlock()
	if !breakIt {
		return f.inner.Listen(ctx, shard, asOf, fn)
	}
	boom := errors.New("stream broken")
	err := f.inner.Listen(ctx, shard, asOf, func(p storage.Progress) error {
		if err := fn(p); err != nil {
			return err
		}
		return boom
	})
	return err
}

func TestWorkersShareTheTableExactlyOnceAcrossAReconnect(t *testing.T) {
	st, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	st.CreateShard("u3")
	var rows []storage.RowDiff
	for i := range 100 {
		rows = append(rows, storage.RowDiff{Row: row.Pack(row.Int64(int64(i))), Diff: 1})
	}
	t1, err := st.Append(ctx, "u3", rows)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := grpc.NewServer()
	storage.NewService(st).Register(srv)
	go srv.Serve(l)
	defer srv.Stop()
	dialed, conn, err := Dial(l.Addr().String(), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := dialed.Client.(*storage.Client)

	imp := plan.SourceImport{ID: plan.User(3), Connection: plan.SourceConnection{Kind: plan.SourceTable}}
	const peers = 2
	var srcs []render.Source
	for w := range peers {
		f := &Factory{Client: &flakyLister{inner: client}}
		s, err := f.OpenSource(imp, render.SourceContext{Worker: w, Peers: peers, AsOf: frontier.At(t1), Activate: func() {}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		srcs = append(srcs, s)
	}
	// A write after the (broken) first stream: delivered once, after the
	// re-listen.
	time.Sleep(50 * time.Millisecond)
	t2, err := st.Append(ctx, "u3", []storage.RowDiff{{Row: row.Pack(row.Int64(1000)), Diff: 1}})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	deadline := time.Now().Add(30 * time.Second)
	for _, s := range srcs {
		var got []dataflow.Update
		for {
			var upper frontier.Frontier
			got, upper, err = s.Poll(got)
			if err != nil {
				t.Fatal(err)
			}
			if upper.IsComplete(t2) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("source upper %v never passed %d", upper, t2)
			}
			time.Sleep(5 * time.Millisecond)
		}
		for _, u := range got {
			counts[string(u.Val)] += u.Diff
		}
	}
	if len(counts) != 101 {
		t.Fatalf("workers together saw %d distinct rows, want 101", len(counts))
	}
	for r, n := range counts {
		if n != 1 {
			t.Fatalf("row %v delivered with total diff %d, want exactly once", row.Row(r), n)
		}
	}
}
