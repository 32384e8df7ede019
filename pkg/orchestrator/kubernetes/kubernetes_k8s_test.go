//go:build k8s

// These tests run the orchestrator against a real kube-apiserver and etcd (controller-runtime's
// envtest) built by hack/kube-tools.sh: TANDEM_KUBE_BIN="$(bash hack/kube-tools.sh)" go test
// -tags k8s ./pkg/orchestrator/kubernetes/. There is no operator and no garbage collector:
// the tests play them (status applies under the operator's field manager, finalizer removal).
package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/pkg/orchestrator"
)

var (
	testCfg    *rest.Config
	testScheme = runtime.NewScheme()
)

// operatorManager simulates the operator's field manager on status.
const operatorManager = "tandem-operator"

func TestMain(m *testing.M) {
	bin := os.Getenv("TANDEM_KUBE_BIN")
	if bin == "" {
		fmt.Fprintln(os.Stderr, `TANDEM_KUBE_BIN is not set: run TANDEM_KUBE_BIN="$(bash hack/kube-tools.sh)" go test -tags k8s`)
		os.Exit(1)
	}
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(testScheme); err != nil {
			fmt.Fprintln(os.Stderr, "scheme:", err)
			os.Exit(1)
		}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: bin,
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "..", "config", "crd", "bases")},
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

// fixture is one namespace, a direct client (the user, the operator, the garbage collector)
// and an orchestrator reading through its own informer cache.
type fixture struct {
	t    *testing.T
	ctx  context.Context
	c    client.Client
	ns   string
	orch *Orchestrator
}

var testTemplate = ReplicaTemplate{Image: "tandem/replica:test", ImagePullPolicy: corev1.PullIfNotPresent,
	Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}}

func newFixture(t *testing.T, known ...string) *fixture {
	t.Helper()
	ctx := t.Context()
	c, err := client.New(testCfg, client.Options{Scheme: testScheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "orch-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	orch, err := NewForConfig(ctx, testCfg, Options{
		Namespace:    ns.Name,
		Template:     testTemplate,
		KnownCluster: func(cluster string) bool { return slices.Contains(known, cluster) },
		PollInterval: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: ctx, c: c, ns: ns.Name, orch: orch}
}

func (f *fixture) get(name string) *v1alpha1.ComputeReplica {
	f.t.Helper()
	var cr v1alpha1.ComputeReplica
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, &cr); err != nil {
		f.t.Fatal(err)
	}
	return &cr
}

func (f *fixture) ensure(cfg orchestrator.ReplicaConfig) {
	f.t.Helper()
	if err := f.orch.EnsureReplica(f.ctx, cfg); err != nil {
		f.t.Fatal(err)
	}
}

// userApply creates a replica the way `kubectl apply --server-side` would.
func (f *fixture) userApply(name, cluster string, labels map[string]string) *v1alpha1.ComputeReplica {
	f.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion().String(), "kind": v1alpha1.Kind,
		"metadata": map[string]any{"name": name, "namespace": f.ns},
		"spec": map[string]any{"clusterName": cluster, "processes": int64(3), "workers": int64(2),
			"image": "user/replica:custom", "rollout": map[string]any{"minReadySeconds": int64(5)}},
	}}
	if labels != nil {
		u.SetLabels(labels)
	}
	if err := f.c.Apply(f.ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("kubectl")); err != nil {
		f.t.Fatal(err)
	}
	return f.get(name)
}

// operatorStatus applies status the way the operator does: its own field manager, its own
// conditions, forced ownership.
func (f *fixture) operatorStatus(name string, ready int, addrs []string, hash string, conds ...metav1.Condition) {
	f.t.Helper()
	cr := f.get(name)
	var cs []any
	for _, c := range conds {
		c.ObservedGeneration = cr.Generation
		c.LastTransitionTime = metav1.NewTime(time.Now().Truncate(time.Second))
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
		if err != nil {
			f.t.Fatal(err)
		}
		cs = append(cs, m)
	}
	var as []any
	for _, a := range addrs {
		as = append(as, a)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion().String(), "kind": v1alpha1.Kind,
		"metadata": map[string]any{"name": name, "namespace": f.ns},
		"status": map[string]any{"observedGeneration": cr.Generation, "readyProcesses": int64(ready),
			"computectlAddresses": as, "conditions": cs, "currentHash": hash, "updateHash": hash},
	}}
	if err := f.c.Status().Apply(f.ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(operatorManager), client.ForceOwnership); err != nil {
		f.t.Fatal(err)
	}
}

