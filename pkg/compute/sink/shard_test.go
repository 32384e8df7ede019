package sink

import (
	"context"
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/storage"
)

// storeShard adapts a *storage.Store to Shard in tests, as the replica's
// tablesource.SinkShards adapts the storage client (this package's tests
// cannot import that adapter: it imports this package).
type storeShard struct{ st *storage.Store }

func (s storeShard) CompareAndAppend(ctx context.Context, shard string, expected, upper frontier.Time, updates []Update) error {
	err := s.st.CompareAndAppend(ctx, shard, expected, upper, storageUpdates(updates))
	var mismatch *storage.UpperMismatchError
	switch {
	case errors.As(err, &mismatch):
		return fmt.Errorf("%w: %w", ErrUpperMismatch, err)
	case errors.Is(err, storage.ErrDropped), errors.Is(err, storage.ErrUnknownShard):
		return fmt.Errorf("%w: %w", ErrShardGone, err)
	}
	return err
}

func (s storeShard) ReadFrom(ctx context.Context, shard string, from frontier.Time) ([]Update, frontier.Frontier, frontier.Time, bool, error) {
	us, upper, since, full, err := s.st.ReadFrom(ctx, shard, from)
	if errors.Is(err, storage.ErrDropped) || errors.Is(err, storage.ErrUnknownShard) {
		err = fmt.Errorf("%w: %w", ErrShardGone, err)
	}
	out := make([]Update, len(us))
	for i, u := range us {
		out[i] = Update(u)
	}
	return out, upper, since, full, err
}

func storageUpdates(us []Update) []storage.Update {
	out := make([]storage.Update, len(us))
	for i, u := range us {
		out[i] = storage.Update(u)
	}
	return out
}
