package reconciler

// The harness below drives the reconciler by direct calls under a fake clock, with the test
// playing the StatefulSet controller (creating pods from the applied template, marking them
// ready). The same scenarios run against the fake client (fake_test.go, always) and against
// a real API server (envtest_k8s_test.go, with `make test-k8s`).

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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/render"
	"github.com/tandemdb/tandem/operator/rollout"
)

func newNamespace(t *testing.T, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	// Pods need the namespace's default ServiceAccount, which only a controller-manager
	// would create.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns.Name}}
	if err := c.Create(context.Background(), sa); err != nil && !apierrors.IsAlreadyExists(err) {
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

func countReason(reasons []string, reason string) int {
	n := 0
	for _, r := range reasons {
		if r == reason {
			n++
		}
	}
	return n
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

// withDefaults fills in the CRD's defaults, which the fake client (unlike the API server)
// does not apply.
func withDefaults(cr *v1alpha1.ComputeReplica) {
	s := &cr.Spec
	if s.Processes == 0 {
		s.Processes = 1
	}
	if s.Workers == 0 {
		s.Workers = 1
	}
	if s.ImagePullPolicy == "" {
		s.ImagePullPolicy = corev1.PullIfNotPresent
	}
	if s.LogLevel == "" {
		s.LogLevel = "info"
	}
	if s.Ports == (v1alpha1.Ports{}) {
		s.Ports = v1alpha1.Ports{Computectl: v1alpha1.DefaultComputectlPort, Compute: v1alpha1.DefaultComputePort,
			Interactive: v1alpha1.DefaultInteractivePort, InternalHTTP: v1alpha1.DefaultInternalHTTPPort, PeekLane: v1alpha1.DefaultPeekLanePort}
	}
	if s.Rollout.ProgressDeadlineSeconds == 0 {
		s.Rollout.ProgressDeadlineSeconds = 600
	}
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
	// nodeOf, when set, names the node a pod created by playStatefulSets runs on.
	nodeOf func(pod string) string
}

func newCluster(t *testing.T, name string, c client.Client) *cluster {
	cl := &cluster{t: t, ctx: context.Background(), c: c, ns: newNamespace(t, c), name: name,
		clock: &fakeClock{now: time.Now().UTC().Truncate(time.Second)}, rec: &fakeRecorder{}}
	cl.r = &Reconciler{Client: c, APIReader: c, Recorder: cl.rec, Clock: cl.clock}
	return cl
}

func (cl *cluster) create(crs ...*v1alpha1.ComputeReplica) {
	for _, cr := range crs {
		cr.Namespace = cl.ns
		withDefaults(cr)
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
				if cl.nodeOf != nil {
					pod.Spec.NodeName = cl.nodeOf(name)
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

// scenarioRolloutOneReplicaAtATime applies the three-replica sample, brings it up, flips
// interactiveRuntime on every replica, and checks that replicas roll one at a time, each
// losing all its pods together, with never two down, and end up running the new template.
func scenarioRolloutOneReplicaAtATime(t *testing.T, c client.Client) {
	cl := newCluster(t, "prod", c)
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

// scenarioPausedAndDeadline checks that a paused replica is not rolled, and that a rollout whose
// pods never become ready turns Progressing False with ProgressDeadlineExceeded and keeps
// blocking the rest of the cluster.
func scenarioPausedAndDeadline(t *testing.T, c client.Client) {
	cl := newCluster(t, "c", c)
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
	// Passes after the deadline restate the condition but record the event only once.
	cl.reconcile()
	cl.reconcile()
	if n := countReason(cl.rec.reasons("a"), rollout.ReasonProgressDeadlineExceeded); n != 1 {
		t.Errorf("%d ProgressDeadlineExceeded events, want 1: %v", n, cl.rec.reasons("a"))
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

// scenarioRestartMidRollout checks that an operator restarted after it recorded a rollout and
// applied the new template, but before all old pods were gone, deletes the rest and finishes.
func scenarioRestartMidRollout(t *testing.T, c client.Client) {
	cl := newCluster(t, "m", c)
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

// scenarioInvalidSpec checks that a replica the renderer refuses (possible only for an
// object stored before the CRD's rules, as the fake client stores it) is reported Degraded
// with reason InvalidSpec while the other replicas of its cluster are still reconciled.
func scenarioInvalidSpec(t *testing.T, c client.Client) {
	cl := newCluster(t, "v", c)
	good := &v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Name: "good"},
		Spec: v1alpha1.ComputeReplicaSpec{ClusterName: "v", Image: "img"}}
	bad := &v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Name: "bad"},
		Spec: v1alpha1.ComputeReplicaSpec{ClusterName: "v", Image: "img",
			Ports: v1alpha1.Ports{Computectl: 3000, Compute: 3000, Interactive: 3001, InternalHTTP: 3002, PeekLane: 3003}}}
	cl.create(good, bad)
	cl.step(true)
	d := cl.condition("bad", v1alpha1.ConditionDegraded)
	if d.Status != metav1.ConditionTrue || d.Reason != ReasonInvalidSpec || !strings.Contains(d.Message, "ports computectl and compute are both 3000") {
		t.Errorf("bad degraded %+v", d)
	}
	var sts appsv1.StatefulSet
	if err := cl.c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: "bad"}, &sts); !apierrors.IsNotFound(err) {
		t.Errorf("statefulset of the invalid replica: %v", err)
	}
	if err := cl.c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: "good"}, &sts); err != nil {
		t.Errorf("statefulset of the valid replica: %v", err)
	}
	if !slices.Contains(cl.rec.reasons("bad"), ReasonInvalidSpec) {
		t.Errorf("no InvalidSpec event: %v", cl.rec.reasons("bad"))
	}
}

// scenarioNameConflict checks that a replica whose name is taken by a Service it does not
// control reports Degraded=NameConflict with one event, leaves the Service alone (no owner
// reference that would garbage-collect it, no rewrite), creates nothing, and does not hold up
// the cluster's other replicas.
func scenarioNameConflict(t *testing.T, c client.Client) {
	cl := newCluster(t, "n", c)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: cl.ns, Labels: map[string]string{"app": "someone-else"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "someone-else"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	if err := cl.c.Create(cl.ctx, svc); err != nil {
		t.Fatal(err)
	}
	cl.create(
		&v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Name: "taken"}, Spec: v1alpha1.ComputeReplicaSpec{ClusterName: "n", Image: "img"}},
		&v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Name: "free"}, Spec: v1alpha1.ComputeReplicaSpec{ClusterName: "n", Image: "img"}},
	)
	cl.step(true)
	cl.step(true)
	d := cl.condition("taken", v1alpha1.ConditionDegraded)
	if d.Status != metav1.ConditionTrue || d.Reason != ReasonNameConflict || !strings.Contains(d.Message, "Service") {
		t.Errorf("taken degraded %+v, want True/NameConflict naming the Service", d)
	}
	if n := countReason(cl.rec.reasons("taken"), ReasonNameConflict); n != 1 {
		t.Errorf("%d NameConflict events, want 1", n)
	}
	var got corev1.Service
	if err := cl.c.Get(cl.ctx, client.ObjectKeyFromObject(svc), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.OwnerReferences) != 0 || got.Spec.Selector["app"] != "someone-else" || len(got.Spec.Ports) != 1 {
		t.Errorf("the foreign Service was taken over: owners %v, selector %v, ports %v", got.OwnerReferences, got.Spec.Selector, got.Spec.Ports)
	}
	var sts appsv1.StatefulSet
	if err := cl.c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: "taken"}, &sts); !apierrors.IsNotFound(err) {
		t.Errorf("statefulset of the conflicting replica: %v, want not found", err)
	}
	if !cl.available("free") {
		t.Errorf("free is not available: %+v", cl.get("free").Status.Conditions)
	}
}