func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func managers(obj client.Object) map[string]metav1.ManagedFieldsOperationType {
	out := map[string]metav1.ManagedFieldsOperationType{}
	for _, mf := range obj.GetManagedFields() {
		out[mf.Manager+"/"+mf.Subresource] = mf.Operation
	}
	return out
}

// TestEnsure checks the created spec and labels, that re-ensuring the same config writes
// nothing, and that turning Interactive on changes spec.interactiveRuntime and nothing else.
func TestEnsure(t *testing.T) {
	f := newFixture(t)
	cfg := orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "prod", Replica: "r1"}, Processes: 2, Workers: 4, LogLevel: "debug"}
	f.ensure(cfg)
	// Status right after creation: the cache may not have the object yet; the lookup
	// falls back to the API server instead of reporting ErrNotFound.
	if st, err := f.orch.Status(f.ctx, cfg.ID); err != nil || len(st.Processes) != 2 {
		t.Fatalf("status right after ensure: %+v, %v", st, err)
	}

	cr := f.get("prod-r1")
	s := cr.Spec
	if s.ClusterName != "prod" || s.Processes != 2 || s.Workers != 4 || s.Image != testTemplate.Image || s.LogLevel != "debug" ||
		s.InteractiveRuntime || s.ImagePullPolicy != corev1.PullIfNotPresent || !s.Resources.Requests.Memory().Equal(resource.MustParse("1Gi")) {
		t.Errorf("spec %+v", s)
	}
	if s.Ports.Computectl != v1alpha1.DefaultComputectlPort || s.Rollout.ProgressDeadlineSeconds != 600 {
		t.Errorf("CRD defaults not kept: ports %+v rollout %+v", s.Ports, s.Rollout)
	}
	wantLabels := map[string]string{v1alpha1.LabelManagedBy: DefaultControllerName, LabelCluster: "prod", LabelReplicaName: "r1"}
	if !reflect.DeepEqual(cr.Labels, wantLabels) {
		t.Errorf("labels %v, want %v", cr.Labels, wantLabels)
	}
	if got := managers(cr); got[DefaultFieldManager+"/"] != metav1.ManagedFieldsOperationApply {
		t.Errorf("managed fields %v: not applied by %s", got, DefaultFieldManager)
	}

	// The same config again is a no-op.
	f.ensure(cfg)
	if again := f.get("prod-r1"); again.ResourceVersion != cr.ResourceVersion {
		t.Errorf("re-ensuring the same config wrote the object: resourceVersion %s -> %s", cr.ResourceVersion, again.ResourceVersion)
	}

	// Interactive on: spec.interactiveRuntime flips, nothing else in the spec or labels.
	cfg.Interactive = true
	f.ensure(cfg)
	after := f.get("prod-r1")
	if !after.Spec.InteractiveRuntime {
		t.Fatal("spec.interactiveRuntime not set")
	}
	if after.Generation != cr.Generation+1 {
		t.Errorf("generation %d -> %d, want one step", cr.Generation, after.Generation)
	}
	want := cr.Spec.DeepCopy()
	want.InteractiveRuntime = true
	if !reflect.DeepEqual(after.Spec, *want) {
		t.Errorf("spec changed beyond interactiveRuntime:\n got %+v\nwant %+v", after.Spec, *want)
	}
	if !reflect.DeepEqual(after.Labels, cr.Labels) || !reflect.DeepEqual(after.Annotations, cr.Annotations) {
		t.Errorf("metadata changed: labels %v annotations %v", after.Labels, after.Annotations)
	}

	// A kubectl edit of a created replica is taken back by the next ensure (forced
	// ownership): the controller owns the shape of replicas it created.
	edited := after.DeepCopy()
	edited.Spec.Workers = 8
	if err := f.c.Update(f.ctx, edited, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	f.ensure(cfg)
	if got := f.get("prod-r1").Spec.Workers; got != 4 {
		t.Errorf("workers %d after re-ensure, want the controller's 4", got)
	}

	// Invalid configs never reach the API server.
	if err := f.orch.EnsureReplica(f.ctx, orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "Prod", Replica: "r1"}, Processes: 1, Workers: 1}); err == nil {
		t.Error("an invalid object name was accepted")
	}
}

