package runtime

import (
	"bytes"
	"fmt"
	goruntime "runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// goid is the calling goroutine's id, from its stack header.
func goid() uint64 {
	var buf [64]byte
	b := buf[:goruntime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// TestResponderPushNowDeliversOnTheCaller: an idle responder's pushNow
// runs the callback on the caller's goroutine before returning; push, and
// pushNow while responses are queued, go through the responder's own.
func TestResponderPushNowDeliversOnTheCaller(t *testing.T) {
	var mu sync.Mutex
	on := map[string]uint64{}
	r := newResponder(func(resp Response) {
		mu.Lock()
		on[resp.(*PeekResponse).UUID] = goid()
		mu.Unlock()
	})
	stop := make(chan struct{})
	go r.run(stop)
	for {
		r.mu.Lock()
		started := r.started
		r.mu.Unlock()
		if started {
			break
		}
		goruntime.Gosched()
	}
	me := goid()
	r.pushNow(&PeekResponse{UUID: "now"})
	mu.Lock()
	got, ok := on["now"]
	mu.Unlock()
	if !ok || got != me {
		t.Fatalf("pushNow on an idle responder: delivered %v on goroutine %d, want on the caller's (%d)", ok, got, me)
	}
	r.push(&PeekResponse{UUID: "queued"})
	close(stop)
	<-r.done
	if on["queued"] == me {
		t.Fatal("push delivered on the caller's goroutine")
	}
	// Stopped: pushNow no longer delivers.
	r.pushNow(&PeekResponse{UUID: "late"})
	if _, ok := on["late"]; ok {
		t.Fatal("pushNow delivered after the responder stopped")
	}
}

// TestResponderOrderAndNoOverlap: with several goroutines pushing (push
// and pushNow) at once, every response is delivered exactly once, each
// pusher's in its order, and no two deliveries overlap.
func TestResponderOrderAndNoOverlap(t *testing.T) {
	const pushers, each = 4, 2000
	var inFlight, overlaps atomic.Int32
	next := make([]int, pushers) // only the (non-overlapping) callback touches it
	var bad []string
	r := newResponder(func(resp Response) {
		if inFlight.Add(1) != 1 {
			overlaps.Add(1)
		}
		var p, i int
		fmt.Sscanf(resp.(*PeekResponse).UUID, "%d/%d", &p, &i)
		if i != next[p] {
			bad = append(bad, fmt.Sprintf("pusher %d: got %d, want %d", p, i, next[p]))
		}
		next[p] = i + 1
		inFlight.Add(-1)
	})
	stop := make(chan struct{})
	go r.run(stop)
	var wg sync.WaitGroup
	for p := range pushers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				resp := &PeekResponse{UUID: fmt.Sprintf("%d/%d", p, i)}
				if (p+i)%2 == 0 {
					r.pushNow(resp)
				} else {
					r.push(resp)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-r.done
	if n := overlaps.Load(); n > 0 {
		t.Fatalf("%d deliveries overlapped another", n)
	}
	if len(bad) > 0 {
		t.Fatalf("%d out of order, first: %s", len(bad), bad[0])
	}
	for p, n := range next {
		if n != each {
			t.Fatalf("pusher %d: %d of %d delivered", p, n, each)
		}
	}
}

// TestResponderDeliversWhatQueuedDuringAnInlineDelivery: a response pushed
// while a pushNow caller delivers (so it wakes nobody) is delivered once
// that delivery ends, without waiting for another push or for stop.
func TestResponderDeliversWhatQueuedDuringAnInlineDelivery(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	delivered := make(chan string, 2)
	r := newResponder(func(resp Response) {
		uuid := resp.(*PeekResponse).UUID
		if uuid == "first" {
			close(entered)
			<-release
		}
		delivered <- uuid
	})
	stop := make(chan struct{})
	defer func() { close(stop); <-r.done }()
	go r.run(stop)
	for {
		r.mu.Lock()
		started := r.started
		r.mu.Unlock()
		if started {
			break
		}
		goruntime.Gosched()
	}
	go r.pushNow(&PeekResponse{UUID: "first"})
	<-entered
	r.push(&PeekResponse{UUID: "second"})
	close(release)
	for _, want := range []string{"first", "second"} {
		select {
		case got := <-delivered:
			if got != want {
				t.Fatalf("delivered %s, want %s", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s was not delivered (left queued until stop)", want)
		}
	}
}