// countingClient counts the writes made through it (dry runs are not writes); reads pass
// through.
type countingClient struct {
	client.Client
	mu     sync.Mutex
	writes []string
}

func (c *countingClient) record(verb string, obj any) {
	name := fmt.Sprintf("%T", obj)
	if o, ok := obj.(client.Object); ok {
		if k := o.GetObjectKind().GroupVersionKind().Kind; k != "" {
			name = k
		}
		name += " " + o.GetName()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, verb+" "+name)
}

func (c *countingClient) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.writes
	c.writes = nil
	return w
}

func (c *countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.record("create", obj)
	return c.Client.Create(ctx, obj, opts...)
}

func (c *countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.record("update", obj)
	return c.Client.Update(ctx, obj, opts...)
}

func (c *countingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	po := &client.PatchOptions{}
	po.ApplyOptions(opts)
	if len(po.DryRun) == 0 {
		c.record("patch", obj)
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *countingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	c.record("apply", obj)
	return c.Client.Apply(ctx, obj, opts...)
}

func (c *countingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.record("delete", obj)
	return c.Client.Delete(ctx, obj, opts...)
}

func (c *countingClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	c.record("deleteAllOf", obj)
	return c.Client.DeleteAllOf(ctx, obj, opts...)
}

func (c *countingClient) Status() client.SubResourceWriter {
	return &countingStatus{SubResourceWriter: c.Client.Status(), c: c}
}

type countingStatus struct {
	client.SubResourceWriter
	c *countingClient
}

func (s *countingStatus) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	s.c.record("status create", obj)
	return s.SubResourceWriter.Create(ctx, obj, sub, opts...)
}

