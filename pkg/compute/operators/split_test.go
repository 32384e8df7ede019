package operators

import (
	"errors"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

func TestSplitAt(t *testing.T) {
	bs := []*batch.Batch{mkBatch(t, 0, 3), mkBatch(t, 3, 5), mkBatch(t, 5, 9)}
	tests := []struct {
		f0         frontier.Frontier
		old, fresh int
		err        error
	}{
		{frontier.At(0), 0, 3, nil},
		{frontier.At(3), 1, 2, nil},
		{frontier.At(5), 2, 1, nil},
		{frontier.At(9), 3, 0, nil},
		{frontier.Closed(), 3, 0, nil},
		{frontier.At(4), 0, 0, ErrStraddle},
	}
	for _, tt := range tests {
		old, fresh, err := SplitAt(bs, tt.f0)
		if !errors.Is(err, tt.err) {
			t.Errorf("SplitAt(%v) err = %v, want %v", tt.f0, err, tt.err)
			continue
		}
		if len(old) != tt.old || len(fresh) != tt.fresh {
			t.Errorf("SplitAt(%v) = %d old, %d fresh; want %d, %d", tt.f0, len(old), len(fresh), tt.old, tt.fresh)
		}
	}
}
