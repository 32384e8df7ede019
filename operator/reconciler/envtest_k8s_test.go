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
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

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
		"--peek-lane=tcp",
		"--peek-lane-listen-addr=:2103",
		"--log-level=info",
	}
	if !slices.Equal(ctr.Args, wantArgs) {
		t.Errorf("args\n got %q\nwant %q", ctr.Args, wantArgs)
	}
	var portNames []string
	for _, p := range ctr.Ports {
		portNames = append(portNames, fmt.Sprintf("%s=%d", p.Name, p.ContainerPort))
	}
	if want := []string{"computectl=2100", "compute=2101", "internal-http=6878", "peek-lane=2103"}; !slices.Equal(portNames, want) {
		t.Errorf("container ports %v, want %v", portNames, want)
	}
	if ctr.ReadinessProbe == nil || ctr.ReadinessProbe.HTTPGet.Path != "/readyz" || ctr.ReadinessProbe.HTTPGet.Port.StrVal != "internal-http" {
		t.Errorf("readiness probe %+v", ctr.ReadinessProbe)
	}
	if ctr.LivenessProbe == nil || ctr.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe %+v", ctr.LivenessProbe)
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses || len(svc.Spec.Ports) != 4 {
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
		case p == nil || p.Status != metav1.ConditionTrue || p.ObservedGeneration != got.Generation ||
			(p.Reason != rollout.ReasonCreating && p.Reason != rollout.ReasonWaitingForAvailable):
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
		{"too many processes", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Processes = 65 }, "less than or equal to 64"},
		{"too many workers", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Workers = 257 }, "should be less than or equal to 256"},
		{"too many threads", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Processes, cr.Spec.Workers = 64, 17 }, "processes x workers must be at most 1024"},
		{"bad cluster name", func(cr *v1alpha1.ComputeReplica) { cr.Spec.ClusterName = "Bad_Name" }, "spec.clusterName in body should match"},
		{"duplicate ports", func(cr *v1alpha1.ComputeReplica) {
			cr.Spec.Ports = v1alpha1.Ports{Computectl: 3000, Compute: 3000, Interactive: 3001, InternalHTTP: 3002, PeekLane: 3003}
		}, "ports must be distinct"},
		{"peek lane on computectl", func(cr *v1alpha1.ComputeReplica) {
			cr.Spec.Ports = v1alpha1.Ports{Computectl: 3000, Compute: 3001, Interactive: 3002, InternalHTTP: 3003, PeekLane: 3000}
		}, "ports must be distinct"},
		{"deadline not above min ready", func(cr *v1alpha1.ComputeReplica) {
			cr.Spec.Rollout = v1alpha1.RolloutSpec{ProgressDeadlineSeconds: 10, MinReadySeconds: 10}
		}, "progressDeadlineSeconds must be greater than minReadySeconds"},
		{"bad pull policy", func(cr *v1alpha1.ComputeReplica) { cr.Spec.ImagePullPolicy = "Sometimes" }, `Unsupported value: "Sometimes"`},
		{"privileged port", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Ports.Computectl = 80 }, "should be greater than or equal to 1024"},
	}
	names := []struct{ name, want string }{
		// Valid object names that could never run: a Service must be a DNS-1035 label.
		{"r1.prod", "metadata.name must be a DNS-1035 label"},
		{"1r", "metadata.name must be a DNS-1035 label"},
		{strings.Repeat("r", 53), "metadata.name must be at most 52 characters"},
	}
	for _, n := range names {
		tests = append(tests, struct {
			name string
			mut  func(*v1alpha1.ComputeReplica)
			want string
		}{"name " + n.name, func(cr *v1alpha1.ComputeReplica) { cr.Name = n.name }, n.want})
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
		want := v1alpha1.Ports{Computectl: 2100, Compute: 2101, Interactive: 2102, InternalHTTP: 6878, PeekLane: 2103}
		if s.Processes != 1 || s.Workers != 1 || s.Ports != want || s.Rollout.ProgressDeadlineSeconds != 600 ||
			s.LogLevel != "info" || s.ImagePullPolicy != corev1.PullIfNotPresent {
			t.Errorf("defaults not applied: %+v", s)
		}
	})

	t.Run("longest name", func(t *testing.T) {
		if err := c.Create(ctx, valid(strings.Repeat("r", v1alpha1.MaxNameLength))); err != nil {
			t.Errorf("a %d-character name was rejected: %v", v1alpha1.MaxNameLength, err)
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

// TestHydrationGate checks that, for a replica managed by a controller, the operator waits for
// the controller's Hydrated condition (written with another field manager, and kept by the
// operator's status applies) before counting the rollout complete.
func TestHydrationGate(t *testing.T) {
	cl := newCluster(t, "h", newClient(t))
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

func TestRolloutOneReplicaAtATime(t *testing.T) { scenarioRolloutOneReplicaAtATime(t, newClient(t)) }
func TestPausedAndDeadline(t *testing.T)        { scenarioPausedAndDeadline(t, newClient(t)) }
func TestRestartMidRollout(t *testing.T)        { scenarioRestartMidRollout(t, newClient(t)) }
func TestNameConflict(t *testing.T)             { scenarioNameConflict(t, newClient(t)) }
func TestNoOpReconciles(t *testing.T)           { scenarioNoOpReconciles(t, newClient(t)) }
func TestRollReasons(t *testing.T)              { scenarioRollReasons(t, newClient(t)) }

// TestRejectedTemplate checks specs the CRD admits but the API server refuses once rendered
// (a CPU request above its limit): the reconcile succeeds, the replica reports
// Degraded=InvalidSpec with the API server's message and one warning event, a running
// replica changed that way keeps its pods (no rollout starts), and the cluster's other
// replicas are still reconciled.
func TestRejectedTemplate(t *testing.T) {
	cl := newCluster(t, "x", newClient(t))
	mk := func(name string) *v1alpha1.ComputeReplica {
		return &v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ComputeReplicaSpec{ClusterName: "x", Image: "img", Processes: 2}}
	}
	overLimit := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
	}
	const apiMessage = "must be less than or equal to cpu limit"
	cl.create(mk("r1"), mk("r2"))
	for range 3 {
		cl.step(true)
	}

	// A new replica the API server will not run.
	r3 := mk("r3")
	r3.Spec.Resources = overLimit
	cl.create(r3)
	cl.step(true)
	cl.step(true)
	if d := cl.condition("r3", v1alpha1.ConditionDegraded); d.Status != metav1.ConditionTrue || d.Reason != ReasonInvalidSpec ||
		!strings.Contains(d.Message, apiMessage) {
		t.Errorf("r3 degraded %+v, want True/InvalidSpec naming the refusal", d)
	}
	if n := countReason(cl.rec.reasons("r3"), ReasonInvalidSpec); n != 1 {
		t.Errorf("%d InvalidSpec events for r3 after two passes, want 1", n)
	}
	var sts appsv1.StatefulSet
	if err := cl.c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: "r3"}, &sts); !apierrors.IsNotFound(err) {
		t.Errorf("statefulset r3: %v, want not found", err)
	}
	if cr := cl.get("r3"); cr.Status.RolloutStartTime != nil || len(cr.Status.ComputectlAddresses) != 2 {
		t.Errorf("r3 status %+v: want no rollout recorded, and addresses", cr.Status)
	}

	// A running replica changed that way keeps its old pods and template.
	r1 := cl.get("r1")
	oldHash := r1.Status.CurrentHash
	r1.Spec.Resources = overLimit
	if err := cl.c.Update(cl.ctx, r1); err != nil {
		t.Fatal(err)
	}
	cl.step(true)
	if d := cl.condition("r1", v1alpha1.ConditionDegraded); d.Reason != ReasonInvalidSpec || !strings.Contains(d.Message, apiMessage) {
		t.Errorf("r1 degraded %+v", d)
	}
	if !cl.available("r1") || cl.get("r1").Status.RolloutStartTime != nil {
		t.Errorf("r1 should stay Available with no rollout recorded: %+v", cl.get("r1").Status)
	}
	if err := cl.c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: "r1"}, &sts); err != nil ||
		sts.Spec.Template.Labels[render.LabelPodTemplateHash] != oldHash {
		t.Errorf("statefulset r1 template changed (err %v)", err)
	}
	for i := range 2 {
		var pod corev1.Pod
		if err := cl.c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: fmt.Sprintf("r1-%d", i)}, &pod); err != nil || !pod.DeletionTimestamp.IsZero() {
			t.Errorf("pod r1-%d deleted (err %v)", i, err)
		}
	}

	// r2 may not roll while r3 is down (two replicas of the cluster would be down) ...
	cl.setInteractive([]string{"r2"}, true)
	cl.step(true)
	if p := cl.condition("r2", v1alpha1.ConditionProgressing); p.Reason != rollout.ReasonWaitingForTurn || !strings.Contains(p.Message, "r3") {
		t.Errorf("r2 progressing %+v, want WaitingForTurn on r3", p)
	}
	// ... and rolls once r3 is fixed and up; r1, still refused, blocks nobody.
	r3 = cl.get("r3")
	r3.Spec.Resources = corev1.ResourceRequirements{}
	if err := cl.c.Update(cl.ctx, r3); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		cl.step(true)
	}
	if !cl.available("r3") {
		t.Errorf("r3 not available after its fix: %+v", cl.get("r3").Status.Conditions)
	}
	if p := cl.condition("r2", v1alpha1.ConditionProgressing); p.Reason != rollout.ReasonRolloutComplete || !cl.get("r2").Spec.InteractiveRuntime {
		t.Errorf("r2 progressing %+v, want RolloutComplete", p)
	}
	if !slices.Contains(cl.rec.reasons("r2"), "RolloutStarted") {
		t.Errorf("r2 never rolled: %v", cl.rec.reasons("r2"))
	}
	if d := cl.condition("r1", v1alpha1.ConditionDegraded); d.Reason != ReasonInvalidSpec {
		t.Errorf("r1 degraded %+v, want still InvalidSpec", d)
	}
}