// TestAdoption checks that List returns managed replicas and adopts user-applied replicas of
// known clusters (and only those), and that ensuring an adopted replica sets
// spec.interactiveRuntime while leaving the user's shape alone.
func TestAdoption(t *testing.T) {
	f := newFixture(t, "dev")
	f.ensure(orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "prod", Replica: "r1"}, Processes: 1, Workers: 1})
	blue := f.userApply("blue", "prod", nil)              // prod is known: it has a managed replica
	f.userApply("dev-r9", "dev", nil)                     // dev is known to the catalog
	f.userApply("staging-r1", "staging", nil)             // unknown cluster: left alone
	f.userApply("prod-theirs", "prod", map[string]string{ // another controller's
		v1alpha1.LabelManagedBy: "other-controller"})

	want := []orchestrator.ReplicaID{{Cluster: "dev", Replica: "r9"}, {Cluster: "prod", Replica: "blue"}, {Cluster: "prod", Replica: "r1"}}
	eventually(t, "list", func() error {
		got, err := f.orch.ListReplicas(f.ctx)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("listed %v, want %v", got, want)
		}
		return nil
	})

	adopted := f.get("blue")
	if !IsManagedBy(adopted, DefaultControllerName) || adopted.Annotations[AnnotationAdoptedBy] != DefaultControllerName ||
		adopted.Labels[LabelReplicaName] != "blue" || adopted.Labels[LabelCluster] != "prod" {
		t.Errorf("blue not adopted: labels %v annotations %v", adopted.Labels, adopted.Annotations)
	}
	if !reflect.DeepEqual(adopted.Spec, blue.Spec) || adopted.Generation != blue.Generation {
		t.Errorf("adoption changed the user's spec:\n got %+v\nwant %+v", adopted.Spec, blue.Spec)
	}
	for name, wantManaged := range map[string]bool{"staging-r1": false, "prod-theirs": false, "dev-r9": true} {
		cr := f.get(name)
		if got := IsManagedBy(cr, DefaultControllerName); got != wantManaged {
			t.Errorf("%s managed %v, want %v (labels %v)", name, got, wantManaged, cr.Labels)
		}
	}

	// The flag flips: ensure the adopted replica with its own shape and Interactive on.
	id := orchestrator.ReplicaID{Cluster: "prod", Replica: "blue"}
	if err := f.orch.EnsureReplica(f.ctx, orchestrator.ReplicaConfig{ID: id, Processes: 3, Workers: 2, Interactive: true}); err != nil {
		t.Fatal(err)
	}
	after := f.get("blue")
	wantSpec := blue.Spec.DeepCopy()
	wantSpec.InteractiveRuntime = true
	if !reflect.DeepEqual(after.Spec, *wantSpec) {
		t.Errorf("ensure of an adopted replica:\n got %+v\nwant %+v", after.Spec, *wantSpec)
	}
	// The user re-applying the manifest (without interactiveRuntime) neither conflicts nor
	// takes the field back: it is the controller's now.
	f.userApply("blue", "prod", nil)
	if !f.get("blue").Spec.InteractiveRuntime {
		t.Error("the user's re-apply reset spec.interactiveRuntime")
	}
	// The controller does not resize a user's replica.
	err := f.orch.EnsureReplica(f.ctx, orchestrator.ReplicaConfig{ID: id, Processes: 1, Workers: 2})
	if err == nil || !strings.Contains(err.Error(), "change the manifest") {
		t.Errorf("resizing an adopted replica: %v", err)
	}
	// Nor does it take over another controller's, or reuse a name taken by another replica.
	err = f.orch.EnsureReplica(f.ctx, orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "prod", Replica: "theirs"}, Processes: 3, Workers: 2})
	if err == nil || !strings.Contains(err.Error(), "other-controller") {
		t.Errorf("ensuring another controller's replica: %v", err)
	}
}

