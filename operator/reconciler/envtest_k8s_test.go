//go:build k8s

// These suites run against a real kube-apiserver and etcd (controller-runtime's envtest)
// built by hack/kube-tools.sh; `make test-k8s` sets TANDEM_KUBE_BIN to their directory.
// There is no controller-manager or kubelet: the tests play the StatefulSet controller
// themselves (creating pods from the applied template and marking them ready), which keeps
// every step of a rollout under the test's control and its clock.
package reconciler

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/render"
	"github.com/tandemdb/tandem/operator/rollout"
)

var (
	testCfg    *rest.Config
	testScheme = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	bin := os.Getenv("TANDEM_KUBE_BIN")
	if bin == "" {
		fmt.Fprintln(os.Stderr, "TANDEM_KUBE_BIN is not set: run these tests with `make test-k8s`")
		os.Exit(1)
	}
	if err := clientgoscheme.AddToScheme(testScheme); err != nil {
		panic(err)
	}
	if err := v1alpha1.AddToScheme(testScheme); err != nil {
		panic(err)
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: bin,
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                testScheme,
	}
	start := time.Now()
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start envtest:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "envtest started in %s\n", time.Since(start).Round(time.Millisecond))
	testCfg = cfg
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop envtest:", err)
	}
	os.Exit(code)
}

