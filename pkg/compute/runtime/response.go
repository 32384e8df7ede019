package runtime

import "github.com/tandemdb/tandem/pkg/compute/peek"

// Response is one message from the runtime to its controller: *Frontiers,
// *PeekResponse or *SubscribeResponse.
type Response interface {
	isResponse()
}

// PeekResponse answers one peek: exactly one per UUID per process, carrying
// this process's shard of the result (merged over its workers). Exactly one
// of Rows (possibly empty), Error or Canceled is meaningful: Error != nil
// means failure, Canceled means a CancelPeek arrived first.
type PeekResponse struct {
	UUID     string
	Rows     []peek.RowCount
	Error    error
	Canceled bool
}

func (*PeekResponse) isResponse() {}