// TestStatusAndHydrated checks that Status maps the addresses the operator publishes, and
// that SetHydrated writes the Hydrated condition beside the operator's conditions, neither
// writer clobbering the other's, claiming only a generation whose pods run.
func TestStatusAndHydrated(t *testing.T) {
	f := newFixture(t)
	id := orchestrator.ReplicaID{Cluster: "prod", Replica: "r1"}
	cfg := orchestrator.ReplicaConfig{ID: id, Processes: 2, Workers: 1}
	f.ensure(cfg)
	st, err := f.orch.Status(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.ComputeCtlAddrs(); !slices.Equal(got, []string{"", ""}) || st.Processes[0].State != orchestrator.ProcessStarting {
		t.Errorf("before the operator: %+v", st)
	}
	if _, err := f.orch.Status(f.ctx, orchestrator.ReplicaID{Cluster: "prod", Replica: "nope"}); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Errorf("status of an unknown replica: %v, want ErrNotFound", err)
	}

	addrs := []string{"prod-r1-0.prod-r1." + f.ns + ".svc:2100", "prod-r1-1.prod-r1." + f.ns + ".svc:2100"}
	available := metav1.Condition{Type: v1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "AllProcessesReady", Message: "2/2"}
	progressing := metav1.Condition{Type: v1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: "UpToDate", Message: "up to date"}
	f.operatorStatus("prod-r1", 2, addrs, "h1", available, progressing)
	eventually(t, "published addresses", func() error {
		st, err := f.orch.Status(f.ctx, id)
		if err != nil {
			return err
		}
		if got := st.ComputeCtlAddrs(); !slices.Equal(got, addrs) || st.Processes[1].State != orchestrator.ProcessRunning {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})

	if err := f.orch.SetHydrated(f.ctx, id, true, "CaughtUp", "all dataflows caught up"); err != nil {
		t.Fatal(err)
	}
	check := func(when string, wantHydrated metav1.ConditionStatus, wantGen int64, wantAvailableMsg string) {
		t.Helper()
		cr := f.get("prod-r1")
		h := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionHydrated)
		a := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionAvailable)
		p := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionProgressing)
		switch {
		case h == nil || h.Status != wantHydrated || h.ObservedGeneration != wantGen:
			t.Errorf("%s: hydrated %+v, want %s for generation %d", when, h, wantHydrated, wantGen)
		case a == nil || a.Status != metav1.ConditionTrue || a.Message != wantAvailableMsg:
			t.Errorf("%s: available %+v", when, a)
		case p == nil || p.Reason != "UpToDate":
			t.Errorf("%s: progressing %+v", when, p)
		case !slices.Equal(cr.Status.ComputectlAddresses, addrs) || cr.Status.ReadyProcesses != 2:
			t.Errorf("%s: operator status fields clobbered: %+v", when, cr.Status)
		}
		if m := managers(cr); m[DefaultStatusFieldManager+"/status"] != metav1.ManagedFieldsOperationApply || m[operatorManager+"/status"] != metav1.ManagedFieldsOperationApply {
			t.Errorf("%s: status managers %v", when, m)
		}
	}
	check("after SetHydrated", metav1.ConditionTrue, 1, "2/2")

	// The operator applies its status again, without Hydrated: Hydrated survives.
	available.Message = "2/2 for 30s"
	f.operatorStatus("prod-r1", 2, addrs, "h1", available, progressing)
	check("after the operator's apply", metav1.ConditionTrue, 1, "2/2 for 30s")

	// The flag flips (generation 2) but the old pods (hash h1 of generation 1) still run:
	// a hydration reported now claims generation 1 only, so the operator keeps waiting.
	cfg.Interactive = true
	f.ensure(cfg)
	if err := f.orch.SetHydrated(f.ctx, id, false, "Disconnected", "lost the processes"); err != nil {
		t.Fatal(err)
	}
	check("after losing the replica", metav1.ConditionFalse, 1, "2/2 for 30s")
	if err := f.orch.SetHydrated(f.ctx, id, true, "CaughtUp", "stale pods"); err != nil {
		t.Fatal(err)
	}
	check("hydrated on old pods", metav1.ConditionTrue, 1, "2/2 for 30s")

	// The operator rolled the replica: the pods run generation 2's template.
	f.operatorStatus("prod-r1", 2, addrs, "h2", available, progressing)
	eventually(t, "cache sees generation 2 rolled", func() error {
		var cr v1alpha1.ComputeReplica
		if err := f.orch.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "prod-r1"}, &cr); err != nil {
			return err
		}
		if cr.Status.CurrentHash != "h2" {
			return fmt.Errorf("current hash %q", cr.Status.CurrentHash)
		}
		return nil
	})
	if err := f.orch.SetHydrated(f.ctx, id, true, "CaughtUp", "all dataflows caught up"); err != nil {
		t.Fatal(err)
	}
	check("hydrated on new pods", metav1.ConditionTrue, 2, "2/2 for 30s")
}