func newClient(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(testCfg, client.Options{Scheme: testScheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newNamespace(t *testing.T, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func loadSample(t *testing.T, name string) []*v1alpha1.ComputeReplica {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []*v1alpha1.ComputeReplica
	for _, doc := range strings.Split(string(b), "\n---\n") {
		cr := &v1alpha1.ComputeReplica{}
		if err := yaml.UnmarshalStrict([]byte(doc), cr); err != nil {
			t.Fatalf("sample %s: %v", name, err)
		}
		out = append(out, cr)
	}
	return out
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type recordedEvent struct{ object, typ, reason, note string }

type fakeRecorder struct {
	mu     sync.Mutex
	events []recordedEvent
}

func (r *fakeRecorder) Eventf(regarding, _ runtime.Object, typ, reason, _, note string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := ""
	if o, ok := regarding.(client.Object); ok {
		name = o.GetName()
	}
	r.events = append(r.events, recordedEvent{name, typ, reason, fmt.Sprintf(note, args...)})
}

func (r *fakeRecorder) reasons(object string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.object == object {
			out = append(out, e.reason)
		}
	}
	return out
}

func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSampleWithManager runs the reconciler under a real manager (watches, cache, events)
// and checks what applying the sample produces.
func TestSampleWithManager(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(t)
	ns := newNamespace(t, c)

	mgr, err := ctrl.NewManager(testCfg, ctrl.Options{
		Scheme:  testScheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorder(FieldOwner), Clock: &fakeClock{now: time.Now()}}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	cr := loadSample(t, "compute_v1alpha1_computereplica.yaml")[0]
	cr.Namespace = ns
	if err := c.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(cr)

	var sts appsv1.StatefulSet
	eventually(t, "statefulset", func() error { return c.Get(ctx, key, &sts) })
	var svc corev1.Service
	eventually(t, "service", func() error { return c.Get(ctx, key, &svc) })
	var pdb policyv1.PodDisruptionBudget
	eventually(t, "pdb", func() error { return c.Get(ctx, key, &pdb) })

	if sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement || sts.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType {
		t.Errorf("statefulset policy %s/%s", sts.Spec.PodManagementPolicy, sts.Spec.UpdateStrategy.Type)
	}
	if *sts.Spec.Replicas != 2 || sts.Spec.MinReadySeconds != 10 {
		t.Errorf("replicas %d, minReadySeconds %d", *sts.Spec.Replicas, sts.Spec.MinReadySeconds)
	}
	ctr := sts.Spec.Template.Spec.Containers[0]
	wantArgs := []string{
		"--controller-listen-addr=:2100",
		"--workers=4",
		"--compute-peers=quickstart-r1-0.quickstart-r1." + ns + ".svc:2101,quickstart-r1-1.quickstart-r1." + ns + ".svc:2101",
		"--internal-http-listen-addr=:6878",
		"--log-level=info",
	}
	if !slices.Equal(ctr.Args, wantArgs) {
		t.Errorf("args\n got %q\nwant %q", ctr.Args, wantArgs)
	}
	var portNames []string
	for _, p := range ctr.Ports {
		portNames = append(portNames, fmt.Sprintf("%s=%d", p.Name, p.ContainerPort))
	}
	if want := []string{"computectl=2100", "compute=2101", "internal-http=6878"}; !slices.Equal(portNames, want) {
		t.Errorf("container ports %v, want %v", portNames, want)
	}
	if ctr.ReadinessProbe == nil || ctr.ReadinessProbe.HTTPGet.Path != "/readyz" || ctr.ReadinessProbe.HTTPGet.Port.StrVal != "internal-http" {
		t.Errorf("readiness probe %+v", ctr.ReadinessProbe)
	}
	if ctr.LivenessProbe == nil || ctr.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe %+v", ctr.LivenessProbe)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses || len(svc.Spec.Ports) != 3 {
		t.Errorf("service spec %+v", svc.Spec)
	}
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 0 {
		t.Errorf("pdb maxUnavailable %v", pdb.Spec.MaxUnavailable)
	}
	for _, o := range []client.Object{&sts, &svc, &pdb} {
		refs := o.GetOwnerReferences()
		if len(refs) != 1 || refs[0].UID != cr.UID || refs[0].Controller == nil || !*refs[0].Controller {
			t.Errorf("%T owner references %+v", o, refs)
		}
		if !slices.ContainsFunc(o.GetManagedFields(), func(f metav1.ManagedFieldsEntry) bool {
			return f.Manager == FieldOwner && f.Operation == metav1.ManagedFieldsOperationApply
		}) {
			t.Errorf("%T not applied by field manager %s", o, FieldOwner)
		}
	}

	eventually(t, "status", func() error {
		var got v1alpha1.ComputeReplica
		if err := c.Get(ctx, key, &got); err != nil {
			return err
		}
		p := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionProgressing)
		switch {
		case got.Status.ObservedGeneration != got.Generation:
			return fmt.Errorf("observedGeneration %d, generation %d", got.Status.ObservedGeneration, got.Generation)
		case p == nil || p.Status != metav1.ConditionTrue || p.Reason != rollout.ReasonCreating || p.ObservedGeneration != got.Generation:
			return fmt.Errorf("progressing condition %+v", p)
		case len(got.Status.ComputectlAddresses) != 2 || got.Status.ComputectlAddresses[1] != "quickstart-r1-1.quickstart-r1."+ns+".svc:2100":
			return fmt.Errorf("computectl addresses %v", got.Status.ComputectlAddresses)
		case got.Status.UpdateHash != sts.Spec.Template.Labels[render.LabelPodTemplateHash]:
			return fmt.Errorf("update hash %q, template hash %q", got.Status.UpdateHash, sts.Spec.Template.Labels[render.LabelPodTemplateHash])
		}
		return nil
	})
}

// TestCELValidation checks that invalid specs are rejected at admission with clear messages.
func TestCELValidation(t *testing.T) {
	ctx := context.Background()
	c := newClient(t)
	ns := newNamespace(t, c)
	valid := func(name string) *v1alpha1.ComputeReplica {
		return &v1alpha1.ComputeReplica{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:       v1alpha1.ComputeReplicaSpec{ClusterName: "c1", Image: "img", Processes: 1, Workers: 1},
		}
	}
	tests := []struct {
		name string
		mut  func(*v1alpha1.ComputeReplica)
		want string
	}{
		{"too many processes", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Processes = 65 }, "spec.processes: Invalid value: 65: spec.processes in body should be less than or equal to 64"},
		{"too many workers", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Workers = 257 }, "should be less than or equal to 256"},
		{"too many threads", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Processes, cr.Spec.Workers = 64, 17 }, "processes x workers must be at most 1024"},
		{"bad cluster name", func(cr *v1alpha1.ComputeReplica) { cr.Spec.ClusterName = "Bad_Name" }, "spec.clusterName in body should match"},
		{"duplicate ports", func(cr *v1alpha1.ComputeReplica) {
			cr.Spec.Ports = v1alpha1.Ports{Computectl: 3000, Compute: 3000, Interactive: 3001, InternalHTTP: 3002}
		}, "ports must be distinct"},
		{"deadline not above min ready", func(cr *v1alpha1.ComputeReplica) {
			cr.Spec.Rollout = v1alpha1.RolloutSpec{ProgressDeadlineSeconds: 10, MinReadySeconds: 10}
		}, "progressDeadlineSeconds must be greater than minReadySeconds"},
		{"bad pull policy", func(cr *v1alpha1.ComputeReplica) { cr.Spec.ImagePullPolicy = "Sometimes" }, `Unsupported value: "Sometimes"`},
		{"privileged port", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Ports.Computectl = 80 }, "should be greater than or equal to 1024"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cr := valid(fmt.Sprintf("bad-%d", i))
			tc.mut(cr)
			err := c.Create(ctx, cr)
			if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("create: %v\nwant an Invalid error containing %q", err, tc.want)
			}
		})
	}

	t.Run("defaults", func(t *testing.T) {
		cr := &v1alpha1.ComputeReplica{
			ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: ns},
			Spec:       v1alpha1.ComputeReplicaSpec{ClusterName: "c1", Image: "img"},
		}
		if err := c.Create(ctx, cr); err != nil {
			t.Fatal(err)
		}
		s := cr.Spec
		want := v1alpha1.Ports{Computectl: 2100, Compute: 2101, Interactive: 2102, InternalHTTP: 6878}
		if s.Processes != 1 || s.Workers != 1 || s.Ports != want || s.Rollout.ProgressDeadlineSeconds != 600 ||
			s.LogLevel != "info" || s.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("defaults not applied: %+v", s)
		}
	})

	t.Run("cluster name is immutable", func(t *testing.T) {
		cr := valid("immutable")
		if err := c.Create(ctx, cr); err != nil {
			t.Fatal(err)
		}
		cr.Spec.ClusterName = "c2"
		err := c.Update(ctx, cr)
		if err == nil || !strings.Contains(err.Error(), "clusterName is immutable") {
			t.Errorf("update: %v, want clusterName is immutable", err)
		}
		cr.Spec.ClusterName = "c1"
		cr.Spec.Processes = 3
		if err := c.Update(ctx, cr); err != nil {
			t.Errorf("scaling a replica was rejected: %v", err)
		}
	})
}

