package runtime

import "github.com/tandemdb/tandem/pkg/compute/peek"

// Response is one message from the runtime to its controller: *Frontiers,
// *PeekResponse or *SubscribeResponse.
type Response interface {
	isResponse()
}

// PeekResponse answers one peek: exactly one per UUID per process, carrying
// this process's shard of the result (merged over its workers). Exactly one
// of Rows (possibly empty), Stream, Error or Canceled is meaningful: Error
// != nil means failure, Canceled means a CancelPeek arrived first, Stream
// carries a result too large to materialise (a Streamable peek above the
// stash threshold): it ends with io.EOF, the peek's error, or
// context.Canceled after a CancelPeek. Whoever receives a Stream must read
// it to the end or Close it, or its walks stay parked.
type PeekResponse struct {
	UUID     string
	Rows     []peek.RowCount
	Stream   *PeekStream
	Error    error
	Canceled bool
}

func (*PeekResponse) isResponse() {}