// TestRemove checks that RemoveReplica deletes in the foreground and returns only once the
// object is gone (the test plays the garbage collector), and that removing what is not
// there, or not ours, behaves.
func TestRemove(t *testing.T) {
	f := newFixture(t)
	id := orchestrator.ReplicaID{Cluster: "prod", Replica: "r1"}
	f.ensure(orchestrator.ReplicaConfig{ID: id, Processes: 1, Workers: 1})
	done := make(chan error, 1)
	go func() { done <- f.orch.RemoveReplica(f.ctx, id) }()

	var cr *v1alpha1.ComputeReplica
	eventually(t, "foreground deletion", func() error {
		cr = f.get("prod-r1")
		if cr.DeletionTimestamp == nil || !slices.Contains(cr.Finalizers, metav1.FinalizerDeleteDependents) {
			return fmt.Errorf("deletion %v finalizers %v", cr.DeletionTimestamp, cr.Finalizers)
		}
		return nil
	})
	select {
	case err := <-done:
		t.Fatalf("RemoveReplica returned (%v) before the replica was gone", err)
	case <-time.After(300 * time.Millisecond):
	}
	// The garbage collector deleted the dependents and drops its finalizer.
	cr.Finalizers = nil
	if err := f.c.Update(f.ctx, cr); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RemoveReplica did not return after the replica was gone")
	}
	if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(cr), &v1alpha1.ComputeReplica{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after remove: %v", err)
	}
	if err := f.orch.RemoveReplica(f.ctx, id); err != nil {
		t.Errorf("removing a removed replica: %v", err)
	}
	f.userApply("prod-theirs", "prod", map[string]string{v1alpha1.LabelManagedBy: "other-controller"})
	if err := f.orch.RemoveReplica(f.ctx, orchestrator.ReplicaID{Cluster: "prod", Replica: "theirs"}); err == nil {
		t.Error("removed another controller's replica")
	}
	if f.get("prod-theirs").DeletionTimestamp != nil {
		t.Error("another controller's replica is being deleted")
	}
}