func (s *countingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	s.c.record("status update", obj)
	return s.SubResourceWriter.Update(ctx, obj, opts...)
}

func (s *countingStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.c.record("status patch", obj)
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}

func (s *countingStatus) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	s.c.record("status apply", obj)
	return s.SubResourceWriter.Apply(ctx, obj, opts...)
}

// scenarioNoOpReconciles brings a cluster to states that passes restate (a replica up to
// date, one whose rollout is paused, one whose rollout is stuck past its deadline, one
// waiting for its turn behind it, one whose name is taken) and checks that ten more passes
// write nothing: no apply of an owned object, no status write, no pod deleted, no event.
func scenarioNoOpReconciles(t *testing.T, c client.Client) {
	counting := &countingClient{Client: c}
	cl := newCluster(t, "q", counting)
	mk := func(name string, processes int32) *v1alpha1.ComputeReplica {
		return &v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ComputeReplicaSpec{ClusterName: "q", Image: "img", Processes: processes, Workers: 2,
				Rollout: v1alpha1.RolloutSpec{MinReadySeconds: 10, ProgressDeadlineSeconds: 60}}}
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "taken", Namespace: cl.ns},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	if err := c.Create(cl.ctx, svc); err != nil {
		t.Fatal(err)
	}
	cl.create(mk("steady", 2), mk("paused", 1), mk("stuck", 2), mk("waiting", 1), mk("taken", 1))
	for range 5 {
		cl.step(true)
	}
	paused := cl.get("paused")
	paused.Spec.Rollout.Paused = true
	paused.Spec.Image = "img:2"
	if err := cl.c.Update(cl.ctx, paused); err != nil {
		t.Fatal(err)
	}
	cl.setInteractive([]string{"stuck"}, true)
	cl.reconcile()
	cl.setInteractive([]string{"waiting"}, true)
	// stuck's new pods never become ready: its rollout passes its deadline.
	for range 14 {
		cl.playStatefulSets(false)
		cl.clock.Advance(5 * time.Second)
		cl.reconcile()
	}
	for name, want := range map[string]string{"steady": rollout.ReasonRolloutComplete, "paused": rollout.ReasonPaused,
		"stuck": rollout.ReasonProgressDeadlineExceeded, "waiting": rollout.ReasonWaitingForTurn, "taken": ReasonNameConflict} {
		if p := cl.condition(name, v1alpha1.ConditionProgressing); p.Reason != want {
			t.Fatalf("%s progressing %+v, want reason %s", name, p, want)
		}
	}
	counting.take()
	events := len(cl.rec.events)
	for range 10 {
		cl.reconcile()
		cl.clock.Advance(time.Second)
	}
	if w := counting.take(); len(w) != 0 {
		t.Errorf("ten passes over an unchanged cluster made %d writes, want 0: %q", len(w), w)
	}
	if n := len(cl.rec.events) - events; n != 0 {
		t.Errorf("ten passes over an unchanged cluster recorded %d events, want 0: %+v", n, cl.rec.events[events:])
	}
	// A change is still written: scaling steady applies its StatefulSet and status.
	steady := cl.get("steady")
	steady.Spec.Processes = 3
	if err := cl.c.Update(cl.ctx, steady); err != nil {
		t.Fatal(err)
	}
	counting.take()
	cl.reconcile()
	if w := counting.take(); len(w) == 0 {
		t.Errorf("a pass after a spec change wrote nothing")
	}
}