// cluster is a namespace with replicas reconciled by direct calls under a fake clock,
// with the test playing the StatefulSet controller.
type cluster struct {
	t     *testing.T
	ctx   context.Context
	c     client.Client
	ns    string
	name  string
	clock *fakeClock
	rec   *fakeRecorder
	r     *Reconciler
}

func newCluster(t *testing.T, name string) *cluster {
	c := newClient(t)
	cl := &cluster{t: t, ctx: context.Background(), c: c, ns: newNamespace(t, c), name: name,
		clock: &fakeClock{now: time.Now().UTC().Truncate(time.Second)}, rec: &fakeRecorder{}}
	cl.r = &Reconciler{Client: c, APIReader: c, Recorder: cl.rec, Clock: cl.clock}
	return cl
}

func (cl *cluster) create(crs ...*v1alpha1.ComputeReplica) {
	for _, cr := range crs {
		cr.Namespace = cl.ns
		if err := cl.c.Create(cl.ctx, cr); err != nil {
			cl.t.Fatal(err)
		}
	}
}

func (cl *cluster) reconcile() {
	cl.t.Helper()
	if _, err := cl.r.Reconcile(cl.ctx, ClusterRequest(cl.ns, cl.name)); err != nil {
		cl.t.Fatalf("reconcile: %v", err)
	}
}

// playStatefulSets creates the missing pods of every StatefulSet from its current template
// and, when ready is true, marks pods Ready (as the kubelet would after the readiness probe).
func (cl *cluster) playStatefulSets(ready bool) {
	cl.t.Helper()
	var list appsv1.StatefulSetList
	if err := cl.c.List(cl.ctx, &list, client.InNamespace(cl.ns)); err != nil {
		cl.t.Fatal(err)
	}
	for _, sts := range list.Items {
		for i := range int(*sts.Spec.Replicas) {
			name := fmt.Sprintf("%s-%d", sts.Name, i)
			var pod corev1.Pod
			err := cl.c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: name}, &pod)
			if apierrors.IsNotFound(err) {
				pod = corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cl.ns, Labels: sts.Spec.Template.Labels},
					Spec:       sts.Spec.Template.Spec,
				}
				if err := cl.c.Create(cl.ctx, &pod); err != nil {
					cl.t.Fatal(err)
				}
			} else if err != nil {
				cl.t.Fatal(err)
			}
			if ready && !isReady(&pod) {
				pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
					LastTransitionTime: metav1.NewTime(cl.clock.Now())}}
				if err := cl.c.Status().Update(cl.ctx, &pod); err != nil {
					cl.t.Fatal(err)
				}
			}
		}
	}
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (cl *cluster) get(name string) *v1alpha1.ComputeReplica {
	cl.t.Helper()
	var cr v1alpha1.ComputeReplica
	if err := cl.c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: name}, &cr); err != nil {
		cl.t.Fatal(err)
	}
	return &cr
}

