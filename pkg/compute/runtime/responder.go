package runtime

import "sync"

// responder delivers responses to the consumer's callback from one
// goroutine, in the order they were queued, so that a slow consumer never
// blocks a worker and per-collection order (frontiers never regress) is
// preserved.
type responder struct {
	mu      sync.Mutex
	queue   []Response
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
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// run delivers until stop is closed, then delivers what is left.
func (r *responder) run(stop <-chan struct{}) {
	defer close(r.done)
	for {
		r.mu.Lock()
		batch := r.queue
		r.queue = nil
		r.mu.Unlock()
		for _, resp := range batch {
			r.deliver(resp)
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-r.wake:
		case <-stop:
			r.mu.Lock()
			rest := r.queue
			r.queue = nil
			r.mu.Unlock()
			for _, resp := range rest {
				r.deliver(resp)
			}
			return
		}
	}
}
