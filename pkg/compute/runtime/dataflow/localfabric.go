package dataflow

import (
	"errors"
	"fmt"
	"sync"
)

// ErrFabricClosed is returned by a LocalFabric endpoint after Close.
var ErrFabricClosed = errors.New("dataflow: fabric closed")

// LocalFabric connects several runtimes in one OS process, standing in for
// the TCP mesh in tests of the multi-process path. Messages are handed to the
// receiver's handler synchronously, which keeps them FIFO per pair.
type LocalFabric struct {
	hub  *localHub
	self int
}

type localHub struct {
	mu       sync.Mutex
	handlers []func(from int, msg []byte)
	early    [][]localMsg
	closed   bool
}

type localMsg struct {
	from int
	msg  []byte
}

// NewLocalFabrics returns one connected endpoint per process.
func NewLocalFabrics(processes int) []*LocalFabric {
	hub := &localHub{handlers: make([]func(int, []byte), processes), early: make([][]localMsg, processes)}
	out := make([]*LocalFabric, processes)
	for i := range out {
		out[i] = &LocalFabric{hub: hub, self: i}
	}
	return out
}

// Send implements Fabric.
func (f *LocalFabric) Send(to int, msg []byte) error {
	h := f.hub
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return ErrFabricClosed
	}
	if to < 0 || to >= len(h.handlers) {
		h.mu.Unlock()
		return fmt.Errorf("local fabric: no process %d", to)
	}
	handler := h.handlers[to]
	if handler == nil {
		h.early[to] = append(h.early[to], localMsg{from: f.self, msg: msg})
		h.mu.Unlock()
		return nil
	}
	// The handler only enqueues, so calling it under the lock is cheap and
	// gives a total (hence per-pair FIFO) order of deliveries.
	handler(f.self, msg)
	h.mu.Unlock()
	return nil
}

// Receive implements Fabric.
func (f *LocalFabric) Receive(handler func(from int, msg []byte)) {
	h := f.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	h.handlers[f.self] = handler
	for _, m := range h.early[f.self] {
		handler(m.from, m.msg)
	}
	h.early[f.self] = nil
}

// Close makes every later Send on any endpoint fail, simulating a lost peer.
func (f *LocalFabric) Close() {
	f.hub.mu.Lock()
	f.hub.closed = true
	f.hub.mu.Unlock()
}