func (cl *cluster) condition(name, typ string) metav1.Condition {
	cl.t.Helper()
	cr := cl.get(name)
	c := meta.FindStatusCondition(cr.Status.Conditions, typ)
	if c == nil {
		cl.t.Fatalf("%s has no %s condition: %+v", name, typ, cr.Status.Conditions)
	}
	if typ != v1alpha1.ConditionHydrated && (c.ObservedGeneration != cr.Generation || cr.Status.ObservedGeneration != cr.Generation) {
		cl.t.Errorf("%s %s observedGeneration %d/%d, generation %d", name, typ, c.ObservedGeneration, cr.Status.ObservedGeneration, cr.Generation)
	}
	return *c
}

// step reconciles, plays the StatefulSets and advances the clock.
func (cl *cluster) step(ready bool) {
	cl.reconcile()
	cl.playStatefulSets(ready)
	cl.clock.Advance(5 * time.Second)
}

func (cl *cluster) setInteractive(names []string, on bool) {
	cl.t.Helper()
	for _, n := range names {
		cr := cl.get(n)
		cr.Spec.InteractiveRuntime = on
		if err := cl.c.Update(cl.ctx, cr); err != nil {
			cl.t.Fatal(err)
		}
	}
}

func (cl *cluster) available(name string) bool {
	return cl.condition(name, v1alpha1.ConditionAvailable).Status == metav1.ConditionTrue
}

// TestRolloutOneReplicaAtATime applies the three-replica sample, brings it up, flips
// interactiveRuntime on every replica, and checks that replicas roll one at a time, each
// losing all its pods together, with never two down, and end up running the new template.
func TestRolloutOneReplicaAtATime(t *testing.T) {
	cl := newCluster(t, "prod")
	crs := loadSample(t, "compute_v1alpha1_computereplica_cluster.yaml")
	var names []string
	for _, cr := range crs {
		names = append(names, cr.Name)
	}
	cl.create(crs...)
	for range 4 {
		cl.step(true)
	}
	for _, n := range names {
		if !cl.available(n) {
			t.Fatalf("%s not available after creation: %+v", n, cl.get(n).Status)
		}
		if p := cl.condition(n, v1alpha1.ConditionProgressing); p.Reason != rollout.ReasonRolloutComplete && p.Reason != rollout.ReasonUpToDate {
			t.Fatalf("%s progressing %+v", n, p)
		}
	}

	cl.setInteractive(names, true)
	var rolled []string
	for step := 0; step < 30; step++ {
		cl.reconcile()
		down := 0
		for _, n := range names {
			cr := cl.get(n)
			if !cl.available(n) {
				down++
			}
			if p := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionProgressing); p != nil &&
				p.Reason == rollout.ReasonRolloutStarted && !slices.Contains(rolled, n) {
				rolled = append(rolled, n)
				// All of the replica's pods are gone at once.
				var pods corev1.PodList
				if err := cl.c.List(cl.ctx, &pods, client.InNamespace(cl.ns), client.MatchingLabels{render.LabelReplica: n}); err != nil {
					t.Fatal(err)
				}
				if len(pods.Items) != 0 {
					t.Errorf("%s: %d pods left after the rollout started", n, len(pods.Items))
				}
				if cr.Status.RolloutStartTime == nil {
					t.Errorf("%s: rollout started without a start time", n)
				}
			}
		}
		if down > 1 {
			t.Fatalf("step %d: %d replicas down at once", step, down)
		}
		cl.playStatefulSets(true)
		cl.clock.Advance(5 * time.Second)
	}
	if !slices.Equal(rolled, names) {
		t.Fatalf("rolled %v, want each of %v once, in order", rolled, names)
	}
	for _, n := range names {
		cr := cl.get(n)
		if !cl.available(n) || cr.Status.CurrentHash != cr.Status.UpdateHash || cr.Status.RolloutStartTime != nil {
			t.Errorf("%s did not finish: %+v", n, cr.Status)
		}
		var sts appsv1.StatefulSet
		if err := cl.c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: n}, &sts); err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(sts.Spec.Template.Spec.Containers[0].Args, func(a string) bool { return strings.HasPrefix(a, "--interactive-peers=") }) {
			t.Errorf("%s: statefulset args lack --interactive-peers", n)
		}
		if got := cl.rec.reasons(n); !slices.Contains(got, "RolloutStarted") || !slices.Contains(got, "RolloutCompleted") {
			t.Errorf("%s events %v", n, got)
		}
	}
}

