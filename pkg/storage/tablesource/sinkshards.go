package tablesource

import (
	"context"
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/sink"
	"github.com/tandemdb/tandem/pkg/storage"
)

// SinkStorage is what SinkShards needs of storage: the storage service's
// client, or a *storage.Store.
type SinkStorage interface {
	CompareAndAppend(ctx context.Context, shard string, expected, upper frontier.Time, updates []storage.Update) error
	ReadFrom(ctx context.Context, shard string, from frontier.Time) (updates []storage.Update, upper frontier.Frontier, since frontier.Time, full bool, err error)
}

// SinkShards adapts storage to the engine's sink.Shard, so that the engine
// never imports storage: it converts updates and maps storage's errors to
// the ones the sink writer tells apart.
type SinkShards struct{ Storage SinkStorage }

var _ sink.Shard = SinkShards{}

// CompareAndAppend implements sink.Shard.
func (s SinkShards) CompareAndAppend(ctx context.Context, shard string, expected, upper frontier.Time, updates []sink.Update) error {
	us := make([]storage.Update, len(updates))
	for i, u := range updates {
		us[i] = storage.Update(u)
	}
	return sinkError(s.Storage.CompareAndAppend(ctx, shard, expected, upper, us))
}

// ReadFrom implements sink.Shard.
func (s SinkShards) ReadFrom(ctx context.Context, shard string, from frontier.Time) ([]sink.Update, frontier.Frontier, frontier.Time, bool, error) {
	us, upper, since, full, err := s.Storage.ReadFrom(ctx, shard, from)
	if err != nil {
		return nil, upper, since, full, sinkError(err)
	}
	out := make([]sink.Update, len(us))
	for i, u := range us {
		out[i] = sink.Update(u)
	}
	return out, upper, since, full, nil
}

// sinkError marks storage's errors with the sink's sentinels, keeping the
// original in the chain for logs.
func sinkError(err error) error {
	var mismatch *storage.UpperMismatchError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &mismatch):
		return fmt.Errorf("%w: %w", sink.ErrUpperMismatch, err)
	case errors.Is(err, storage.ErrDropped), errors.Is(err, storage.ErrUnknownShard):
		return fmt.Errorf("%w: %w", sink.ErrShardGone, err)
	}
	return err
}
