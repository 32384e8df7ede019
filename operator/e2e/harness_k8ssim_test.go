//go:build k8ssim

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/render"
)

// Field managers the test writes with when it plays the controller's part; they are the
// controller's (pkg/orchestrator/kubernetes), so the operator meets the same managed fields.
const (
	controllerFieldManager       = "tandem-controller"
	controllerStatusFieldManager = "tandem-controller-status"
)

// sim is a connection to a running simulated cluster and the tools to drive it.
type sim struct {
	kubeconfig string
	bin        string // TANDEM_KUBE_BIN: kubectl and helm
	root       string // repository root
	cfg        *rest.Config
	cs         kubernetes.Interface
	c          client.Client // admin, with the compute.tandem.dev types
	work       string        // scratch directory (helm home, operator binary, kubeconfigs)
}

func newSim(t *testing.T) *sim {
	t.Helper()
	s := &sim{kubeconfig: os.Getenv("TANDEM_KUBE_SIM_KUBECONFIG"), bin: os.Getenv("TANDEM_KUBE_BIN")}
	if s.kubeconfig == "" || s.bin == "" {
		t.Fatal("TANDEM_KUBE_SIM_KUBECONFIG and TANDEM_KUBE_BIN are not set: run this suite with `make test-k8s-sim`")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	s.root = root
	s.work = t.TempDir()
	s.cfg, err = clientcmd.BuildConfigFromFlags("", s.kubeconfig)
	if err != nil {
		t.Fatalf("load %s: %v", s.kubeconfig, err)
	}
	s.cfg.QPS, s.cfg.Burst = 50, 100
	s.cs, err = kubernetes.NewForConfig(s.cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.c, err = newClient(s.cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newClient(cfg *rest.Config) (client.Client, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// run runs one of the cluster tools (kubectl, helm) against the simulated cluster.
func (s *sim) run(ctx context.Context, t *testing.T, tool string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, tool), args...)
	cmd.Dir = s.root
	// Keep helm away from the user's configuration and caches.
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.kubeconfig,
		"HELM_CONFIG_HOME="+s.work+"/helm", "HELM_CACHE_HOME="+s.work+"/helm", "HELM_DATA_HOME="+s.work+"/helm")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %w\n%s", tool, strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

func (s *sim) must(ctx context.Context, t *testing.T, tool string, args ...string) string {
	t.Helper()
	out, err := s.run(ctx, t, tool, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// serviceAccountConfig returns a client config that authenticates as a ServiceAccount with
// a token from the TokenRequest API, and writes it as a kubeconfig file.
func (s *sim) serviceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, string, error) {
	tr, err := s.cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("token for serviceaccount %s/%s: %w", namespace, name, err)
	}
	raw, err := clientcmd.LoadFromFile(s.kubeconfig)
	if err != nil {
		return nil, "", err
	}
	for _, u := range raw.AuthInfos {
		u.Token = tr.Status.Token
	}
	path := filepath.Join(s.work, "kubeconfig-"+name)
	if err := clientcmd.WriteToFile(*raw, path); err != nil {
		return nil, "", err
	}
	cfg := rest.CopyConfig(s.cfg)
	cfg.BearerToken = tr.Status.Token
	return cfg, path, nil
}

// canI asks the API server's authorizer whether a ServiceAccount may do something.
func (s *sim) canI(ctx context.Context, sa string, attrs authorizationv1.ResourceAttributes) (bool, error) {
	ns := strings.Split(sa, ":")[2]
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               sa,
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: &attrs,
	}}
	res, err := s.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return res.Status.Allowed, nil
}

// watchPods feeds every event of the operator's pods in namespace to the tracker, from a
// list taken now, until ctx ends. A RetryWatcher resumes from the last resource version if
// the API server closes the watch, so no event is missed.
func (s *sim) watchPods(ctx context.Context, t *testing.T, namespace string, a *availabilityTracker) {
	t.Helper()
	sel := render.LabelName + "=" + render.AppName
	list, err := s.cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		a.observe(watch.Added, &list.Items[i])
	}
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return s.cs.CoreV1().Pods(namespace).Watch(ctx, o)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer rw.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-rw.ResultChan():
				if !ok {
					return
				}
				if pod, isPod := ev.Object.(*corev1.Pod); isPod {
					a.observe(ev.Type, pod)
				}
			}
		}
	}()
}

// replica reads a ComputeReplica.
func (s *sim) replica(ctx context.Context, namespace, name string) (*v1alpha1.ComputeReplica, error) {
	var cr v1alpha1.ComputeReplica
	err := s.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &cr)
	return &cr, err
}

