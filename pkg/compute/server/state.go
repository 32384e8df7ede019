package server

import (
	"context"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// phase is where a connection is in its lifecycle.
type phase int

const (
	awaitCreateInstance phase = iota // after Hello
	initializing                     // commands are buffered until InitializationComplete
	running                          // commands apply as they arrive
)

// conn is one controller connection. Its fields other than out, ctx and
// cancel are owned by the loop.
type conn struct {
	nonce  string
	out    *outQueue
	ctx    context.Context
	cancel context.CancelCauseFunc

	phase    phase
	cfg      InstanceConfig
	buffered []buffered
	// reported holds what this connection has been told, so reports never
	// regress and are sent afresh on a new connection.
	reported map[plan.GlobalID]*reportedFrontiers
	// subscribeUpper is the upper of the last subscribe batch sent per id.
	subscribeUpper map[plan.GlobalID]frontier.Frontier
	// memoryReported and memoryNear: the last MemoryStatus sent
	// (Server.reportMemory).
	memoryReported, memoryNear bool
}

// buffered is a command held during initialization; CreateDataflow arrives
// decoded so errors are answered at once.
type buffered struct {
	cmd *computepb.Command
	df  *Dataflow
}

type reportedFrontiers struct {
	write, input, output *frontier.Frontier
}

func (c *conn) respond(r *computepb.Response) { c.out.push(r) }

// dataflowState is a dataflow the runtime is running.
type dataflowState struct {
	df *Dataflow
}

// collection is one export of a running dataflow.
type collection struct {
	id        plan.GlobalID
	df        *dataflowState
	subscribe bool
	asOf      frontier.Frontier
	until     frontier.Frontier
	since     frontier.Frontier // Join of as_of and every allowed compaction
	// Latest frontiers from the runtime (joined: never regress).
	write, input, output *frontier.Frontier
	created              time.Time
	hydrated             bool
	hydrationTime        time.Duration
}

// pendingPeek is a peek awaiting its terminal response.
type pendingPeek struct {
	conn    *conn
	started time.Time
	stash   *stashJob // set once its result is streaming
	// lane is the peek lane its single-message answer takes; nil for
	// the stream (also once that lane went down). viaLane: it came over
	// a lane, so the controller may send it again on the stream.
	lane    *lane
	viaLane bool
	// dispatched is when the peek went to the runtime (the start of its
	// runtime stage); zero if it was refused before.
	dispatched time.Time
}

// state is the replica's state, owned by the loop.
type state struct {
	conn        *conn
	dataflows   map[*dataflowState]struct{}
	collections map[plan.GlobalID]*collection
	peeks       map[string]*pendingPeek
	// received is when the command being handled came off the stream.
	received time.Time
	// fromLane is the lane of the command being handled; nil for the
	// stream.
	fromLane *lane
}

func newState() state {
	return state{
		dataflows:   map[*dataflowState]struct{}{},
		collections: map[plan.GlobalID]*collection{},
		peeks:       map[string]*pendingPeek{},
	}
}