// TestPausedAndDeadline checks that a paused replica is not rolled, and that a rollout whose
// pods never become ready turns Progressing False with ProgressDeadlineExceeded and keeps
// blocking the rest of the cluster.
func TestPausedAndDeadline(t *testing.T) {
	cl := newCluster(t, "c")
	mk := func(name string, paused bool) *v1alpha1.ComputeReplica {
		return &v1alpha1.ComputeReplica{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ComputeReplicaSpec{ClusterName: "c", Image: "img", Processes: 2, Workers: 1,
				Rollout: v1alpha1.RolloutSpec{Paused: paused, ProgressDeadlineSeconds: 60}},
		}
	}
	cl.create(mk("a", false), mk("b", false))
	for range 3 {
		cl.step(true)
	}

	// Pause b, then change both.
	b := cl.get("b")
	b.Spec.Rollout.Paused = true
	if err := cl.c.Update(cl.ctx, b); err != nil {
		t.Fatal(err)
	}
	cl.setInteractive([]string{"a", "b"}, true)
	cl.reconcile()
	if p := cl.condition("b", v1alpha1.ConditionProgressing); p.Status != metav1.ConditionFalse || p.Reason != rollout.ReasonPaused {
		t.Errorf("paused replica progressing %+v", p)
	}
	if p := cl.condition("a", v1alpha1.ConditionProgressing); p.Reason != rollout.ReasonRolloutStarted {
		t.Fatalf("a progressing %+v", p)
	}
	// a's new pods come up but never become ready.
	for range 13 {
		cl.playStatefulSets(false)
		cl.clock.Advance(5 * time.Second)
		cl.reconcile()
	}
	p := cl.condition("a", v1alpha1.ConditionProgressing)
	if p.Status != metav1.ConditionFalse || p.Reason != rollout.ReasonProgressDeadlineExceeded {
		t.Errorf("a progressing %+v, want False/ProgressDeadlineExceeded", p)
	}
	if d := cl.condition("a", v1alpha1.ConditionDegraded); d.Status != metav1.ConditionTrue {
		t.Errorf("a degraded %+v", d)
	}
	if !slices.Contains(cl.rec.reasons("a"), rollout.ReasonProgressDeadlineExceeded) {
		t.Errorf("no ProgressDeadlineExceeded event: %v", cl.rec.reasons("a"))
	}
	// Unpausing b does not roll it while a is stuck.
	b = cl.get("b")
	b.Spec.Rollout.Paused = false
	if err := cl.c.Update(cl.ctx, b); err != nil {
		t.Fatal(err)
	}
	cl.reconcile()
	if p := cl.condition("b", v1alpha1.ConditionProgressing); p.Reason != rollout.ReasonWaitingForTurn {
		t.Errorf("b progressing %+v, want WaitingForTurn", p)
	}
	// a's pods become ready: a completes, then b rolls.
	for range 4 {
		cl.step(true)
	}
	if p := cl.condition("a", v1alpha1.ConditionProgressing); p.Reason != rollout.ReasonRolloutComplete {
		t.Errorf("a progressing %+v, want RolloutComplete", p)
	}
	if !slices.Contains(cl.rec.reasons("b"), "RolloutStarted") {
		t.Errorf("b never started rolling: %v", cl.rec.reasons("b"))
	}
}