// waitReplica polls a replica until check returns "" (done); otherwise check says what is
// missing, which is reported on timeout.
func (s *sim) waitReplica(ctx context.Context, t *testing.T, namespace, name string, timeout time.Duration,
	check func(*v1alpha1.ComputeReplica) string) *v1alpha1.ComputeReplica {
	t.Helper()
	var last string
	deadline := time.Now().Add(timeout)
	for {
		cr, err := s.replica(ctx, namespace, name)
		if err != nil {
			last = err.Error()
		} else if last = check(cr); last == "" {
			return cr
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("computereplica %s/%s after %s: %s\nconditions: %s", namespace, name, timeout, last, conditionsText(cr))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// eventually polls f until it returns nil.
func eventually(ctx context.Context, t *testing.T, what string, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("%s: not after %s: %v", what, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// progressing returns "" when the replica's Progressing condition has the status and
// reason, for the current generation; otherwise what it has.
func progressing(status metav1.ConditionStatus, reason string) func(*v1alpha1.ComputeReplica) string {
	return func(cr *v1alpha1.ComputeReplica) string {
		c := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionProgressing)
		switch {
		case c == nil:
			return "no Progressing condition"
		case c.Status != status || c.Reason != reason:
			return fmt.Sprintf("Progressing=%s/%s, want %s/%s", c.Status, c.Reason, status, reason)
		case c.ObservedGeneration != cr.Generation || cr.Status.ObservedGeneration != cr.Generation:
			return fmt.Sprintf("observed generation %d (condition %d), want %d", cr.Status.ObservedGeneration, c.ObservedGeneration, cr.Generation)
		}
		return ""
	}
}

// rolledOut is "" when the replica finished a rollout to its current spec: Available,
// Progressing=False/RolloutComplete, and every pod runs the desired template.
func rolledOut(cr *v1alpha1.ComputeReplica) string {
	if msg := progressing(metav1.ConditionFalse, "RolloutComplete")(cr); msg != "" {
		return msg
	}
	if !meta.IsStatusConditionTrue(cr.Status.Conditions, v1alpha1.ConditionAvailable) {
		return "not Available"
	}
	if cr.Status.CurrentHash == "" || cr.Status.CurrentHash != cr.Status.UpdateHash {
		return fmt.Sprintf("current hash %q, update hash %q", cr.Status.CurrentHash, cr.Status.UpdateHash)
	}
	if int(cr.Status.ReadyProcesses) != int(cr.Spec.Processes) {
		return fmt.Sprintf("%d of %d processes ready", cr.Status.ReadyProcesses, cr.Spec.Processes)
	}
	return ""
}

func conditionsText(cr *v1alpha1.ComputeReplica) string {
	if cr == nil {
		return "-"
	}
	var b strings.Builder
	for _, c := range cr.Status.Conditions {
		fmt.Fprintf(&b, "%s=%s/%s(gen %d) %q; ", c.Type, c.Status, c.Reason, c.ObservedGeneration, c.Message)
	}
	fmt.Fprintf(&b, "generation %d, current %q, update %q", cr.Generation, cr.Status.CurrentHash, cr.Status.UpdateHash)
	return b.String()
}

// fakeController plays the Tandem controller's part towards the operator, with the
// controller's ServiceAccount (so the chart's Role for it is what is exercised) and its
// field managers: it adopts replicas (the managed-by label) and reports them Hydrated.
type fakeController struct {
	c client.Client
}

func (f fakeController) adopt(ctx context.Context, namespace, name string) error {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(v1alpha1.GroupVersion().String())
	u.SetKind(v1alpha1.Kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetLabels(map[string]string{v1alpha1.LabelManagedBy: "tandem-controller"})
	if err := f.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(controllerFieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("adopt computereplica %s/%s: %w", namespace, name, err)
	}
	return nil
}

// hydrate reports the replica Hydrated for its current generation, as the controller does
// once it has connected to the processes and its dataflows caught up.
func (f fakeController) hydrate(ctx context.Context, namespace, name string, generation int64) error {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(v1alpha1.GroupVersion().String())
	u.SetKind(v1alpha1.Kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	cond := map[string]any{
		"type": v1alpha1.ConditionHydrated, "status": "True", "reason": "CaughtUp",
		"message": "dataflows caught up", "observedGeneration": generation,
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}
	if err := unstructured.SetNestedSlice(u.Object, []any{cond}, "status", "conditions"); err != nil {
		return err
	}
	if err := f.c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(controllerStatusFieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("hydrate computereplica %s/%s: %w", namespace, name, err)
	}
	return nil
}

// operatorProcess is cmd/operator running on the host against the simulated cluster.
type operatorProcess struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// buildOperator builds cmd/operator into the scratch directory, or returns the binary
// named by TANDEM_E2E_OPERATOR_BIN (a release build, or a deliberately broken one to see
// the suite fail).
func (s *sim) buildOperator(ctx context.Context, t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("TANDEM_E2E_OPERATOR_BIN"); bin != "" {
		return bin
	}
	out := filepath.Join(s.work, "operator")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/operator")
	cmd.Dir = s.root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/operator: %v\n%s", err, b)
	}
	return out
}

// startOperator starts an operator process as the chart's Deployment would run it (leader
// election in the release namespace), authenticated by kubeconfig.
// The process outlives the step that starts it: it is stopped when the whole test (the
// owner t) ends.
func (s *sim) startOperator(t *testing.T, owner *testing.T, bin, name, kubeconfig, namespace string) *operatorProcess {
	t.Helper()
	p := &operatorProcess{name: name, log: filepath.Join(s.work, name+".log"), done: make(chan struct{})}
	f, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, "--leader-elect=true", "--leader-election-namespace="+namespace,
		"--metrics-bind-address=0", "--health-probe-bind-address=0", "--log-level=info")
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		_ = f.Close()
		close(p.done)
	}()
	owner.Cleanup(func() { p.stop() })
	return p
}

// kill ends the process with SIGKILL: no graceful shutdown, the lease is not released.
func (p *operatorProcess) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop ends the process with SIGTERM, then SIGKILL after 10 s.
func (p *operatorProcess) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.kill()
	}
}

func (p *operatorProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *operatorProcess) tail(n int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// leaseHolder returns the holder of the operator's leader election lease ("" if none).
func (s *sim) leaseHolder(ctx context.Context, namespace string) (string, error) {
	l, err := s.cs.CoordinationV1().Leases(namespace).Get(ctx, "tandem-operator.compute.tandem.dev", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if l.Spec.HolderIdentity == nil {
		return "", errors.New("lease has no holder")
	}
	return *l.Spec.HolderIdentity, nil
}

func ptr[T any](v T) *T { return &v }

// apiextensionsCRD is the kind of CustomResourceDefinitions, read as metadata only.
var apiextensionsCRD = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// copyChart copies a chart directory, leaving out its tests.
func copyChart(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel == "tests" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
}
