package mesh

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// listeners reserves n loopback addresses.
func listeners(t *testing.T, n int) ([]net.Listener, []string) {
	t.Helper()
	lis := make([]net.Listener, n)
	addrs := make([]string, n)
	for i := range lis {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lis[i], addrs[i] = l, l.Addr().String()
	}
	return lis, addrs
}

// connectAll connects n processes with the given workers each; lost
// receives each process's OnLost error.
func connectAll(t *testing.T, workers []int, lost chan<- string) ([]*Mesh, []error) {
	t.Helper()
	n := len(workers)
	lis, addrs := listeners(t, n)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	meshes := make([]*Mesh, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			meshes[i], errs[i] = Connect(ctx, Config{
				Process: i, Peers: addrs, Workers: workers[i], Listener: lis[i], Log: logr.Discard(),
				OnLost: func(err error) { lost <- fmt.Sprintf("%d: %v", i, err) },
			})
			if errs[i] != nil {
				lis[i].Close()
			}
		}()
	}
	wg.Wait()
	return meshes, errs
}

func closeAll(ms []*Mesh) {
	for _, m := range ms {
		if m != nil {
			m.Close()
		}
	}
}

func TestFIFOPerPairAcrossThreeProcesses(t *testing.T) {
	lost := make(chan string, 10)
	ms, errs := connectAll(t, []int{2, 2, 2}, lost)
	defer closeAll(ms)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	const perPair = 2000
	// Send before Receive: messages must wait, not be lost.
	for from, m := range ms {
		for to := range ms {
			if to == from {
				continue
			}
			for k := range perPair {
				msg := binary.BigEndian.AppendUint32(nil, uint32(k))
				msg = append(msg, make([]byte, k%300)...)
				if err := m.Send(to, msg); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	type key struct{ to, from int }
	var mu sync.Mutex
	next := map[key]int{}
	done := make(chan struct{})
	total := 0
	for to, m := range ms {
		m.Receive(func(from int, msg []byte) {
			mu.Lock()
			defer mu.Unlock()
			k := key{to, from}
			if got := int(binary.BigEndian.Uint32(msg)); got != next[k] || len(msg) != 4+got%300 {
				t.Errorf("process %d from %d: message %d (len %d), want %d", to, from, got, len(msg), next[k])
			}
			next[k]++
			total++
			if total == perPair*6 {
				close(done)
			}
		})
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("received %d of %d messages", total, perPair*6)
	}
	if err := ms[0].Send(0, []byte("x")); err == nil {
		t.Fatal("send to self succeeded")
	}
}

func TestHandshakeRejectsMismatchedWorkers(t *testing.T) {
	lost := make(chan string, 10)
	ms, errs := connectAll(t, []int{2, 3}, lost)
	defer closeAll(ms)
	for i, err := range errs {
		if !errors.Is(err, ErrHandshake) {
			t.Fatalf("process %d: %v, want a handshake error", i, err)
		}
	}
	t.Log(errs[0])
}

func TestLosingAPeerIsReported(t *testing.T) {
	lost := make(chan string, 10)
	ms, errs := connectAll(t, []int{1, 1, 1}, lost)
	defer closeAll(ms)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range ms {
		m.Receive(func(int, []byte) {})
	}
	ms[2].Close() // process 2 dies without saying goodbye
	got := map[byte]bool{}
	for len(got) < 2 {
		select {
		case l := <-lost:
			got[l[0]] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("losses reported by %v, want processes 0 and 1", got)
		}
	}
	if !got['0'] || !got['1'] {
		t.Fatalf("losses reported by %v", got)
	}
	// The process that closed its own mesh reports nothing.
	select {
	case l := <-lost:
		t.Fatalf("unexpected loss report %s", l)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestSingleProcessNeedsNoNetwork(t *testing.T) {
	m, err := Connect(t.Context(), Config{Process: 0, Peers: []string{"unused:1"}, Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	m.Receive(func(int, []byte) {})
	if err := m.Send(0, nil); err == nil {
		t.Fatal("send to self succeeded")
	}
	m.Close()
}

func TestConnectGivesUpWhenPeerNeverComes(t *testing.T) {
	lis, addrs := listeners(t, 2)
	lis[0].Close() // process 0 never starts
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err := Connect(ctx, Config{Process: 1, Peers: addrs, Workers: 1, Listener: lis[1], Log: logr.Discard()})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want deadline exceeded", err)
	}
}
