//go:build k8ssim

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The controller on the host. It runs cmd/controller with --orchestrator=kubernetes and a
// kubeconfig for the simulated cluster, so it creates, adopts and reports Hydrated on
// ComputeReplicas as it would in a pod; it reaches the replicas' pods by their DNS names
// (the addresses the operator publishes), which the simulated cluster cannot resolve.
// Its gRPC client honours HTTPS_PROXY (an HTTP CONNECT proxy, to which it sends the
// unresolved host name), so the harness points it at podProxy, which resolves a pod's name
// to its host process (hostPods.resolve). The API server is on loopback, which Go's
// clients never proxy. Nothing in the controller is changed for the test.

// podProxy is an HTTP CONNECT proxy that resolves pod DNS names with resolve.
type podProxy struct {
	l       net.Listener
	resolve func(hostport string) (string, error)
}

func startPodProxy(t *testing.T, resolve func(string) (string, error)) *podProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &podProxy{l: l, resolve: resolve}
	go p.serve()
	t.Cleanup(func() { l.Close() })
	return p
}

func (p *podProxy) url() string { return "http://" + p.l.Addr().String() }

func (p *podProxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

// handle answers one CONNECT: 200 and a byte pipe to the pod's process, or 503 when the pod
// has no process now (the controller's dial fails and it retries, as against a pod whose
// process is not listening yet).
func (p *podProxy) handle(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	if req.Method != http.MethodConnect {
		fmt.Fprintf(c, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
		return
	}
	addr, err := p.resolve(req.Host)
	if err != nil {
		fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
		return
	}
	up, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	defer up.Close()
	if _, err := fmt.Fprintf(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, br); closeWrite(up); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); closeWrite(c); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// buildBinaries builds cmd/controller and cmd/replica once into the scratch directory.
func (s *sim) buildBinaries(ctx context.Context, t *testing.T) (controller, replica string) {
	t.Helper()
	// `make test` builds both once for every package that runs them and
	// names the directory in TANDEM_TEST_BIN_DIR.
	if dir := os.Getenv("TANDEM_TEST_BIN_DIR"); dir != "" {
		controller, replica = filepath.Join(dir, "controller"), filepath.Join(dir, "replica")
		for _, f := range []string{controller, replica} {
			if _, err := os.Stat(f); err != nil {
				t.Fatalf("TANDEM_TEST_BIN_DIR: %v", err)
			}
		}
		return controller, replica
	}
	dir := filepath.Join(s.work, "bin")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+"/", "./cmd/controller", "./cmd/replica")
	cmd.Dir = s.root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/controller ./cmd/replica: %v\n%s", err, b)
	}
	return filepath.Join(dir, "controller"), filepath.Join(dir, "replica")
}

// hostController is cmd/controller running on the host.
type hostController struct {
	cmd    *exec.Cmd
	log    string
	pgwire string
	done   chan struct{}
}

// startController runs the controller against namespace with the admin kubeconfig, its
// storage service on storageAddr, its replica dials through proxy; it returns once the
// controller printed its pgwire address. It is stopped when owner ends.
func (s *sim) startController(t, owner *testing.T, bin, namespace, storageAddr, proxy string) *hostController {
	t.Helper()
	dir := filepath.Join(s.work, "controller-"+namespace)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hc := &hostController{log: filepath.Join(dir, "controller.log"), done: make(chan struct{})}
	logf, err := os.Create(hc.log)
	if err != nil {
		t.Fatal(err)
	}
	hc.cmd = exec.Command(bin, "--orchestrator=kubernetes", "--kubeconfig="+s.kubeconfig,
		"--kubernetes-namespace="+namespace, "--replica-image=tandem/tandem:reads",
		"--data-dir="+filepath.Join(dir, "data"), "--pgwire-listen-addr=127.0.0.1:0",
		"--http-listen-addr=127.0.0.1:0", "--storage-listen-addr="+storageAddr, "--log-level=info")
	hc.cmd.Env = append(os.Environ(), "HTTPS_PROXY="+proxy, "https_proxy="+proxy, "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	stdout, err := hc.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	hc.cmd.Stderr = logf
	if err := hc.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = hc.cmd.Wait()
		logf.Close()
		close(hc.done)
	}()
	owner.Cleanup(func() {
		hc.stop()
		if owner.Failed() {
			owner.Logf("controller log tail:\n%s", tailFile(hc.log, 60))
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var host, port string
			if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "SQL:"); ok {
				if _, err := fmt.Sscanf(strings.TrimSpace(rest), "psql -h %s -p %s", &host, &port); err == nil {
					addr <- net.JoinHostPort(host, port)
				}
			}
		}
	}()
	select {
	case hc.pgwire = <-addr:
	case <-hc.done:
		t.Fatalf("controller exited before serving:\n%s", tailFile(hc.log, 40))
	case <-time.After(time.Minute):
		t.Fatalf("controller printed no SQL address within a minute:\n%s", tailFile(hc.log, 40))
	}
	return hc
}

func (hc *hostController) stop() {
	select {
	case <-hc.done:
		return
	default:
	}
	_ = hc.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-hc.done:
	case <-time.After(10 * time.Second):
		_ = hc.cmd.Process.Kill()
		<-hc.done
	}
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
