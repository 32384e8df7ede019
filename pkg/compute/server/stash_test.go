package server

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

func intRows(n int) []row.RowCount {
	rows := make([]row.RowCount, n)
	for i := range rows {
		rows[i] = row.RowCount{Row: row.Pack(row.Int64(int64(i))), Count: 1}
	}
	return rows
}

// TestOutQueueInterleavesStash: a response queued while a large result is
// being stashed leaves before the result's next chunk, not after its last.
func TestOutQueueInterleavesStash(t *testing.T) {
	q := newOutQueue()
	job := &stashJob{uuid: uuidN(1), src: &sliceSource{rows: intRows(200)}, chunkSize: 20, done: func(string) {}}
	q.pushJob(job)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var sent []*computepb.Response
	frontiers := &computepb.Response{Kind: &computepb.Response_Frontiers{Frontiers: &computepb.Frontiers{Id: gid("u1")}}}
	err := q.drain(ctx, func(r *computepb.Response) error {
		sent = append(sent, r)
		if len(sent) == 1 {
			q.push(frontiers)
		}
		if r.GetPeekResponse().GetStashed().GetFinal() {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("drain: %v", err)
	}
	if len(sent) < 10 {
		t.Fatalf("sent %d responses; want many chunks", len(sent))
	}
	if sent[1] != frontiers {
		t.Fatalf("second response is %v; want the frontiers queued after the first chunk", sent[1])
	}
}

// fakeStream is a RowStream fed by a test: pieces become ready one by one.
type fakeStream struct {
	mu     sync.Mutex
	pieces [][]row.RowCount
	ended  error
	wake   func()
	closed bool
}

func (f *fakeStream) TryNext() ([]row.RowCount, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.pieces) > 0 {
		p := f.pieces[0]
		f.pieces = f.pieces[1:]
		return p, true, nil
	}
	if f.ended != nil {
		return nil, false, f.ended
	}
	return nil, false, nil
}

func (f *fakeStream) Notify(wake func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.wake = wake
}

func (f *fakeStream) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
}

func (f *fakeStream) feed(rows []row.RowCount, end error) {
	f.mu.Lock()
	if rows != nil {
		f.pieces = append(f.pieces, rows)
	}
	if end != nil {
		f.ended = end
	}
	wake := f.wake
	f.mu.Unlock()
	if wake != nil {
		wake()
	}
}

func (f *fakeStream) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// TestStashFromStream: a streamed result fed piece by piece arrives whole,
// in order, in bounded chunks numbered from 0, the last final; a result
// that grows past the maximum ends with an error after the chunks already
// sent; the stream is closed either way.
func TestStashFromStream(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxSize uint64
		wantErr bool
	}{
		{name: "whole", maxSize: 0},
		{name: "too large", maxSize: 100, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newOutQueue()
			src := &fakeStream{}
			var ended string
			job := &stashJob{uuid: uuidN(1), src: streamSource{src}, chunkSize: 20, maxSize: tc.maxSize,
				done: func(r string) { ended = r }}
			q.pushJob(job)
			all := intRows(120)
			go func() {
				for i := 0; i < len(all); i += 15 {
					src.feed(all[i:min(i+15, len(all))], nil)
					time.Sleep(time.Millisecond)
				}
				src.feed(nil, io.EOF)
			}()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var got []*computepb.RowCount
			var seq uint64
			var terminal *computepb.PeekResponse
			_ = q.drain(ctx, func(r *computepb.Response) error {
				pr := r.GetPeekResponse()
				if st := pr.GetStashed(); st != nil {
					if st.GetSequence() != seq || len(st.GetRows()) == 0 {
						t.Errorf("chunk %d: %v", seq, st)
					}
					size := 0
					for _, r := range st.GetRows() {
						size += len(r.GetRow())
					}
					if size > 20 {
						t.Errorf("chunk %d has %d bytes", seq, size)
					}
					seq++
					got = append(got, st.GetRows()...)
					if !st.GetFinal() {
						return nil
					}
				}
				terminal = pr
				cancel()
				return nil
			})
			if !src.isClosed() {
				t.Error("stream not closed")
			}
			if tc.wantErr {
				if terminal.GetError().GetSqlstate() != CodeResultTooLarge || ended != resultError {
					t.Fatalf("terminal %v (%s); want a result-too-large error", terminal, ended)
				}
				if seq == 0 {
					t.Fatal("no chunk before the error")
				}
				return
			}
			if !terminal.GetStashed().GetFinal() || ended != resultStashed {
				t.Fatalf("terminal %v (%s)", terminal, ended)
			}
			if len(got) != len(all) {
				t.Fatalf("%d rows, want %d", len(got), len(all))
			}
			for i, r := range got {
				if string(r.GetRow()) != string(all[i].Row) {
					t.Fatalf("row %d out of order", i)
				}
			}
		})
	}
}
