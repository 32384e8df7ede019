package runtime

import (
	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// NewPeekWalk starts the read of one shard of index p.Target at
// p.Timestamp: ok and errs are the shard's ok and error arrangements read
// at that time. It fails with the first error row (a row the dataflow
// could not compute) and otherwise returns the walk of ok applying the
// peek's literal keys, its MFP and, when the result is not handed over in
// chunks (chunkBytes 0), its top-k. maxBytes bounds the result (0: no
// bound). The runtime's workers and the interactive wrapper's reads of
// published indexes (pkg/placement) both read indexes through it.
func NewPeekWalk(p Peek, ok, errs trace.Read, maxBytes, chunkBytes int) (*peek.Walk, error) {
	if err := firstErrorRow(errs); err != nil {
		return nil, err
	}
	opts := peek.Options{Keys: p.Keys, MaxResultBytes: maxBytes, ChunkBytes: chunkBytes}
	if chunkBytes <= 0 {
		opts.ChunkBytes, opts.TopK = 0, p.TopK
	}
	if p.MFP != nil {
		opts.Transform = render.MFPTransform(p.MFP)
	}
	return peek.NewWalk(ok, opts), nil
}

// firstErrorRow returns the error of the first error row present in errs.
func firstErrorRow(errs trace.Read) error {
	var err error
	errs.Scan(func(key, _ []byte, diff int64) bool {
		if diff > 0 {
			err = render.DecodeErrorRow(key)
			return false
		}
		return true
	})
	return err
}
