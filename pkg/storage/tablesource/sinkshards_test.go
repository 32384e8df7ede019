package tablesource

import (
	"context"
	"errors"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/sink"
	"github.com/tandemdb/tandem/pkg/storage"
)

// TestSinkShardsMapsErrors: the sink writer tells a lost race from a
// dropped shard only through the sentinels SinkShards maps storage's
// errors to.
func TestSinkShardsMapsErrors(t *testing.T) {
	st, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateSinkShard("u1", 10); err != nil {
		t.Fatal(err)
	}
	s := SinkShards{Storage: st}
	ctx := context.Background()
	row := []sink.Update{{Row: []byte("a"), Time: 10, Diff: 1}}
	if err := s.CompareAndAppend(ctx, "u1", 10, 20, row); err != nil {
		t.Fatalf("first append: %v", err)
	}
	if err := s.CompareAndAppend(ctx, "u1", 10, 30, row); !errors.Is(err, sink.ErrUpperMismatch) {
		t.Fatalf("append at a stale upper: %v, want ErrUpperMismatch", err)
	}
	if err := s.CompareAndAppend(ctx, "nope", 0, 1, nil); !errors.Is(err, sink.ErrShardGone) {
		t.Fatalf("append to an unknown shard: %v, want ErrShardGone", err)
	}
	if _, _, _, _, err := s.ReadFrom(ctx, "nope", 0); !errors.Is(err, sink.ErrShardGone) {
		t.Fatalf("read of an unknown shard: %v, want ErrShardGone", err)
	}
	got, upper, _, _, err := s.ReadFrom(ctx, "u1", 0)
	if err != nil || len(got) != 1 || string(got[0].Row) != "a" || upper.String() != frontier.At(20).String() {
		t.Fatalf("ReadFrom = %v, %v, %v", got, upper, err)
	}
}
