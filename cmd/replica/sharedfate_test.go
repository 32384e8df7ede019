package main

import (
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/protocol/scripttest"
)

// cutProxy forwards TCP connections to target until cut, which closes every
// connection it carries: a network partition of one link, leaving the
// processes at both ends running.
//
// Until target listens, an accepted connection waits for it (the proxy
// redials) rather than being closed: a direct dial would be refused and
// retried by the mesh, but a connection the proxy accepted and then closed
// fails the dialer's handshake, which the mesh rightly treats as fatal. On
// a loaded machine process 1 dialed before process 0 listened, and the
// replica died at start-up instead of at the cut.
type cutProxy struct {
	lis     net.Listener
	target  string
	done    chan struct{} // closed by cut
	cutOnce sync.Once
	mu      sync.Mutex
	isCut   bool
	conns   []net.Conn
	wg      sync.WaitGroup
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{lis: lis, target: target, done: make(chan struct{})}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) serve() {
	defer p.wg.Done()
	for {
		in, err := p.lis.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.forward(in)
		}()
	}
}

// forward connects in to target, redialing until target listens or the
// proxy is cut, then copies both ways.
func (p *cutProxy) forward(in net.Conn) {
	var out net.Conn
	for {
		var err error
		if out, err = net.Dial("tcp", p.target); err == nil {
			break
		}
		select {
		case <-p.done:
			in.Close()
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	p.mu.Lock()
	if p.isCut {
		p.mu.Unlock()
		in.Close()
		out.Close()
		return
	}
	p.conns = append(p.conns, in, out)
	p.mu.Unlock()
	for _, pair := range [][2]net.Conn{{in, out}, {out, in}} {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(pair[0], pair[1])
			pair[0].Close()
			pair[1].Close()
		}()
	}
}

// cut stops accepting and closes every forwarded connection. Idempotent.
func (p *cutProxy) cut() {
	p.cutOnce.Do(func() { close(p.done) })
	p.lis.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isCut = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestInteractiveMeshLossEndsBothProcesses checks shared fate through the
// interactive runtime alone: in a two-process, two-runtime replica, only the
// interactive runtime's mesh link is cut (the compute mesh and both
// processes stay up); each process must still exit non-zero, saying it
// lost a peer, and the first to go that its interactive runtime did, since
// a replica with one runtime partitioned cannot answer the reads routed
// to it.
func TestInteractiveMeshLossEndsBothProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts replica processes")
	}
	addrs := freeAddrs(t, 8)
	ctrl, httpAddrs, compute, inter := addrs[0:2], addrs[2:4], addrs[4:6], addrs[6:8]
	// Process 1 dials process 0 (the lower index) through the proxy.
	proxy := newCutProxy(t, inter[0])
	peersOf := [2]string{
		strings.Join(inter, ","),
		proxy.lis.Addr().String() + "," + inter[1],
	}
	r := &testReplica{}
	for i := range 2 {
		args := []string{
			"--controller-listen-addr", ctrl[i], "--internal-http-listen-addr", httpAddrs[i],
			"--workers", "1", "--log-level", "debug", "--shutdown-timeout", "5s",
			"--process", fmt.Sprint(i), "--compute-peers", strings.Join(compute, ","), "--peer-connect-timeout", "20s",
			"--interactive-peers", peersOf[i],
		}
		p := startProc(t, args)
		t.Cleanup(func() {
			_ = p.cmd.Process.Kill()
			<-p.done
		})
		r.procs = append(r.procs, p)
		r.Processes = append(r.Processes, scripttest.Process{GRPCAddr: ctrl[i], HTTPAddr: httpAddrs[i]})
	}
	r.waitReady(t)

	proxy.cut()
	// Only the interactive link is cut, so whichever process exits first
	// does so because its interactive runtime lost a peer. The other may
	// then notice the first one's exit on its compute (maintenance) mesh
	// before its own interactive mesh reports the cut: either loss ends
	// it, and its log names the one it saw first (each mesh reports only
	// its first loss, and the process exits on it).
	interactiveLosses := 0
	for i, p := range r.procs {
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			t.Fatalf("process %d still running after its interactive mesh was cut\n%s", i, tail(p.stderr.String(), 3000))
		}
		var exit *exec.ExitError
		if err := p.err; err == nil || !asExit(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("process %d exited with %v, want a non-zero exit", i, err)
		}
		lostPeer, lostInteractive := false, false
		for _, line := range strings.Split(p.stderr.String(), "\n") {
			if strings.Contains(line, "Lost a peer process") {
				lostPeer = true
				lostInteractive = lostInteractive || strings.Contains(line, `"role":"interactive"`)
			}
		}
		if !lostPeer {
			t.Fatalf("process %d log does not say it lost a peer:\n%s", i, tail(p.stderr.String(), 3000))
		}
		if lostInteractive {
			interactiveLosses++
		}
	}
	if interactiveLosses == 0 {
		t.Fatalf("no process log says its interactive runtime lost a peer:\n%s\n---\n%s",
			tail(r.procs[0].stderr.String(), 3000), tail(r.procs[1].stderr.String(), 3000))
	}
}

// TestPeerLostWhileConnectingEndsTheProcess: process 1 of a two-runtime
// replica connects the maintenance mesh and then dies, because its
// interactive mesh port is taken (the local orchestrator's ports can be
// taken between its pick and the bind). Process 0, still connecting its
// interactive mesh to the dead peer, must exit at once, saying it lost a
// peer, rather than wait out its peer-connect timeout: only when every
// process has exited does the orchestrator restart them all with fresh
// peer addresses.
func TestPeerLostWhileConnectingEndsTheProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts replica processes")
	}
	addrs := freeAddrs(t, 8)
	ctrl, httpAddrs, compute, inter := addrs[0:2], addrs[2:4], addrs[4:6], addrs[6:8]
	taken, err := net.Listen("tcp", inter[1])
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var procs []*proc
	for i := range 2 {
		p := startProc(t, []string{
			"--controller-listen-addr", ctrl[i], "--internal-http-listen-addr", httpAddrs[i],
			"--workers", "1", "--log-level", "debug", "--shutdown-timeout", "5s",
			"--process", fmt.Sprint(i), "--compute-peers", strings.Join(compute, ","), "--peer-connect-timeout", "10m",
			"--interactive-peers", strings.Join(inter, ","),
		})
		t.Cleanup(func() {
			_ = p.cmd.Process.Kill()
			<-p.done
		})
		procs = append(procs, p)
	}
	for i, p := range procs {
		select {
		case <-p.done:
		case <-time.After(90 * time.Second):
			t.Fatalf("process %d still running 90 s after its peer died (peer-connect timeout 10m)\n%s", i, tail(p.stderr.String(), 3000))
		}
		var exit *exec.ExitError
		if err := p.err; err == nil || !asExit(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("process %d exited with %v, want a non-zero exit", i, err)
		}
	}
	if log := procs[0].stderr.String(); !strings.Contains(log, "Lost a peer process") {
		t.Fatalf("process 0's log does not say it lost a peer:\n%s", tail(log, 3000))
	}
}
