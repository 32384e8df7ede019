package e2e

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/tandemdb/tandem/operator/render"
)

// replicaPodSelector selects the pods of every replica (and nothing else the chart runs).
const replicaPodSelector = render.LabelName + "=" + render.AppName

// hostPods plays the part of kwok that kwok cannot: it runs a real replica process on the
// host for each simulated pod of a ComputeReplica. A replica's processes share fate, as
// in a real cluster where a process that loses a peer exits: once every pod of a replica
// (the StatefulSet's ordinals 0..n-1) is scheduled and Running, it starts one incarnation of
// n processes, process i for pod ordinal i, with the pod's --workers and runtimes; when any
// of those pods is marked for deletion, deleted or replaced, it ends the whole incarnation.
// It learns about pods from a watch, so a pod's life and its process's follow each other
// without polling. It also judges availability from the processes' side: a cluster that
// once had two replicas running must never be left with none (clusterOutages).
//
// The processes listen on free loopback ports, not on the pod's ports: proxy (a CONNECT
// proxy the controller is pointed at with HTTPS_PROXY) maps a pod's DNS name to its
// process's compute protocol port, as cluster DNS would map it to the pod's IP.
type hostPods struct {
	t           *testing.T
	cs          kubernetes.Interface
	namespace   string
	replicaBin  string
	storageAddr string
	logDir      string

	mu   sync.Mutex
	pods map[string]*corev1.Pod // the replica pods of the namespace, by name
	incs map[string]*incarnation
	// started counts the incarnations each replica had.
	started map[string]int
	// clusterOf is each replica's cluster; served is the clusters that once had two
	// replicas with processes at the same time; outages are the moments one of those was
	// left with none.
	clusterOf map[string]string
	served    map[string]bool
	outages   []string
	stopped   bool
}

// incarnation is one run of a replica's processes, for one set of its pods.
type incarnation struct {
	pods  []types.UID // by ordinal
	procs []*hostProcess
}

type hostProcess struct {
	pod     string
	ctlAddr string
	// httpAddr serves the process's /metrics.
	httpAddr string
	cmd      *exec.Cmd
	done     chan struct{}
}

func newHostPods(t *testing.T, cs kubernetes.Interface, namespace, replicaBin, storageAddr string) *hostPods {
	h := &hostPods{t: t, cs: cs, namespace: namespace, replicaBin: replicaBin, storageAddr: storageAddr,
		logDir: t.TempDir(), pods: map[string]*corev1.Pod{}, incs: map[string]*incarnation{}, started: map[string]int{},
		clusterOf: map[string]string{}, served: map[string]bool{}}
	t.Cleanup(func() {
		if t.Failed() {
			h.logTails(30)
		}
	})
	return h
}

// run follows the namespace's replica pods until ctx ends, then ends every process.
func (h *hostPods) run(ctx context.Context) error {
	list, err := h.cs.CoreV1().Pods(h.namespace).List(ctx, metav1.ListOptions{LabelSelector: replicaPodSelector})
	if err != nil {
		return fmt.Errorf("list pods in %s: %w", h.namespace, err)
	}
	for i := range list.Items {
		h.observe(watch.Added, &list.Items[i])
	}
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = replicaPodSelector
			return h.cs.CoreV1().Pods(h.namespace).Watch(ctx, o)
		},
	})
	if err != nil {
		return fmt.Errorf("watch pods in %s: %w", h.namespace, err)
	}
	go func() {
		defer rw.Stop()
		defer h.stopAll()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-rw.ResultChan():
				if !ok {
					return
				}
				if pod, isPod := ev.Object.(*corev1.Pod); isPod {
					h.observe(ev.Type, pod)
				}
			}
		}
	}()
	return nil
}

// observe records a pod event and brings its replica's processes in line.
func (h *hostPods) observe(typ watch.EventType, pod *corev1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return
	}
	if typ == watch.Deleted {
		delete(h.pods, pod.Name)
	} else {
		h.pods[pod.Name] = pod.DeepCopy()
	}
	if r := pod.Labels[render.LabelReplica]; r != "" {
		h.syncLocked(r)
	}
}

