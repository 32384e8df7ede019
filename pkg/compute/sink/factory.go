package sink

import (
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// Factory opens storage sink writers over a storage client; the replica
// plugs it into its runtimes (render.StorageSinkFactory). Use it by
// pointer: it counts its live writers.
type Factory struct {
	Storage Shard
	Log     logr.Logger
	// Metrics, if set, records every writer's appends, reads, lag and
	// memory, by sink GlobalId; a sink's state is forgotten when its last
	// writer in this Factory stops.
	Metrics Metrics

	liveOnce sync.Once
	live     *liveSinks
}

var _ render.StorageSinkFactory = (*Factory)(nil)

// OpenStorageSink implements render.StorageSinkFactory.
func (f *Factory) OpenStorageSink(s plan.SubscribeSink, asOf frontier.Frontier, activate func()) (render.StorageSinkWriter, error) {
	if s.Shard == "" {
		return nil, errors.New("open storage sink: no shard")
	}
	t, ok := asOf.Time()
	if !ok {
		return nil, fmt.Errorf("open storage sink %s: closed as_of", s.ID)
	}
	f.liveOnce.Do(func() { f.live = &liveSinks{m: f.Metrics} })
	w := Start(Config{Shard: s.Shard, Storage: f.Storage, AsOf: t, OnProgress: activate, Log: f.Log.WithValues("sink", s.ID.String(), "shard", s.Shard),
		Name: s.ID.String(), live: f.live})
	return dataflowWriter{w}, nil
}

// dataflowWriter adapts a Writer to the dataflow's update type.
type dataflowWriter struct{ w *Writer }

func (d dataflowWriter) Push(ok, errs []dataflow.Update, upper frontier.Frontier) {
	d.w.Push(sinkUpdates(ok), sinkUpdates(errs), upper)
}

func (d dataflowWriter) Close() error { return d.w.Close() }

func sinkUpdates(us []dataflow.Update) []Update {
	if len(us) == 0 {
		return nil
	}
	out := make([]Update, len(us))
	for i, u := range us {
		out[i] = Update{Row: u.Val, Time: u.Time, Diff: u.Diff}
	}
	return out
}

func (d dataflowWriter) Upper() frontier.Frontier { return d.w.Upper() }