// scenarioRollReasons changes the workers of one replica and the image of another and
// checks that each rollout names its cause: in status.rolloutReasons, in the Progressing
// message, and as an event (SizeChanged, ImageChanged) on the ComputeReplica; and that the
// causes are cleared once the rollout completes.
func scenarioRollReasons(t *testing.T, c client.Client) {
	cl := newCluster(t, "w", c)
	mk := func(name string) *v1alpha1.ComputeReplica {
		return &v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ComputeReplicaSpec{ClusterName: "w", Image: "img:1", Processes: 2, Workers: 2}}
	}
	cl.create(mk("a"), mk("b"))
	for range 3 {
		cl.step(true)
	}
	a, b := cl.get("a"), cl.get("b")
	a.Spec.Workers = 4
	b.Spec.Image = "img:2"
	for _, cr := range []*v1alpha1.ComputeReplica{a, b} {
		if err := cl.c.Update(cl.ctx, cr); err != nil {
			t.Fatal(err)
		}
	}
	cl.reconcile()
	if got := cl.get("a").Status.RolloutReasons; !slices.Equal(got, []string{"SizeChanged"}) {
		t.Errorf("a rolloutReasons %v, want [SizeChanged]", got)
	}
	if p := cl.condition("a", v1alpha1.ConditionProgressing); p.Reason != rollout.ReasonRolloutStarted || !strings.HasPrefix(p.Message, "SizeChanged: ") {
		t.Errorf("a progressing %+v, want RolloutStarted naming SizeChanged", p)
	}
	if p := cl.condition("b", v1alpha1.ConditionProgressing); p.Reason != rollout.ReasonWaitingForTurn || !strings.HasPrefix(p.Message, "ImageChanged: waiting for a") {
		t.Errorf("b progressing %+v, want WaitingForTurn naming ImageChanged", p)
	}
	var sizeEvent *recordedEvent
	for i, e := range cl.rec.events {
		if e.object == "a" && e.reason == "SizeChanged" {
			sizeEvent = &cl.rec.events[i]
		}
	}
	if sizeEvent == nil || sizeEvent.typ != corev1.EventTypeNormal || !strings.Contains(sizeEvent.note, "workers 2 -> 4") {
		t.Errorf("no SizeChanged event naming the workers on a: %+v", cl.rec.events)
	}
	for range 8 {
		cl.step(true)
	}
	if n := countReason(cl.rec.reasons("b"), "ImageChanged"); n != 1 {
		t.Errorf("%d ImageChanged events on b, want 1: %v", n, cl.rec.reasons("b"))
	}
	for _, n := range []string{"a", "b"} {
		cr := cl.get(n)
		if p := cl.condition(n, v1alpha1.ConditionProgressing); p.Reason != rollout.ReasonRolloutComplete || len(cr.Status.RolloutReasons) != 0 {
			t.Errorf("%s progressing %+v, rolloutReasons %v: want complete and cleared", n, p, cr.Status.RolloutReasons)
		}
	}
}
