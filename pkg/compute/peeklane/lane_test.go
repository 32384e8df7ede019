package peeklane

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/internaltls"
)

// dialEnv makes the test binary a lane client: it dials the unix socket
// named by the variable, says hello and waits to be hung up on
// (TestUnixLaneRefusesOtherUsers runs it as another user).
const dialEnv = "TANDEM_PEEKLANE_TEST_DIAL"

func TestMain(m *testing.M) {
	if path := os.Getenv(echoEnv); path != "" {
		if err := serveEcho(path); err != nil {
			fmt.Println("echo:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	if path := os.Getenv(dialEnv); path != "" {
		cl, err := Dialer{}.Dial(context.Background(), "unix", path, "n1", func(*computepb.Response) {})
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(2)
		}
		select {
		case <-cl.Done():
		case <-time.After(10 * time.Second):
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// attachRecorder accepts every lane and records the nonces it attached
// and the refusals Serve reported.
type attachRecorder struct {
	mu       sync.Mutex
	attached []string
	refused  []error
	changed  chan struct{}
}

func newAttachRecorder() *attachRecorder { return &attachRecorder{changed: make(chan struct{}, 16)} }

func (a *attachRecorder) attach(nonce string, l *ServerLane) (func(*computepb.Command), func(), error) {
	a.mu.Lock()
	a.attached = append(a.attached, nonce)
	a.mu.Unlock()
	a.changed <- struct{}{}
	return func(c *computepb.Command) {
		if p := c.GetPeek(); p != nil {
			l.Send(&computepb.Response{Kind: &computepb.Response_PeekResponse{PeekResponse: &computepb.PeekResponse{Uuid: p.GetUuid()}}})
		}
	}, func() {}, nil
}

func (a *attachRecorder) onRefused(err error) {
	a.mu.Lock()
	a.refused = append(a.refused, err)
	a.mu.Unlock()
	a.changed <- struct{}{}
}

// next waits for the next attach or refusal and reports which.
func (a *attachRecorder) next(t *testing.T) (attached, refused int) {
	t.Helper()
	select {
	case <-a.changed:
	case <-time.After(10 * time.Second):
		t.Fatal("the lane was neither attached nor refused")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.attached), len(a.refused)
}

func serve(t *testing.T, lis net.Listener, cfg ServeConfig, a *attachRecorder) {
	t.Helper()
	cfg.OnRefused = a.onRefused
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = Serve(ctx, lis, cfg, a.attach) }()
	t.Cleanup(func() { cancel(); <-done })
}

// issue makes a deployment CA and a certificate of it.
func issue(tb testing.TB, name string) internaltls.Files {
	tb.Helper()
	auth, err := internaltls.EnsureAuthority(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	f, err := auth.Issue(name)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

func TestTLSLaneRefusesAClientWithoutACertificate(t *testing.T) {
	own := issue(t, "replica")
	scfg, err := internaltls.ServerConfig(own)
	if err != nil {
		t.Fatal(err)
	}
	good, err := internaltls.ClientConfig(own)
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := internaltls.ClientConfig(issue(t, "controller")) // another CA
	if err != nil {
		t.Fatal(err)
	}
	noCert := good.Clone()
	noCert.Certificates, noCert.GetClientCertificate = nil, nil

	a := newAttachRecorder()
	lis := tcpListener(t)
	serve(t, lis, ServeConfig{TLS: scfg}, a)
	addr := lis.Addr().String()
	attachedWant := 0
	for _, c := range []struct {
		name string
		tls  *tls.Config
	}{{"plaintext", nil}, {"no client certificate", noCert}, {"another CA's certificate", stranger}} {
		cl, err := Dialer{TLS: c.tls}.Dial(context.Background(), "tcp", addr, "n1", func(*computepb.Response) {})
		if err == nil {
			cl.Send(&computepb.Command{Kind: &computepb.Command_Peek{Peek: &computepb.Peek{Uuid: "u"}}})
			defer cl.Close()
		}
		attached, refused := a.next(t)
		if attached != attachedWant || refused == 0 {
			t.Fatalf("%s: %d lanes attached, %d refused; want the lane refused", c.name, attached, refused)
		}
	}
	got := make(chan *computepb.Response, 1)
	cl, err := Dialer{TLS: good}.Dial(context.Background(), "tcp", addr, "n1", func(r *computepb.Response) { got <- r })
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	cl.Send(&computepb.Command{Kind: &computepb.Command_Peek{Peek: &computepb.Peek{Uuid: "u1"}}})
	if attached, _ := a.next(t); attached != 1 {
		t.Fatal("the deployment's certificate was not attached")
	}
	select {
	case r := <-got:
		if r.GetPeekResponse().GetUuid() != "u1" {
			t.Fatalf("got %v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer on the lane")
	}
}

// TestUnixLaneRefusesOtherUsers connects as another user (the test binary
// run as nobody) to a socket in a directory that user may enter: the
// peer's credentials refuse it. Needs root to switch users.
func TestUnixLaneRefusesOtherUsers(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	dir, err := os.MkdirTemp("", "peeklane-open-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "lane.sock")
	lis, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	a := newAttachRecorder()
	serve(t, lis, ServeConfig{SameUser: true}, a)
	// A copy of the test binary the other user can run.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "client")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), dialEnv+"="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("client as nobody: %v\n%s", err, out)
	}
	if attached, refused := a.next(t); attached != 0 || refused != 1 {
		t.Fatalf("another user's lane: %d attached, %d refused", attached, refused)
	}
	a.mu.Lock()
	t.Logf("refused: %v", a.refused[0])
	a.mu.Unlock()

	// The same user is attached.
	cl, err := Dialer{}.Dial(context.Background(), "unix", path, "n1", func(*computepb.Response) {})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if attached, _ := a.next(t); attached != 1 {
		t.Fatal("this user's lane was not attached")
	}
}

func TestListenUnixDirectoryIsPrivate(t *testing.T) {
	lis, adv, cleanup, err := ListenUnix(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	_ = lis
	network, path, err := Resolve(adv, "")
	if err != nil || network != "unix" {
		t.Fatalf("Resolve(%q) = %q, %q, %v", adv, network, path, err)
	}
	fi, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Fatalf("lane directory mode %v, want 0700", fi.Mode().Perm())
	}
}

func TestResolve(t *testing.T) {
	for _, c := range []struct{ adv, ctl, network, addr string }{
		{"tcp::4100", "10.0.0.7:2100", "tcp", "10.0.0.7:4100"},
		{"tcp:0.0.0.0:4100", "replica-0.svc:2100", "tcp", "replica-0.svc:4100"},
		{"tcp:127.0.0.1:4100", "10.0.0.7:2100", "tcp", "127.0.0.1:4100"},
		{"unix:/tmp/x/lane.sock", "", "unix", "/tmp/x/lane.sock"},
	} {
		n, a, err := Resolve(c.adv, c.ctl)
		if err != nil || n != c.network || a != c.addr {
			t.Errorf("Resolve(%q, %q) = %q, %q, %v; want %q, %q", c.adv, c.ctl, n, a, err, c.network, c.addr)
		}
	}
	for _, bad := range []string{"", "tcp:", "udp:1.2.3.4:5", "tcp:nohostport"} {
		if _, _, err := Resolve(bad, "1.2.3.4:5"); err == nil {
			t.Errorf("Resolve(%q) accepted", bad)
		}
	}
}
