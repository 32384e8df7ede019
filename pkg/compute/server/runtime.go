package server

import (
	"context"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Backend is what the server drives with the controller's commands: the
// process's compute engine (Engine, over one runtime or the placement
// multiplexer). The server calls it from one goroutine, in command order. A
// method must not wait for the server to consume events: events go through
// Server.Deliver, which never blocks.
type Backend interface {
	// CreateInstance applies the per-connection instance configuration.
	CreateInstance(ctx context.Context, cfg InstanceConfig) error
	// CreateDataflow builds a dataflow decoded by the Codec.
	CreateDataflow(ctx context.Context, df *Dataflow) error
	// Schedule lets the dataflow exporting id run.
	Schedule(ctx context.Context, id plan.GlobalID) error
	// AllowCompaction lets collection id compact to f; a closed f drops it.
	AllowCompaction(ctx context.Context, id plan.GlobalID, f frontier.Frontier) error
	// Peek starts a peek; its result arrives later as a PeekResult event.
	Peek(ctx context.Context, p *Peek) error
	// CancelPeek stops a peek. A result delivered afterwards is ignored.
	CancelPeek(ctx context.Context, uuid string)
	// UpdateConfiguration sets system parameters.
	UpdateConfiguration(ctx context.Context, params map[string]string) error
}

// Codec decodes dataflow descriptions and decides reuse on reconnect.
type Codec interface {
	// Decode converts and validates a dataflow description. A
	// description that parses far enough to name its dataflow but is
	// refused should be reported as an *InvalidDataflowError, so that the
	// refusal names the dataflow (the controller fails the reads of its
	// exports with it).
	Decode(d *computepb.DataflowDescription) (*Dataflow, error)
	// Compatible reports whether the running dataflow can serve as the
	// desired one without being rebuilt.
	Compatible(running, desired *Dataflow) bool
}

// InvalidDataflowError is a Codec's refusal of a description that named
// its dataflow: the CommandError then carries ID as its collection.
type InvalidDataflowError struct {
	ID  plan.GlobalID
	Err error
}

func (e *InvalidDataflowError) Error() string { return e.Err.Error() }

func (e *InvalidDataflowError) Unwrap() error { return e.Err }

// Dataflow is a decoded dataflow description, as far as the server needs to
// know it. Description is the codec's own decoded form, handed to the
// runtime untouched.
type Dataflow struct {
	ID          plan.GlobalID
	Indexes     []plan.GlobalID // index exports
	Subscribes  []plan.GlobalID // subscribe sinks
	AsOf        frontier.Frontier
	Until       frontier.Frontier // closed means no until
	Description any
}

// Exports returns every GlobalId the dataflow exports.
func (d *Dataflow) Exports() []plan.GlobalID {
	out := make([]plan.GlobalID, 0, len(d.Indexes)+len(d.Subscribes))
	return append(append(out, d.Indexes...), d.Subscribes...)
}

// InstanceConfig is the decoded CreateInstance.
type InstanceConfig struct {
	LoggingInterval time.Duration
	// LoggingIndexes maps an introspection relation name to its GlobalId.
	LoggingIndexes     map[string]plan.GlobalID
	MaxResultSize      uint64
	PeekStashThreshold uint64
	PeekStashChunkSize uint64
	Parameters         map[string]string
}

// Peek is a decoded, validated peek.
type Peek struct {
	UUID        string
	Target      plan.GlobalID
	Timestamp   frontier.Time
	LiteralKeys []row.Row
	// MFP is applied to each row read; nil means the identity.
	MFP *expr.MFP
	// Finishing is the part of the read's ORDER BY / LIMIT the replica
	// applies to its shard (nil: none); the controller applies the whole
	// finishing to the merged answer.
	Finishing *plan.Finishing
	Hints     map[string]string
}

// Update is one subscribe update.
type Update struct {
	Row  row.Row
	Time frontier.Time
	Diff int64
}

// Event is something the runtime reports: *FrontiersEvent, *PeekResult,
// *SubscribeBatch or *HydrationEvent.
type Event interface{ isEvent() }

// FrontiersEvent reports a collection's frontiers; nil fields are unchanged.
type FrontiersEvent struct {
	ID                   plan.GlobalID
	Write, Input, Output *frontier.Frontier
}

// PeekResult answers a peek: rows in finishing order, a stream of rows
// (a result too large to materialise; always sent stashed), or an error
// (whose SQLSTATE is taken from an *expr.EvalError or a *CodedError when
// wrapped). The server closes a Stream it does not read to the end.
type PeekResult struct {
	UUID   string
	Rows   []row.RowCount
	Stream RowStream
	Err    error
}

// SubscribeBatch carries a subscribe's updates in [Lower, Upper).
type SubscribeBatch struct {
	ID           plan.GlobalID
	Lower, Upper frontier.Frontier
	Updates      []Update
}

// HydrationEvent reports that a collection finished (or lost) hydration.
type HydrationEvent struct {
	ID       plan.GlobalID
	Hydrated bool
	Elapsed  time.Duration
}

func (*FrontiersEvent) isEvent() {}
func (*PeekResult) isEvent()     {}
func (*SubscribeBatch) isEvent() {}
func (*HydrationEvent) isEvent() {}

// NewWithBackend returns a server driving the backend newBackend builds
// (cfg.Backend is ignored). The backend delivers its events to the server,
// so the server exists first and newBackend gets its Deliver; the backend
// may deliver as soon as it exists (Deliver queues until Run).
func NewWithBackend(cfg Config, newBackend func(deliver func(Event)) (Backend, error)) (*Server, error) {
	cfg.Backend = nil
	s := New(cfg)
	b, err := newBackend(s.Deliver)
	if err != nil {
		return nil, err
	}
	s.rt = b
	return s, nil
}
