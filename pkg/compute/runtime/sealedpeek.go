package runtime

import (
	"sync"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/offload"
	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// sealedShards lists, per index export, the shards the local workers have
// built, so that a point read whose time is already sealed in every one of
// them is served on the caller's goroutine instead of waiting for each
// worker to finish its step in progress. Workers add their shard when they
// build the export and remove it when they drop it; readers only capture
// reads (render.Index.ReadAt, safe from any goroutine).
type sealedShards struct {
	mu sync.RWMutex
	m  map[plan.GlobalID]*shardSet
}

// shardSet is one incarnation of an export: seq is its dataflow's
// sequence number, so a peek of a re-created export never reads the shards
// of its predecessor.
type shardSet struct {
	seq    uint64
	shards []*render.Index // by local worker; nil until that worker built it
}

func newSealedShards() *sealedShards {
	return &sealedShards{m: map[plan.GlobalID]*shardSet{}}
}

// built records local worker w's shard of export id of dataflow seq.
func (s *sealedShards) built(id plan.GlobalID, seq uint64, w, workers int, idx *render.Index) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := s.m[id]
	if set == nil || set.seq != seq {
		set = &shardSet{seq: seq, shards: make([]*render.Index, workers)}
		s.m[id] = set
	}
	set.shards[w] = idx
}

// dropped forgets local worker w's shard idx of export id (if it is still
// the one listed).
func (s *sealedShards) dropped(id plan.GlobalID, w int, idx *render.Index) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := s.m[id]
	if set == nil || set.shards[w] != idx {
		return
	}
	set.shards[w] = nil
	for _, sh := range set.shards {
		if sh != nil {
			return
		}
	}
	delete(s.m, id)
}

// shardRead is one worker's captured read of an export.
type shardRead struct{ ok, errs trace.Read }

// capture returns a read at t of every local shard of export id of
// dataflow seq, or false when a shard is not built yet or any read fails
// (t not sealed yet, compacted, beyond until): the workers then serve the
// peek, and report any error, as before.
func (s *sealedShards) capture(id plan.GlobalID, seq uint64, t frontier.Time, dst []shardRead) ([]shardRead, bool) {
	s.mu.RLock()
	set := s.m[id]
	if set == nil || set.seq != seq {
		s.mu.RUnlock()
		return dst, false
	}
	var local [8]*render.Index
	shards := append(local[:0], set.shards...)
	s.mu.RUnlock()
	for _, idx := range shards {
		if idx == nil {
			return dst, false
		}
		ok, errs, err := idx.ReadAt(t)
		if err != nil {
			return dst, false
		}
		dst = append(dst, shardRead{ok: ok, errs: errs})
	}
	return dst, true
}

// serveSealed answers p off the workers when it is a point read (literal
// keys) whose time is sealed in every local shard of its index: each
// shard's walk runs here within the walk budget (or continues on the
// offload pool) and the answers merge in the peek aggregator exactly as
// the workers' would, so the peek still gets exactly one response, and a
// CancelPeek still wins if it comes first. It reports false, having done
// nothing, when the workers must serve the peek (a scan, a time not yet
// sealed, a shard not yet built, an error to report).
func (r *Runtime) serveSealed(p Peek, seq uint64, maxBytes int) (bool, error) {
	if len(p.Keys) == 0 {
		return false, nil
	}
	var buf [4]shardRead
	reads, ok := r.sealed.capture(p.Target, seq, p.Timestamp, buf[:0])
	if !ok {
		return false, nil
	}
	if err := r.peeks.add(p.UUID); err != nil {
		return true, err
	}
	r.sealedPeeks.Add(1)
	ctx := r.peeks.context(p.UUID)
	pol := offload.Policy{Mode: offload.Mode(r.walkMode.Load()), Budget: int(r.walkBudget.Load())}
	uuid := p.UUID
	done := func(rows []peek.RowCount, err error) { r.finishPeek(uuid, rows, err, maxBytes) }
	for _, rd := range reads {
		chunkBytes, sink := r.peekSink(p)
		walk, err := NewPeekWalk(p, rd.ok, rd.errs, maxBytes, chunkBytes)
		if err != nil {
			done(nil, err)
			continue
		}
		if r.offload.RunChunked(ctx, walk, pol, sink, done) {
			// Answered on the command goroutine: deliver from here when
			// allowed, not through the responder's goroutine.
			rows, err := walk.Result()
			r.finishPeekOn(uuid, rows, err, maxBytes, r.pushFromPeek)
		}
	}
	return true, nil
}

// pushFromPeek delivers a response of a peek answered within Peek.
func (r *Runtime) pushFromPeek(resp Response) {
	if r.cfg.RespondInline {
		r.resp.pushNow(resp)
		return
	}
	r.resp.push(resp)
}

// SealedPeeks returns how many peeks were served off the workers because
// their time was already sealed in every local shard.
func (r *Runtime) SealedPeeks() uint64 { return r.sealedPeeks.Load() }
