package offload

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/peek"
)

// gateSink takes one chunk at a time: after each Put it is full until the
// test lets the walk resume.
type gateSink struct {
	mu      sync.Mutex
	chunks  [][]peek.RowCount
	resumes []func()
}

func (s *gateSink) Put(rows []peek.RowCount, resume func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chunks = append(s.chunks, rows)
	s.resumes = append(s.resumes, resume)
	return false
}

// resumeParked resumes the walks parked so far.
func (s *gateSink) resumeParked() {
	s.mu.Lock()
	rs := s.resumes
	s.resumes = nil
	s.mu.Unlock()
	for _, r := range rs {
		r()
	}
}

// next waits for a parked walk and resumes it; false when none parked in
// time.
func (s *gateSink) next() bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		if len(s.resumes) > 0 {
			r := s.resumes[0]
			s.resumes = s.resumes[1:]
			s.mu.Unlock()
			r()
			return true
		}
		s.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	return false
}

// TestChunkedWalkParksAndResumes: a chunked walk hands every chunk to the
// sink, parks while the sink is full (holding no pool goroutine: a second
// walk runs meanwhile on a pool of one), and ends with the same rows as an
// unchunked walk; canceled while parked, it reports the context's error
// exactly once when resumed.
func TestChunkedWalkParksAndResumes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	r := randomRead(t, rng)
	pool := NewPool(1)
	defer pool.Close()
	want, err := run(t, pool, r, peek.Options{}, Policy{Mode: Inline})
	if err != nil {
		t.Fatal(err)
	}

	sink := &gateSink{}
	done := make(chan []peek.RowCount, 1)
	w := peek.NewWalk(r, peek.Options{ChunkBytes: 200})
	if pool.RunChunked(t.Context(), w, Policy{Mode: Inline}, sink, func(rows []peek.RowCount, err error) {
		if err != nil {
			t.Errorf("chunked walk: %v", err)
		}
		done <- rows
	}) {
		t.Fatal("a chunked walk with chunks ready finished on the worker")
	}
	// The pool's only goroutine is free while the walk is parked.
	if _, err := run(t, pool, r, peek.Options{Keys: [][]byte{}}, Policy{Mode: Always}); err != nil {
		t.Fatalf("walk behind a parked one: %v", err)
	}
	var rest []peek.RowCount
	deadline := time.After(10 * time.Second)
wait:
	for {
		select {
		case rest = <-done:
			break wait
		case <-deadline:
			t.Fatalf("walk not finished after %d chunks", len(sink.chunks))
		default:
		}
		sink.resumeParked()
		time.Sleep(100 * time.Microsecond)
	}
	parts := append(sink.chunks, rest)
	got, err := peek.Merge(0, parts...)
	if err != nil {
		t.Fatal(err)
	}
	if len(sink.chunks) < 2 || len(got) != len(want) {
		t.Fatalf("%d chunks, %d rows; want several chunks and %d rows", len(sink.chunks), len(got), len(want))
	}
	for i := range want {
		if string(got[i].Row) != string(want[i].Row) || got[i].Count != want[i].Count {
			t.Fatalf("row %d differs", i)
		}
	}

	// Canceled while parked.
	sink = &gateSink{}
	ctx, cancel := context.WithCancel(t.Context())
	var calls int
	var mu sync.Mutex
	errc := make(chan error, 2)
	pool.RunChunked(ctx, peek.NewWalk(r, peek.Options{ChunkBytes: 200}), Policy{Mode: Always}, sink, func(_ []peek.RowCount, err error) {
		mu.Lock()
		calls++
		mu.Unlock()
		errc <- err
	})
	time.Sleep(20 * time.Millisecond)
	cancel()
	if !sink.next() {
		t.Fatal("walk did not park")
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled parked walk ended with %v", err)
	}
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 {
		t.Fatalf("done called %d times", calls)
	}
}
