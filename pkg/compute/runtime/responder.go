package runtime

import "sync"

// responder delivers responses to the consumer's callback one at a time,
// in the order they were queued, so that a slow consumer never blocks a
// worker and per-collection order (frontiers never regress) is preserved.
// Its goroutine delivers what push queues; pushNow, for a caller that may
// run the callback itself (a peek answered within Peek on the command
// goroutine, Config.RespondInline), delivers at once when nothing is
// queued or being delivered, which saves two goroutine hand-offs per point
// read (to this goroutine and back to the consumer's loop). Deliveries
// never overlap: whoever delivers holds busy.
type responder struct {
	mu      sync.Mutex
	queue   []Response
	busy    bool // a goroutine is delivering
	started bool // run has begun
	stopped bool // run was told to stop
	wake    chan struct{}
	deliver func(Response)
	done    chan struct{}
}

func newResponder(deliver func(Response)) *responder {
	return &responder{wake: make(chan struct{}, 1), deliver: deliver, done: make(chan struct{})}
}

func (r *responder) push(resp Response) {
	r.mu.Lock()
	r.queue = append(r.queue, resp)
	busy := r.busy
	r.mu.Unlock()
	if !busy { // else the deliverer takes it before it lets go
		r.signal()
	}
}

// pushNow delivers resp on the caller's goroutine when the responder runs
// and is idle with nothing queued, else queues it as push does.
func (r *responder) pushNow(resp Response) {
	r.mu.Lock()
	if r.busy || !r.started || r.stopped || len(r.queue) > 0 {
		r.mu.Unlock()
		r.push(resp)
		return
	}
	r.busy = true
	r.mu.Unlock()
	r.deliver(resp)
	r.mu.Lock()
	r.busy = false
	// What was pushed meanwhile did not wake the goroutine; a stopping
	// goroutine waits for busy to clear.
	wake := len(r.queue) > 0 || r.stopped
	r.mu.Unlock()
	if wake {
		r.signal()
	}
}

func (r *responder) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// drain delivers queued responses until none is left; false when there
// was nothing to deliver or another goroutine is delivering.
func (r *responder) drain() bool {
	r.mu.Lock()
	if r.busy || len(r.queue) == 0 {
		r.mu.Unlock()
		return false
	}
	r.busy = true
	for len(r.queue) > 0 {
		batch := r.queue
		r.queue = nil
		r.mu.Unlock()
		for _, resp := range batch {
			r.deliver(resp)
		}
		r.mu.Lock()
	}
	r.busy = false
	r.mu.Unlock()
	return true
}

// run delivers until stop is closed, then delivers what is left.
func (r *responder) run(stop <-chan struct{}) {
	defer close(r.done)
	r.mu.Lock()
	r.started = true
	r.mu.Unlock()
	for {
		if r.drain() {
			continue
		}
		select {
		case <-r.wake:
		case <-stop:
			r.finish()
			return
		}
	}
}

// finish waits for a pushNow in progress, then delivers what is left.
func (r *responder) finish() {
	for {
		r.mu.Lock()
		r.stopped = true
		busy := r.busy
		r.mu.Unlock()
		if !busy {
			r.drain()
			return
		}
		<-r.wake
	}
}