// TestDeleteOnlyObservedPods checks that a rollout deletes a pod only if it is still the one
// the pass observed: a successor the StatefulSet controller created under the same name
// (which a lagging cache can still show as the old pod) survives.
func TestDeleteOnlyObservedPods(t *testing.T) {
	cl := newCluster(t, "u", newClient(t))
	cl.create(&v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Name: "u1"},
		Spec: v1alpha1.ComputeReplicaSpec{ClusterName: "u", Image: "img", Processes: 1}})
	for range 3 {
		cl.step(true)
	}
	st, err := cl.r.observe(cl.ctx, cl.get("u1"))
	if err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: cl.ns, Name: "u1-0"}
	var old corev1.Pod
	if err := cl.c.Get(cl.ctx, key, &old); err != nil {
		t.Fatal(err)
	}
	if err := cl.c.Delete(cl.ctx, &old); err != nil {
		t.Fatal(err)
	}
	cl.playStatefulSets(true) // the StatefulSet controller's successor
	if err := cl.r.act(cl.ctx, st, rollout.Decision{DeletePods: []string{"u1-0"}}); err != nil {
		t.Fatalf("act: %v", err)
	}
	var now corev1.Pod
	if err := cl.c.Get(cl.ctx, key, &now); err != nil || now.UID == old.UID || !now.DeletionTimestamp.IsZero() {
		t.Errorf("the successor pod was deleted (err %v, uid %s, old uid %s)", err, now.UID, old.UID)
	}
}

