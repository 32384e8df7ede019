package runtime

import (
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// Publisher makes a maintenance runtime's index exports readable by the
// other runtime of its process (implemented by pkg/placement over the
// sharing registry; the engine knows nothing of the registry). A Solo
// runtime has none and publishes nothing.
type Publisher interface {
	// Publish is called on the worker goroutine of global worker index
	// worker when it has built its shard of index export id.
	Publish(id plan.GlobalID, worker int, ok, errs *trace.Trace) (Publication, error)
}

// Publication is one published index shard. Its methods are called from the
// owning worker goroutine.
type Publication interface {
	// Refresh republishes the traces' batch chains and frontiers; called
	// after each worker step that changed them.
	Refresh() error
	// Compact records the compaction the export's own handle asked for
	// (AllowCompaction); the published since follows as far as the
	// reading runtime's holds allow.
	Compact(f frontier.Frontier) error
	// Close unpublishes the shard when the index is dropped.
	Close()
}