// TestHydrationGate checks that, for a replica managed by a controller, the operator waits for
// the controller's Hydrated condition (written with another field manager, and kept by the
// operator's status applies) before counting the rollout complete.
func TestHydrationGate(t *testing.T) {
	cl := newCluster(t, "h")
	cr := &v1alpha1.ComputeReplica{
		ObjectMeta: metav1.ObjectMeta{Name: "h1", Labels: map[string]string{v1alpha1.LabelManagedBy: "tandem-controller"}},
		Spec:       v1alpha1.ComputeReplicaSpec{ClusterName: "h", Image: "img", Processes: 1, Workers: 1},
	}
	cl.create(cr)
	for range 3 {
		cl.step(true)
	}
	if p := cl.condition("h1", v1alpha1.ConditionProgressing); p.Reason != rollout.ReasonWaitingForHydration {
		t.Fatalf("progressing %+v, want WaitingForHydration", p)
	}
	// The controller reports Hydrated with its own field manager.
	got := cl.get("h1")
	hydrated := metav1.Condition{Type: v1alpha1.ConditionHydrated, Status: metav1.ConditionTrue, Reason: "CaughtUp",
		Message: "all dataflows caught up", ObservedGeneration: got.Generation, LastTransitionTime: metav1.NewTime(cl.clock.Now())}
	patch := &v1alpha1.ComputeReplica{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion().String(), Kind: v1alpha1.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: "h1", Namespace: cl.ns},
		Status:     v1alpha1.ComputeReplicaStatus{Conditions: []metav1.Condition{hydrated}},
	}
	u, err := toApplyObject(patch, "spec")
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.c.Status().Apply(cl.ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("tandem-controller")); err != nil {
		t.Fatal(err)
	}
	cl.step(true)
	if p := cl.condition("h1", v1alpha1.ConditionProgressing); p.Reason != rollout.ReasonRolloutComplete {
		t.Errorf("progressing %+v, want RolloutComplete", p)
	}
	if h := cl.condition("h1", v1alpha1.ConditionHydrated); h.Status != metav1.ConditionTrue || h.Reason != "CaughtUp" {
		t.Errorf("the operator's status apply clobbered Hydrated: %+v", h)
	}
}

// TestRestartMidRollout checks that an operator restarted after it recorded a rollout and
// applied the new template, but before all old pods were gone, deletes the rest and finishes.
func TestRestartMidRollout(t *testing.T) {
	cl := newCluster(t, "m")
	cl.create(&v1alpha1.ComputeReplica{
		ObjectMeta: metav1.ObjectMeta{Name: "m1"},
		Spec:       v1alpha1.ComputeReplicaSpec{ClusterName: "m", Image: "img", Processes: 3, Workers: 1},
	})
	for range 3 {
		cl.step(true)
	}
	cl.setInteractive([]string{"m1"}, true)
	// Simulate an operator that recorded the rollout and applied the template, then died
	// after deleting only one pod: pods 1 and 2 still carry the old hash.
	cl.reconcile()
	cl.playStatefulSets(true) // pods recreated with the new template
	var pods corev1.PodList
	if err := cl.c.List(cl.ctx, &pods, client.InNamespace(cl.ns)); err != nil {
		t.Fatal(err)
	}
	newHash := cl.get("m1").Status.UpdateHash
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Name == "m1-0" {
			continue
		}
		p.Labels[render.LabelPodTemplateHash] = "stale"
		if err := cl.c.Update(cl.ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	// A fresh reconciler (a restarted operator) finishes the job.
	cl.r = &Reconciler{Client: cl.c, APIReader: cl.c, Recorder: cl.rec, Clock: cl.clock}
	cl.reconcile()
	if p := cl.condition("m1", v1alpha1.ConditionProgressing); p.Reason != rollout.ReasonRollingPods {
		t.Errorf("progressing %+v, want RollingPods", p)
	}
	if err := cl.c.List(cl.ctx, &pods, client.InNamespace(cl.ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Labels[render.LabelPodTemplateHash] != newHash {
			t.Errorf("pod %s with hash %s survived", p.Name, p.Labels[render.LabelPodTemplateHash])
		}
	}
	for range 3 {
		cl.step(true)
	}
	if p := cl.condition("m1", v1alpha1.ConditionProgressing); p.Reason != rollout.ReasonRolloutComplete {
		t.Errorf("progressing %+v, want RolloutComplete", p)
	}
}