// TestAdoptionUIDPrecondition checks the UID precondition of adoption applies: a replica
// deleted and recreated under the same name since it was read is not adopted, and a deleted
// one is not resurrected; ListReplicas skips such a replica instead of failing.
func TestAdoptionUIDPrecondition(t *testing.T) {
	f := newFixture(t, "prod")
	old := f.userApply("prod-r2", "prod", nil)
	if err := f.c.Delete(f.ctx, old); err != nil {
		t.Fatal(err)
	}
	err := f.orch.apply(f.ctx, AdoptionObject(old, DefaultControllerName, nil), ReplicaIDOf(old))
	if err == nil {
		t.Fatal("adopting a deleted replica succeeded")
	}
	if !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && !apierrors.IsInvalid(err) {
		t.Errorf("adopting a deleted replica: %v, want NotFound, Conflict or Invalid", err)
	}
	if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(old), &v1alpha1.ComputeReplica{}); !apierrors.IsNotFound(err) {
		t.Errorf("deleted replica resurrected: %v", err)
	}
	f.userApply("prod-r2", "prod", nil)
	err = f.orch.apply(f.ctx, AdoptionObject(old, DefaultControllerName, nil), ReplicaIDOf(old))
	if !apierrors.IsConflict(err) && !apierrors.IsInvalid(err) {
		t.Errorf("adopting a recreated replica by its old UID: %v, want a precondition failure", err)
	}
	if cr := f.get("prod-r2"); IsManagedBy(cr, DefaultControllerName) {
		t.Errorf("recreated replica adopted through a stale read: %v", cr.Labels)
	}
}

func TestAdoptedReplicas(t *testing.T) {
	f := newFixture(t)
	f.ensure(orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "prod", Replica: "r1"}, Processes: 1, Workers: 1})
	f.userApply("blue", "prod", nil)                      // adopted: prod has a managed replica
	f.userApply("staging-r1", "staging", nil)             // unknown cluster: left alone
	f.userApply("prod-theirs", "prod", map[string]string{ // another controller's
		v1alpha1.LabelManagedBy: "other-controller"})

	// Only user-applied replicas, with their manifest's shape; the created r1 is not one.
	want := []orchestrator.ReplicaConfig{{ID: orchestrator.ReplicaID{Cluster: "prod", Replica: "blue"}, Processes: 3, Workers: 2, LogLevel: "info"}}
	eventually(t, "adopted replicas", func() error {
		got, err := f.orch.AdoptedReplicas(f.ctx)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("adopted %+v, want %+v", got, want)
		}
		return nil
	})
}

// events counts the events.k8s.io events with the reason recorded about the named object
// (a series counts as its count).
func (f *fixture) events(name, reason string) int {
	f.t.Helper()
	var list eventsv1.EventList
	if err := f.c.List(f.ctx, &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			n++
			if e.Series != nil {
				n += int(e.Series.Count) - 1
			}
		}
	}
	return n
}

func (f *fixture) adopted(name string) metav1.Condition {
	f.t.Helper()
	c := meta.FindStatusCondition(f.get(name).Status.Conditions, v1alpha1.ConditionAdopted)
	if c == nil {
		return metav1.Condition{}
	}
	return *c
}