// live reports whether a pod would have its container running: bound, Running, not
// marked for deletion.
func live(p *corev1.Pod) bool {
	return p != nil && p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil
}

func (h *hostPods) syncLocked(replica string) {
	if inc := h.incs[replica]; inc != nil {
		for i, uid := range inc.pods {
			if p := h.pods[fmt.Sprintf("%s-%d", replica, i)]; !live(p) || p.UID != uid {
				h.t.Logf("host pods: %s pod %d gone: ending its incarnation", replica, i)
				inc.stop()
				delete(h.incs, replica)
				h.checkClusterLocked(replica)
				break
			}
		}
	}
	if h.incs[replica] != nil {
		return
	}
	first := h.pods[replica+"-0"]
	if !live(first) {
		return
	}
	args := podArgs(first)
	n := len(splitList(args["--compute-peers"]))
	pods := make([]*corev1.Pod, n)
	for i := range n {
		p := h.pods[fmt.Sprintf("%s-%d", replica, i)]
		if !live(p) || podArgs(p)["--compute-peers"] != args["--compute-peers"] {
			return // not every pod of this template is up yet
		}
		pods[i] = p
	}
	inc, err := h.start(replica, pods, args)
	if err != nil {
		h.t.Errorf("host pods: start %s: %v", replica, err)
		return
	}
	h.incs[replica] = inc
	h.started[replica]++
	h.clusterOf[replica] = first.Labels[render.LabelCluster]
	if len(h.runningLocked(h.clusterOf[replica])) >= 2 {
		h.served[h.clusterOf[replica]] = true
	}
}

// runningLocked names the replicas of a cluster that have processes now.
func (h *hostPods) runningLocked(cluster string) []string {
	var out []string
	for r := range h.incs {
		if h.clusterOf[r] == cluster {
			out = append(out, r)
		}
	}
	return out
}

// checkClusterLocked records an outage when replica's processes ended and no other
// replica of its cluster has any, in a cluster that had two replicas running: reads of
// the cluster then wait for a replica to come back.
func (h *hostPods) checkClusterLocked(replica string) {
	c := h.clusterOf[replica]
	if h.served[c] && len(h.runningLocked(c)) == 0 {
		h.outages = append(h.outages, fmt.Sprintf("%s: cluster %s has no replica process (%s ended last)",
			time.Now().Format(time.StampMilli), c, replica))
	}
}

// clusterOutages are the moments a cluster that had two replicas running had none.
func (h *hostPods) clusterOutages() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.outages)
}

// start runs one process per pod, with the shape the pods' arguments give.
func (h *hostPods) start(replica string, pods []*corev1.Pod, args map[string]string) (*incarnation, error) {
	_, interactive := args["--interactive-peers"]
	nports := 5 // computectl, compute, internal-http, interactive, peek lane

	ports := make([][]string, len(pods))
	for i := range pods {
		ps, err := freePorts(nports)
		if err != nil {
			return nil, err
		}
		ports[i] = ps
	}
	peers := func(k int) string {
		var out []string
		for _, ps := range ports {
			out = append(out, ps[k])
		}
		return strings.Join(out, ",")
	}
	inc := &incarnation{}
	for i, pod := range pods {
		a := []string{
			"--controller-listen-addr=" + ports[i][0],
			"--compute-listen-addr=" + ports[i][1],
			"--internal-http-listen-addr=" + ports[i][2],
			"--compute-peers=" + peers(1),
			"--process=" + strconv.Itoa(i),
			"--workers=" + cmp.Or(args["--workers"], "1"),
			"--log-level=" + cmp.Or(args["--log-level"], "info"),
			"--storage-addr=" + h.storageAddr,
		}
		if interactive {
			a = append(a, "--interactive-peers="+peers(3))
		}
		a = append(a, lanePortArgs(pod, args, ports[i][4])...)
		p, err := h.startProcess(pod.Name, ports[i][0], a)
		if err != nil {
			inc.stop()
			return nil, err
		}
		p.httpAddr = ports[i][2]
		inc.pods = append(inc.pods, pod.UID)
		inc.procs = append(inc.procs, p)
	}
	h.t.Logf("host pods: %s: started %d process(es) for pods on %s", replica, len(pods), pods[0].Spec.NodeName)
	return inc, nil
}

