//go:build k8s

package tests

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// hostNet is the cluster network as the host plays it: every pod is a set of processes on
// loopback, and each port a pod's containers declare is a free loopback address. It resolves
// the names cluster DNS would, "<service>.<namespace>.svc" through the Service's selector and
// target port, and "<pod>.<service>.<namespace>.svc" (a StatefulSet pod behind a headless
// Service) directly, to those addresses.
type hostNet struct {
	namespace string

	mu       sync.Mutex
	services map[string]corev1.Service
	pods     map[string]*hostPod
}

// hostPod is one pod's place on the host network: its labels, its declared container ports
// and the loopback address each one got.
type hostPod struct {
	name   string
	labels map[string]string
	ports  []corev1.ContainerPort
	addrs  map[int32]string // container port -> loopback address
}

func newHostNet(namespace string, services []corev1.Service) *hostNet {
	n := &hostNet{namespace: namespace, services: map[string]corev1.Service{}, pods: map[string]*hostPod{}}
	for _, s := range services {
		n.services[s.Name] = s
	}
	return n
}

// addPod gives every port the pod's containers declare a free loopback address.
func (n *hostNet) addPod(name string, lbls map[string]string, spec corev1.PodSpec) (*hostPod, error) {
	p := &hostPod{name: name, labels: lbls, addrs: map[int32]string{}}
	for _, c := range spec.Containers {
		p.ports = append(p.ports, c.Ports...)
	}
	free, err := freeAddrs(len(p.ports))
	if err != nil {
		return nil, err
	}
	for i, port := range p.ports {
		p.addrs[port.ContainerPort] = free[i]
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pods[name] = p
	return p, nil
}

// listenAddr is the loopback address of a port the pod listens on.
func (p *hostPod) listenAddr(port int32) (string, error) {
	a, ok := p.addrs[port]
	if !ok {
		return "", fmt.Errorf("pod %s listens on port %d, which none of its containers declares", p.name, port)
	}
	return a, nil
}

// portNamed is the loopback address of the pod's port called name.
func (p *hostPod) portNamed(name string) (string, error) {
	for _, port := range p.ports {
		if port.Name == name {
			return p.addrs[port.ContainerPort], nil
		}
	}
	return "", fmt.Errorf("pod %s has no port named %q", p.name, name)
}

// resolve maps a cluster address (host:port) to the loopback address that serves it.
func (n *hostNet) resolve(hostport string) (string, error) {
	host, portText, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", err
	}
	port, err := strconv.ParseInt(portText, 10, 32)
	if err != nil {
		return "", fmt.Errorf("%s: port %q: %w", hostport, portText, err)
	}
	suffix := "." + n.namespace + ".svc"
	i := strings.Index(host, suffix)
	if i < 0 || (i+len(suffix) < len(host) && host[i+len(suffix)] != '.') {
		return "", fmt.Errorf("%s is not a name of namespace %s", host, n.namespace)
	}
	names := strings.Split(host[:i], ".")
	n.mu.Lock()
	defer n.mu.Unlock()
	switch len(names) {
	case 1:
		return n.serviceAddr(names[0], int32(port))
	case 2:
		p := n.pods[names[0]]
		if p == nil {
			return "", fmt.Errorf("%s: no pod %s runs", hostport, names[0])
		}
		return p.listenAddr(int32(port))
	}
	return "", fmt.Errorf("%s: not a service or pod name", hostport)
}

// serviceAddr follows a Service's port to its target port on a pod its selector picks.
func (n *hostNet) serviceAddr(name string, port int32) (string, error) {
	svc, ok := n.services[name]
	if !ok {
		return "", fmt.Errorf("no Service %s", name)
	}
	for _, sp := range svc.Spec.Ports {
		if sp.Port != port {
			continue
		}
		for _, p := range n.pods {
			if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(p.labels)) {
				continue
			}
			if sp.TargetPort.IntValue() != 0 {
				return p.listenAddr(int32(sp.TargetPort.IntValue()))
			}
			return p.portNamed(sp.TargetPort.String())
		}
		return "", fmt.Errorf("Service %s selects no running pod", name)
	}
	return "", fmt.Errorf("Service %s has no port %d", name, port)
}

// startProxy serves HTTP CONNECT on loopback, resolving each target with n: a process given
// it as HTTPS_PROXY (Go's gRPC client honours it) reaches pods by their cluster names.
func (n *hostNet) startProxy(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go n.connect(c)
		}
	}()
	return "http://" + l.Addr().String()
}

// connect answers one CONNECT with a byte pipe to the resolved address, or an error status
// (the client's dial fails and it retries, as against a pod not listening yet).
func (n *hostNet) connect(c net.Conn) {
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
	addr, err := n.resolve(req.Host)
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
	pipe := func(dst net.Conn, src io.Reader) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(up, br)
	go pipe(c, up)
	<-done
	<-done
}

// freeAddrs returns n loopback addresses nothing listens on now.
func freeAddrs(n int) ([]string, error) {
	var out []string
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free port: %w", err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}
