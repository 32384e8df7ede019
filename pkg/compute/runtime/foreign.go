package runtime

import (
	"math/bits"
	"sync"
	"time"
)

// foreignPeeks are the peeks another runtime of this process serves (the
// interactive runtime, which keeps no logging of its own), recorded here so
// that this runtime's introspection shows every peek of the process.
type foreignPeeks struct {
	mu      sync.Mutex
	pending map[string]Peek
}

// ForeignPeekStarted records a peek another runtime of this process began
// serving: it appears in the peeks relation (reported by this process's
// first worker) until ForeignPeekFinished. Safe from any goroutine.
func (r *Runtime) ForeignPeekStarted(p Peek) {
	r.foreign.mu.Lock()
	defer r.foreign.mu.Unlock()
	if r.foreign.pending == nil {
		r.foreign.pending = map[string]Peek{}
	}
	r.foreign.pending[p.UUID] = p
}

// ForeignPeekFinished ends a foreign peek after d (rows, error or
// canceled) and counts it in the peek-duration relation. The metrics are
// not touched: the serving runtime reports its own, under its role.
func (r *Runtime) ForeignPeekFinished(uuid string, d time.Duration) {
	r.foreign.mu.Lock()
	delete(r.foreign.pending, uuid)
	r.foreign.mu.Unlock()
	r.peekHist[bits.Len64(uint64(max(d, 0)))].Add(1)
}

// eachForeignPeek calls fn for every pending foreign peek.
func (r *Runtime) eachForeignPeek(fn func(Peek)) {
	r.foreign.mu.Lock()
	defer r.foreign.mu.Unlock()
	for _, p := range r.foreign.pending {
		fn(p)
	}
}
