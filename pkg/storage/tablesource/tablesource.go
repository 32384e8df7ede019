package tablesource

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/storage"
)

// Lister is what a source needs of the storage client.
type Lister interface {
	Listen(ctx context.Context, shard string, asOf frontier.Time, f func(storage.Progress) error) error
}

// Factory opens table sources through a storage client.
type Factory struct {
	Client Lister
	Log    logr.Logger
}

var _ render.SourceFactory = (*Factory)(nil)

// OpenSource implements render.SourceFactory for table imports.
func (f *Factory) OpenSource(imp plan.SourceImport, sctx render.SourceContext) (render.Source, error) {
	if imp.Connection.Kind != plan.SourceTable {
		return nil, fmt.Errorf("table source %s: connection kind %q is not a table", imp.ID, imp.Connection.Kind)
	}
	asOf, ok := sctx.AsOf.Time()
	if !ok {
		return nil, fmt.Errorf("table source %s: closed as_of", imp.ID)
	}
	if sctx.Peers < 1 {
		return nil, fmt.Errorf("table source %s: %d peers", imp.ID, sctx.Peers)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &source{shard: imp.ID.String(), worker: uint64(sctx.Worker), peers: uint64(sctx.Peers),
		activate: sctx.Activate, chunk: sctx.Chunk, cancel: cancel, upper: frontier.Minimum(), delivered: frontier.Minimum()}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.run(ctx, f.Client, asOf, f.Log.WithValues("shard", s.shard, "worker", sctx.Worker))
	}()
	return s, nil
}

type source struct {
	shard         string
	worker, peers uint64
	activate      func()
	chunk         func() int // updates per Poll (nil or 0: all)
	cancel        context.CancelFunc
	wg            sync.WaitGroup

	mu sync.Mutex
	// pending is what storage sent and Poll has not returned yet, one
	// segment per progress message, oldest first.
	pending []segment
	// upper is the last upper storage sent; delivered the upper of the
	// last segment Poll returned in full (what Poll may report while
	// segments remain).
	upper, delivered frontier.Frontier
	err              error
}

// segment is one progress message's updates for this worker, and the
// upper that follows them: every update before upper is in this segment
// or an earlier one.
type segment struct {
	ups   []dataflow.Update
	upper frontier.Frontier
}

// run listens until closed, re-listening from the current upper after a
// broken stream.
func (s *source) run(ctx context.Context, c Lister, asOf frontier.Time, log logr.Logger) {
	backoff := 50 * time.Millisecond
	first := true
	for ctx.Err() == nil {
		from := asOf
		var skipBefore frontier.Time // updates before this were delivered already
		if !first {
			s.mu.Lock()
			ut, ok := s.upper.Time()
			s.mu.Unlock()
			if !ok {
				return
			}
			if ut > 0 {
				from, skipBefore = ut-1, ut
			}
		}
		err := c.Listen(ctx, s.shard, from, func(p storage.Progress) error {
			var ups []dataflow.Update
			for _, u := range p.Updates {
				if !first && u.Time < skipBefore {
					continue
				}
				if row.Hash(u.Row)%s.peers != s.worker {
					continue
				}
				ups = append(ups, dataflow.Update{Val: u.Row, Time: u.Time, Diff: u.Diff})
			}
			s.mu.Lock()
			if s.upper.LessEqual(p.Upper) {
				s.upper = p.Upper
			}
			s.pending = append(s.pending, segment{ups: ups, upper: s.upper})
			s.mu.Unlock()
			first = false
			s.activate()
			return nil
		})
		if err == nil || ctx.Err() != nil {
			return // shard closed (dropped) or source closed
		}
		log.V(1).Info("Table listen ended; retrying", "error", err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// Poll implements render.Source. It returns at most a chunk of updates
// (SourceContext.Chunk), so that a table's snapshot, which storage sends
// in one message, reaches the dataflow over several steps; while updates
// remain it reports the upper of the last message it returned in full
// (the source's frontier holds before the rest) and reactivates itself.
func (s *source) Poll(dst []dataflow.Update) ([]dataflow.Update, frontier.Frontier, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return dst, s.delivered, s.err
	}
	room := -1 // unbounded
	if s.chunk != nil {
		if c := s.chunk(); c > 0 {
			room = c
		}
	}
	for len(s.pending) > 0 {
		seg := &s.pending[0]
		n := len(seg.ups)
		if room >= 0 {
			if n > 0 && room == 0 {
				break
			}
			n = min(n, room)
			room -= n
		}
		dst = append(dst, seg.ups[:n]...)
		seg.ups = seg.ups[n:]
		if len(seg.ups) > 0 {
			break
		}
		s.delivered = seg.upper
		s.pending[0] = segment{}
		s.pending = s.pending[1:]
	}
	if len(s.pending) > 0 {
		s.activate() // the rest next step
	}
	return dst, s.delivered, nil
}

// Close implements render.Source.
func (s *source) Close() {
	s.cancel()
	s.wg.Wait()
}
