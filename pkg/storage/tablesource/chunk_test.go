package tablesource

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/storage"
)

// snapshotLister sends a snapshot of n rows at asOf in one progress
// message, as storage does, then a progress with no update, and waits.
type snapshotLister struct {
	n    int
	sent chan struct{}
}

func (l *snapshotLister) Listen(ctx context.Context, _ string, asOf frontier.Time, fn func(storage.Progress) error) error {
	ups := make([]storage.Update, l.n)
	for i := range ups {
		ups[i] = storage.Update{Row: row.Pack(row.Int64(int64(i))), Time: asOf, Diff: 1}
	}
	if err := fn(storage.Progress{Updates: ups, Upper: frontier.At(asOf + 1)}); err != nil {
		return err
	}
	if err := fn(storage.Progress{Upper: frontier.At(asOf + 2)}); err != nil {
		return err
	}
	close(l.sent)
	<-ctx.Done()
	return nil
}

// TestSnapshotArrivesInChunks: a table's snapshot, which storage sends in
// one message, is returned by Poll at most a chunk of updates at a time,
// the upper held before the snapshot's time until its last update is
// returned and the source reactivating itself meanwhile; with no chunk
// (0, the bound off) one Poll returns it all.
func TestSnapshotArrivesInChunks(t *testing.T) {
	const n, asOf = 10_000, 5
	for _, chunk := range []int{1000, 0} {
		t.Run(fmt.Sprintf("chunk=%d", chunk), func(t *testing.T) {
			l := &snapshotLister{n: n, sent: make(chan struct{})}
			activations := 0
			f := &Factory{Client: l, Log: logr.Discard()}
			imp := plan.SourceImport{ID: plan.User(1), Connection: plan.SourceConnection{Kind: plan.SourceTable}}
			src, err := f.OpenSource(imp, render.SourceContext{Worker: 0, Peers: 1, AsOf: frontier.At(asOf),
				Activate: func() { activations++ }, Chunk: func() int { return chunk }})
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			<-l.sent
			activations = 0 // the listener's own
			total, polls, most := 0, 0, 0
			for {
				ups, upper, err := src.Poll(nil)
				if err != nil {
					t.Fatal(err)
				}
				polls++
				total += len(ups)
				most = max(most, len(ups))
				if total < n && upper.IsComplete(asOf) {
					t.Fatalf("upper %v with %d of %d snapshot updates returned", upper, total, n)
				}
				if upper == frontier.At(asOf+2) {
					break
				}
				if polls > 2*n {
					t.Fatal("the snapshot never completed")
				}
			}
			if total != n {
				t.Fatalf("%d updates, want %d", total, n)
			}
			switch {
			case chunk > 0 && most > chunk:
				t.Fatalf("a Poll returned %d updates, chunk %d", most, chunk)
			case chunk > 0 && (polls < n/chunk || activations < n/chunk-1):
				t.Fatalf("%d polls and %d reactivations for %d updates in chunks of %d", polls, activations, n, chunk)
			case chunk == 0 && polls != 1:
				t.Fatalf("unbounded: %d polls, want 1", polls)
			}
		})
	}
}