// TestAdoptionFailures checks that adoption failures are recorded on the ComputeReplica as
// the Adopted condition and one Warning event AdoptionFailed each (not one per adoption
// round), through the events.k8s.io API: a second object standing for a listed replica, a
// manifest whose shape differs from the catalog's, and an import the catalog refused; and
// that success turns the condition True with a Normal event Adopted, beside Hydrated.
func TestAdoptionFailures(t *testing.T) {
	f := newFixture(t, "prod")
	f.ensure(orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "prod", Replica: "r1"}, Processes: 1, Workers: 1})
	f.userApply("copy-of-r1", "prod", map[string]string{LabelReplicaName: "r1"})
	f.userApply("blue", "prod", nil)
	eventually(t, "duplicate reported", func() error {
		if _, err := f.orch.ListReplicas(f.ctx); err != nil {
			return err
		}
		if c := f.adopted("copy-of-r1"); c.Status != metav1.ConditionFalse || c.Reason != ReasonDuplicateReplica {
			return fmt.Errorf("copy-of-r1 Adopted %+v, want False/DuplicateReplica", c)
		}
		if f.events("copy-of-r1", EventAdoptionFailed) != 1 {
			return fmt.Errorf("no AdoptionFailed event on copy-of-r1 yet")
		}
		return nil
	})
	if c := f.adopted("copy-of-r1"); !strings.Contains(c.Message, "prod-r1 already stands for replica prod/r1") {
		t.Errorf("duplicate message %q", c.Message)
	}
	// Later rounds neither write nor record again.
	rv := f.get("copy-of-r1").ResourceVersion
	for range 3 {
		if _, err := f.orch.ListReplicas(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.get("copy-of-r1").ResourceVersion; got != rv {
		t.Errorf("repeated rounds rewrote the duplicate: resourceVersion %s -> %s", rv, got)
	}
	blueID := orchestrator.ReplicaID{Cluster: "prod", Replica: "blue"}
	eventually(t, "blue adopted", func() error {
		if !IsManagedBy(f.get("blue"), DefaultControllerName) {
			return errors.New("blue not labelled yet")
		}
		return nil
	})
	eventually(t, "blue in the cache", func() error {
		cr, err := f.orch.find(f.ctx, blueID)
		if err != nil || !IsManagedBy(cr, DefaultControllerName) {
			return fmt.Errorf("cache: %v", err)
		}
		return nil
	})

	// A shape the catalog disagrees with.
	if err := f.orch.EnsureReplica(f.ctx, orchestrator.ReplicaConfig{ID: blueID, Processes: 1, Workers: 2}); err == nil {
		t.Fatal("a shape mismatch was accepted")
	}
	if c := f.adopted("blue"); c.Status != metav1.ConditionFalse || c.Reason != ReasonShapeMismatch || !strings.Contains(c.Message, "change the manifest") {
		t.Errorf("blue Adopted %+v, want False/ShapeMismatch", c)
	}
	// The catalog refusing the replica.
	eventually(t, "mismatch in the cache", func() error {
		cr, err := f.orch.find(f.ctx, blueID)
		if err != nil || meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionAdopted) == nil {
			return fmt.Errorf("cache lacks the condition: %v", err)
		}
		return nil
	})
	if err := f.orch.ImportFailed(f.ctx, blueID, errors.New("replica name refused")); err != nil {
		t.Fatal(err)
	}
	if c := f.adopted("blue"); c.Reason != ReasonImportFailed || !strings.Contains(c.Message, "replica name refused") {
		t.Errorf("blue Adopted %+v, want False/ImportFailed", c)
	}
	eventually(t, "two failure events on blue", func() error {
		if n := f.events("blue", EventAdoptionFailed); n != 2 {
			return fmt.Errorf("%d AdoptionFailed events on blue, want 2", n)
		}
		return nil
	})
	// Imported, and hydrated: both conditions stand.
	eventually(t, "import failure in the cache", func() error {
		cr, err := f.orch.find(f.ctx, blueID)
		if c := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionAdopted); err != nil || c == nil || c.Reason != ReasonImportFailed {
			return fmt.Errorf("cache lags: %v", err)
		}
		return nil
	})
	if err := f.orch.Imported(f.ctx, blueID); err != nil {
		t.Fatal(err)
	}
	if err := f.orch.SetHydrated(f.ctx, blueID, false, "NotConnected", "no connection"); err != nil {
		t.Fatal(err)
	}
	if c := f.adopted("blue"); c.Status != metav1.ConditionTrue || c.Reason != ReasonAdopted {
		t.Errorf("blue Adopted %+v after import, want True/Adopted", c)
	}
	if h := meta.FindStatusCondition(f.get("blue").Status.Conditions, v1alpha1.ConditionHydrated); h == nil {
		t.Error("blue lost its Hydrated condition")
	}
	eventually(t, "adopted event", func() error {
		if f.events("blue", EventAdopted) != 1 {
			return errors.New("no Adopted event on blue")
		}
		return nil
	})
}
