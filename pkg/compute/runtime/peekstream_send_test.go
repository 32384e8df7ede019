package runtime_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
)

func chunkOf(i int64) []peek.RowCount {
	return []peek.RowCount{{Row: row.Pack(row.Int64(i)), Count: 1}}
}

// sendAsync runs Send on its own goroutine and returns its result channel.
func sendAsync(ctx context.Context, s *runtime.PeekStream, rows []peek.RowCount) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- s.Send(ctx, rows) }()
	return ch
}

func blocked(t *testing.T, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("Send returned %v with the buffer full", err)
	case <-time.After(50 * time.Millisecond):
	}
}

func returned(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Send still blocked")
		return nil
	}
}

// TestPeekStreamSendBlocksWhileFull: a producer on its own goroutine waits
// while capacity chunks are buffered and goes on once the consumer takes
// one; Finish(nil) ends the stream after the buffered chunks.
func TestPeekStreamSendBlocksWhileFull(t *testing.T) {
	s := runtime.NewPeekStream(2, func() {})
	ctx := context.Background()
	if err := s.Send(ctx, chunkOf(1)); err != nil {
		t.Fatal(err)
	}
	third := sendAsync(ctx, s, chunkOf(2)) // fills the buffer: waits for room
	blocked(t, third)
	if got := s.Len(); got != 2 {
		t.Fatalf("%d chunks buffered, want 2", got)
	}
	if _, ok, err := s.TryNext(); !ok || err != nil {
		t.Fatalf("TryNext: ok=%v err=%v", ok, err)
	}
	if err := returned(t, third); err != nil {
		t.Fatal(err)
	}
	s.Finish(nil)
	if _, ok, err := s.TryNext(); !ok || err != nil {
		t.Fatalf("TryNext of the last chunk: ok=%v err=%v", ok, err)
	}
	if _, _, err := s.TryNext(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last chunk: %v, want EOF", err)
	}
}

// TestPeekStreamSendStops: a blocked Send returns when its context ends or
// when the consumer closes the stream (which calls stop); a Finish with an
// error reaches the consumer.
func TestPeekStreamSendStops(t *testing.T) {
	t.Run("context", func(t *testing.T) {
		s := runtime.NewPeekStream(1, func() {})
		ctx, cancel := context.WithCancel(context.Background())
		ch := sendAsync(ctx, s, chunkOf(1))
		blocked(t, ch)
		cancel()
		if err := returned(t, ch); !errors.Is(err, context.Canceled) {
			t.Fatalf("Send: %v, want Canceled", err)
		}
		s.Finish(context.Canceled)
		if _, _, err := s.TryNext(); !errors.Is(err, context.Canceled) {
			t.Fatalf("TryNext: %v, want Canceled", err)
		}
	})
	t.Run("close", func(t *testing.T) {
		stopped := make(chan struct{})
		s := runtime.NewPeekStream(1, func() { close(stopped) })
		ch := sendAsync(context.Background(), s, chunkOf(1))
		blocked(t, ch)
		s.Close()
		if err := returned(t, ch); !errors.Is(err, runtime.ErrStreamClosed) {
			t.Fatalf("Send: %v, want ErrStreamClosed", err)
		}
		<-stopped
		if err := s.Send(context.Background(), chunkOf(2)); !errors.Is(err, runtime.ErrStreamClosed) {
			t.Fatalf("Send after Close: %v", err)
		}
	})
}