func (h *hostPods) startProcess(pod, ctlAddr string, args []string) (*hostProcess, error) {
	f, err := os.OpenFile(filepath.Join(h.logDir, pod+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(f, "--- %s %s\n", time.Now().Format(time.StampMilli), strings.Join(args, " "))
	p := &hostProcess{pod: pod, ctlAddr: ctlAddr, cmd: exec.Command(h.replicaBin, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start replica process for pod %s: %w", pod, err)
	}
	go func() {
		err := p.cmd.Wait()
		fmt.Fprintf(f, "--- %s exited: %v\n", time.Now().Format(time.StampMilli), err)
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// stop ends every process of the incarnation: SIGKILL, as a node that loses a pod does
// not wait for the process (kwok deletes pods with no grace period).
func (inc *incarnation) stop() {
	for _, p := range inc.procs {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	for _, p := range inc.procs {
		<-p.done
	}
}

func (h *hostPods) stopAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	for r, inc := range h.incs {
		inc.stop()
		delete(h.incs, r)
	}
}

// incarnations returns how many incarnations each replica had so far.
func (h *hostPods) incarnations() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for r, n := range h.started {
		out[r] = n
	}
	return out
}

// resolve maps "<pod>.<service>.<namespace>.svc:<port>" to the compute protocol address of
// the pod's process, if the pod has one now. Only the computectl port is served.
func (h *hostPods) resolve(hostport string) (string, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", err
	}
	labels := strings.Split(host, ".")
	if len(labels) < 3 || labels[2] != h.namespace {
		return "", fmt.Errorf("%s is not a pod of namespace %s", host, h.namespace)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	pod := h.pods[labels[0]]
	if pod == nil {
		return "", fmt.Errorf("no pod %s", labels[0])
	}
	if want := containerPort(pod, render.PortComputectl); port != want {
		return "", fmt.Errorf("pod %s: port %s is not its computectl port %s", pod.Name, port, want)
	}
	inc := h.incs[pod.Labels[render.LabelReplica]]
	if inc == nil {
		return "", fmt.Errorf("pod %s runs no process", pod.Name)
	}
	i := slices.Index(inc.pods, pod.UID)
	if i < 0 {
		return "", fmt.Errorf("pod %s (uid %s) runs no process", pod.Name, pod.UID)
	}
	return inc.procs[i].ctlAddr, nil
}

func (h *hostPods) logTails(n int) {
	files, _ := filepath.Glob(filepath.Join(h.logDir, "*.log"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		h.t.Logf("%s (last %d lines):\n%s", filepath.Base(f), n, strings.Join(lines[max(0, len(lines)-n):], "\n"))
	}
}

// podArgs maps the replica container's "--flag=value" arguments to their values.
func podArgs(p *corev1.Pod) map[string]string {
	out := map[string]string{}
	for _, c := range p.Spec.Containers {
		if c.Name != render.ContainerName {
			continue
		}
		for _, a := range c.Args {
			k, v, _ := strings.Cut(a, "=")
			out[k] = v
		}
	}
	return out
}

func containerPort(p *corev1.Pod, name string) string {
	for _, c := range p.Spec.Containers {
		for _, port := range c.Ports {
			if port.Name == name {
				return strconv.Itoa(int(port.ContainerPort))
			}
		}
	}
	return ""
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// freePorts returns n loopback addresses nothing listens on now.
func freePorts(n int) ([]string, error) {
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