// TestPrinterColumns checks the columns `kubectl get computereplicas` shows, as served by
// the API server from the generated CRD (docs/kubernetes.md shows them).
func TestPrinterColumns(t *testing.T) {
	c := newClient(t)
	crd := &unstructured.Unstructured{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	if err := c.Get(context.Background(), client.ObjectKey{Name: "computereplicas.compute.tandem.dev"}, crd); err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if len(versions) != 1 {
		t.Fatalf("%d versions, want 1", len(versions))
	}
	cols, _, _ := unstructured.NestedSlice(versions[0].(map[string]any), "additionalPrinterColumns")
	var got []string
	for _, col := range cols {
		m := col.(map[string]any)
		got = append(got, fmt.Sprintf("%s=%s", m["name"], m["jsonPath"]))
	}
	want := []string{
		"Cluster=.spec.clusterName", "Processes=.spec.processes", "Workers=.spec.workers",
		"Interactive=.spec.interactiveRuntime", "Ready=.status.readyProcesses",
		`Available=.status.conditions[?(@.type=="Available")].status`, "Age=.metadata.creationTimestamp",
	}
	if !slices.Equal(got, want) {
		t.Errorf("printer columns\n got %q\nwant %q", got, want)
	}
}

// TestDrain runs scenarioDrain against a real API server (CRD default Wait, PDB schema).
func TestDrain(t *testing.T) { scenarioDrain(t, newClient(t)) }
