//go:build k8s

// The operator and the controller together, against a real kube-apiserver and etcd
// (controller-runtime's envtest) built by hack/kube-tools.sh:
//
//	TANDEM_KUBE_BIN="$(bash hack/kube-tools.sh etcd kube-apiserver)" go test -tags k8s -run TestKubernetes ./cmd/controller/
//
// The operator's reconciler runs in-process under a manager, and the controller runs
// in-process with --orchestrator=kubernetes. envtest has no controller-manager and no
// kubelet, so the test plays them (fakeKubelet): it creates the pods of every StatefulSet the
// operator renders, marks them ready, and, for every incarnation of a replica's pods, runs
// real replica processes on loopback (with the process orchestrator). The operator publishes
// the pods' headless-Service DNS names in status; the controller's dialer is the one fake
// part: it maps those names to the local processes of the current incarnation.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/jackc/pgx/v5"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/reconciler"
	"github.com/tandemdb/tandem/operator/render"
	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/orchestrator"
	"github.com/tandemdb/tandem/pkg/orchestrator/process"
)

const testReplicaImage = "tandem/tandem:k8s-test"

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func TestKubernetesOperatorAndController(t *testing.T) {
	bin := os.Getenv("TANDEM_KUBE_BIN")
	if bin == "" {
		t.Fatal(`TANDEM_KUBE_BIN is not set: run TANDEM_KUBE_BIN="$(bash hack/kube-tools.sh etcd kube-apiserver)" go test -tags k8s`)
	}
	replicaBin := buildReplica(t)

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: bin,
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
	restCfg, err := env.Start()
	if err != nil {
		t.Fatal("start envtest:", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.New(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	const ns = "tandem"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}

	// The operator, as cmd/operator runs it, watching the namespace.
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	op := &reconciler.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorder(reconciler.FieldOwner), Clock: wallClock{}}
	if err := op.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(ctx) }()

	// The kubelet and StatefulSet controller, with real replica processes.
	storageAddr := freeAddr(t)
	kl := newFakeKubelet(t, c, ns, replicaBin, storageAddr)
	klDone := make(chan struct{})
	go func() { defer close(klDone); kl.run(ctx) }()

	// The controller with the kubernetes orchestrator.
	cfg := &config{
		DataDir: t.TempDir(), PgwireListenAddr: "127.0.0.1:0", HTTPListenAddr: "127.0.0.1:0", StorageListenAddr: storageAddr,
		Orchestrator: "kubernetes", ReplicaLogLevel: "debug", LogLevel: slog.LevelDebug,
		Kubernetes: kubernetesConfig{Namespace: ns, ControllerName: "tandem-controller",
			ReplicaImage: testReplicaImage, ReplicaImagePullPolicy: corev1.PullNever},
		restConfig: restCfg, dialer: kl, hydrationInterval: 100 * time.Millisecond, adoptInterval: 300 * time.Millisecond,
	}
	pgwireAddr, httpAddr, ctlDone := startInProcessController(ctx, t, cfg)
	defer func() {
		cancel()
		if err := <-ctlDone; err != nil {
			t.Errorf("controller: %v", err)
		}
		<-klDone
		kl.close()
		if err := <-mgrDone; err != nil {
			t.Errorf("operator manager: %v", err)
		}
	}()

	h := &k8sHarness{t: t, ctx: ctx, c: c, ns: ns, httpAddr: httpAddr}

	// 1. The fresh environment's default replica is a ComputeReplica the operator rendered,
	// whose processes the controller reached, and which it reported Hydrated.
	r1 := h.replica("default-r1")
	if got := r1.Spec; got.ClusterName != "default" || got.Processes != 1 || got.Workers != 2 ||
		got.Image != testReplicaImage || got.ImagePullPolicy != corev1.PullNever || got.InteractiveRuntime {
		t.Fatalf("default-r1 spec %+v", got)
	}
	if l := r1.Labels; l[v1alpha1.LabelManagedBy] != "tandem-controller" || l["compute.tandem.dev/replica-name"] != "r1" {
		t.Fatalf("default-r1 labels %v", l)
	}
	h.statefulSet("default-r1", 1, false)
	h.waitHydrated("default-r1")

	conn, err := pgx.Connect(ctx, "postgres://tandem@"+pgwireAddr+"/tandem?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// A load generator rather than a table: replicas generate it themselves, so hydration
	// does not depend on reading table storage (see the note on tables in
	// docs/design/kubernetes-orchestrator.md).
	h.exec(conn, "CREATE SOURCE small FROM LOAD GENERATOR KEY VALUE (KEYS 1000)")
	h.exec(conn, "CREATE INDEX small_key ON small (key)")
	h.waitQuery(conn, "SELECT count(*) FROM small", 1000)

	// 2. CREATE CLUSTER REPLICA creates a ComputeReplica (two processes: two pods, two
	// addresses); the operator renders it; the controller connects and it hydrates.
	h.exec(conn, "CREATE CLUSTER REPLICA default.r2 (SIZE '2x1')")
	r2 := h.replica("default-r2")
	if got := r2.Spec; got.ClusterName != "default" || got.Processes != 2 || got.Workers != 1 || got.InteractiveRuntime {
		t.Fatalf("default-r2 spec %+v", got)
	}
	h.statefulSet("default-r2", 2, false)
	h.waitHydrated("default-r2")

	// 3. A replica a user applies (kubectl apply --server-side) for the cluster is adopted:
	// labelled for the controller, imported into the catalog with the manifest's shape,
	// connected, and reported Hydrated.
	blue := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion().String(), "kind": v1alpha1.Kind,
		"metadata": map[string]any{"name": "blue", "namespace": ns},
		"spec":     map[string]any{"clusterName": "default", "processes": int64(1), "workers": int64(1), "image": "user/replica:custom"},
	}}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(blue), client.FieldOwner("kubectl")); err != nil {
		t.Fatal(err)
	}
	h.eventually("blue adopted", func() error {
		cr := h.replica("blue")
		if cr.Labels[v1alpha1.LabelManagedBy] != "tandem-controller" || cr.Annotations["compute.tandem.dev/adopted-by"] == "" {
			return fmt.Errorf("labels %v, annotations %v", cr.Labels, cr.Annotations)
		}
		return nil
	})
	h.eventually("blue in SHOW CLUSTER REPLICAS", func() error {
		got, err := h.showReplicas(conn)
		if err != nil || !slices.Contains(got, "default.blue 1") {
			return fmt.Errorf("SHOW CLUSTER REPLICAS: %v (%v), want default.blue 1 (1 process x 1 worker) among them", got, err)
		}
		return nil
	})
	h.statefulSet("blue", 1, false)
	h.waitHydrated("blue")
	if got := h.replica("blue").Spec; got.Image != "user/replica:custom" || got.Workers != 1 {
		t.Fatalf("adoption changed the user's spec: %+v", got)
	}

	// 4. Flipping the flag sets spec.interactiveRuntime on every replica, the adopted one
	// included; the operator rolls them one at a time, each waiting for the controller's
	// Hydrated on the new pods, and all come back hydrated on pods with the interactive
	// runtime.
	names := []string{"blue", "default-r1", "default-r2"}
	gen := map[string]int64{}
	for _, name := range names {
		gen[name] = h.replica(name).Generation
	}
	restarts := kl.restarts()
	mon := newConditionMonitor(h, names...)
	h.exec(conn, "ALTER SYSTEM SET enable_compute_interactive_dataflows = on")
	for _, name := range names {
		h.eventually(name+" interactive in spec", func() error {
			cr := h.replica(name)
			if !cr.Spec.InteractiveRuntime || cr.Generation != gen[name]+1 {
				return fmt.Errorf("interactiveRuntime %v at generation %d (was %d)", cr.Spec.InteractiveRuntime, cr.Generation, gen[name])
			}
			return nil
		})
	}
	h.statefulSet("blue", 1, true)
	h.statefulSet("default-r1", 1, true)
	h.statefulSet("default-r2", 2, true)
	for _, name := range names {
		h.waitHydrated(name)
	}
	h.eventually("every replica restarted once", func() error {
		got := kl.restarts()
		for _, name := range names {
			if len(got[name]) != len(restarts[name])+1 {
				return fmt.Errorf("%s restarted %d times, want %d", name, len(got[name]), len(restarts[name])+1)
			}
		}
		return nil
	})
	mon.stop()
	after := kl.restarts()
	order := slices.Clone(names)
	slices.SortFunc(order, func(a, b string) int { return after[a][len(after[a])-1].Compare(after[b][len(after[b])-1]) })
	for i := 1; i < len(order); i++ {
		prev, next := order[i-1], order[i]
		hydratedAt, ok := mon.firstTrueAt(prev, gen[prev]+1)
		if !ok {
			t.Fatalf("never saw %s Hydrated for generation %d", prev, gen[prev]+1)
		}
		if rolled := after[next][len(after[next])-1]; !rolled.After(hydratedAt) {
			t.Fatalf("%s was rolled at %s, before %s was Hydrated on its new pods at %s: two replicas down at once",
				next, rolled.Format(time.StampMilli), prev, hydratedAt.Format(time.StampMilli))
		}
	}
	t.Logf("rolled in order %v", order)
	for _, name := range names {
		if !mon.sawFalse(name) {
			t.Logf("note: the monitor did not catch %s's Hydrated=False between its restart and hydration", name)
		}
	}
	h.waitQuery(conn, "SELECT key FROM small WHERE key = 7", 7)

	// 5. DROP CLUSTER REPLICA deletes the ComputeReplica, a created or an adopted one (the
	// fake kubelet plays the garbage collector), and returns once it is gone; the adopted
	// one is not imported again meanwhile.
	for _, drop := range []struct{ sql, object string }{
		{"DROP CLUSTER REPLICA default.r2", "default-r2"},
		{"DROP CLUSTER REPLICA default.blue", "blue"},
	} {
		h.exec(conn, drop.sql)
		var gone v1alpha1.ComputeReplica
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: drop.object}, &gone); !apierrors.IsNotFound(err) {
			t.Fatalf("%s after %s: %v", drop.object, drop.sql, err)
		}
	}
	time.Sleep(time.Second) // a few adoption rounds
	if got, err := h.showReplicas(conn); err != nil || len(got) != 1 || !strings.HasPrefix(got[0], "default.r1 ") {
		t.Fatalf("replicas after the drops: %v (%v), want default.r1 alone", got, err)
	}
	h.waitQuery(conn, "SELECT count(*) FROM small", 1000)
}

// k8sHarness reads the API server for the test.
type k8sHarness struct {
	t   *testing.T
	ctx context.Context
	c   client.Client
	ns  string
	// httpAddr is the controller's; its /api/status is logged when a wait fails.
	httpAddr string
}

func (h *k8sHarness) eventually(what string, f func() error) {
	h.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			if resp, err := http.Get("http://" + h.httpAddr + "/api/status"); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				h.t.Logf("controller /api/status:\n%s", b)
			}
			h.t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replica waits for the named ComputeReplica and returns it.
func (h *k8sHarness) replica(name string) *v1alpha1.ComputeReplica {
	h.t.Helper()
	var cr v1alpha1.ComputeReplica
	h.eventually("ComputeReplica "+name, func() error {
		return h.c.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, &cr)
	})
	return &cr
}

// statefulSet waits until the operator rendered the replica's StatefulSet with the given
// number of pods, and the interactive port exactly when interactive.
func (h *k8sHarness) statefulSet(name string, pods int32, interactive bool) {
	h.t.Helper()
	h.eventually(fmt.Sprintf("StatefulSet %s (interactive %v)", name, interactive), func() error {
		var sts appsv1.StatefulSet
		if err := h.c.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, &sts); err != nil {
			return err
		}
		if sts.Spec.Replicas == nil || *sts.Spec.Replicas != pods {
			return fmt.Errorf("replicas %v, want %d", sts.Spec.Replicas, pods)
		}
		if got := hasInteractivePort(&sts.Spec.Template); got != interactive {
			return fmt.Errorf("interactive port %v, want %v", got, interactive)
		}
		return nil
	})
}

// waitHydrated waits until the controller's Hydrated condition is True for the replica's
// current generation, as the operator's rollout requires.
func (h *k8sHarness) waitHydrated(name string) {
	h.t.Helper()
	h.eventually(name+" Hydrated", func() error {
		cr := h.replica(name)
		c := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionHydrated)
		switch {
		case c == nil:
			return errors.New("no Hydrated condition")
		case c.Status != metav1.ConditionTrue || c.ObservedGeneration != cr.Generation:
			return fmt.Errorf("Hydrated %s (%s: %s) for generation %d, want True for %d", c.Status, c.Reason, c.Message, c.ObservedGeneration, cr.Generation)
		case c.Reason != controller.HydrationReasonHydrated:
			return fmt.Errorf("reason %s", c.Reason)
		}
		return nil
	})
}

// showReplicas returns SHOW CLUSTER REPLICAS as "cluster.replica size" lines.
func (h *k8sHarness) showReplicas(conn *pgx.Conn) ([]string, error) {
	rows, err := conn.Query(h.ctx, "SHOW CLUSTER REPLICAS")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		if len(vals) < 3 {
			return nil, fmt.Errorf("SHOW CLUSTER REPLICAS row %v", vals)
		}
		out = append(out, fmt.Sprintf("%v.%v %v", vals[0], vals[1], vals[2]))
	}
	return out, rows.Err()
}

func (h *k8sHarness) exec(conn *pgx.Conn, sql string) {
	h.t.Helper()
	if _, err := conn.Exec(h.ctx, sql); err != nil {
		h.t.Fatalf("%s: %v", sql, err)
	}
}

// waitQuery waits until query answers the one integer want.
func (h *k8sHarness) waitQuery(conn *pgx.Conn, query string, want int64) {
	h.t.Helper()
	h.eventually(fmt.Sprintf("%s = %d", query, want), func() error {
		var got int64
		if err := conn.QueryRow(h.ctx, query).Scan(&got); err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("got %d", got)
		}
		return nil
	})
}

// conditionMonitor records the Hydrated conditions of some replicas as they change.
type conditionMonitor struct {
	mu   sync.Mutex
	seen map[string][]observedCondition
	done chan struct{}
	quit context.CancelFunc
}

type observedCondition struct {
	at         time.Time
	status     metav1.ConditionStatus
	generation int64
}

func newConditionMonitor(h *k8sHarness, names ...string) *conditionMonitor {
	ctx, quit := context.WithCancel(h.ctx)
	m := &conditionMonitor{seen: map[string][]observedCondition{}, done: make(chan struct{}), quit: quit}
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			for _, name := range names {
				var cr v1alpha1.ComputeReplica
				if err := h.c.Get(ctx, client.ObjectKey{Namespace: h.ns, Name: name}, &cr); err != nil {
					continue
				}
				if c := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionHydrated); c != nil {
					m.mu.Lock()
					m.seen[name] = append(m.seen[name], observedCondition{at: time.Now(), status: c.Status, generation: c.ObservedGeneration})
					m.mu.Unlock()
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return m
}

func (m *conditionMonitor) stop() { m.quit(); <-m.done }

// firstTrueAt is when the monitor first saw the replica Hydrated for generation gen.
func (m *conditionMonitor) firstTrueAt(name string, gen int64) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.seen[name] {
		if o.status == metav1.ConditionTrue && o.generation >= gen {
			return o.at, true
		}
	}
	return time.Time{}, false
}

func (m *conditionMonitor) sawFalse(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.ContainsFunc(m.seen[name], func(o observedCondition) bool { return o.status == metav1.ConditionFalse })
}

// fakeKubelet plays the StatefulSet controller, the kubelet and the garbage collector for
// the operator's replicas: every StatefulSet gets its pods, created from its template and
// marked ready, and each incarnation of a replica's pods runs as local replica processes.
// It is also the controller's dialer, resolving the pods' DNS names to those processes.
type fakeKubelet struct {
	t     *testing.T
	c     client.Client
	ns    string
	procs *process.Orchestrator

	mu sync.Mutex
	// restartLog is when each replica's processes were (re)started for new pods.
	restartLog map[string][]time.Time
}

func newFakeKubelet(t *testing.T, c client.Client, ns, replicaBin, storageAddr string) *fakeKubelet {
	logDir := t.TempDir()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		files, _ := filepath.Glob(filepath.Join(logDir, "*"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				lines := strings.Split(string(b), "\n")
				t.Logf("%s (last 40 lines):\n%s", filepath.Base(f), strings.Join(lines[max(0, len(lines)-40):], "\n"))
			}
		}
	})
	procs, err := process.New(process.Config{
		ReplicaBinary: replicaBin,
		Log:           testr.NewWithOptions(t, testr.Options{Verbosity: 0}).WithName("pods"),
		LogDir:        logDir,
		Env:           []string{"TANDEM_STORAGE_ADDR=" + storageAddr},
		StopGrace:     time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fakeKubelet{t: t, c: c, ns: ns, procs: procs, restartLog: map[string][]time.Time{}}
}

func (k *fakeKubelet) close() { _ = k.procs.Close() }

func (k *fakeKubelet) restarts() map[string][]time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string][]time.Time{}
	for n, ts := range k.restartLog {
		out[n] = slices.Clone(ts)
	}
	return out
}

func (k *fakeKubelet) run(ctx context.Context) {
	for ctx.Err() == nil {
		var list v1alpha1.ComputeReplicaList
		if err := k.c.List(ctx, &list, client.InNamespace(k.ns)); err == nil {
			for i := range list.Items {
				if err := k.sync(ctx, &list.Items[i]); err != nil && ctx.Err() == nil {
					k.t.Logf("fake kubelet: %s: %v", list.Items[i].Name, err)
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// sync brings one replica's pods and processes in line with its StatefulSet.
func (k *fakeKubelet) sync(ctx context.Context, cr *v1alpha1.ComputeReplica) error {
	id := orchestrator.ReplicaID{Cluster: "pods", Replica: cr.Name}
	if cr.DeletionTimestamp != nil {
		// The garbage collector: dependents go, then the foreground finalizer.
		if err := k.procs.RemoveReplica(ctx, id); err != nil {
			return err
		}
		for _, obj := range []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}} {
			obj.SetNamespace(k.ns)
			obj.SetName(cr.Name)
			if err := k.c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
		if err := k.c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(k.ns), client.MatchingLabels(render.SelectorLabels(cr))); err != nil {
			return err
		}
		cr.Finalizers = nil
		if err := k.c.Update(ctx, cr); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
		return nil
	}
	var sts appsv1.StatefulSet
	switch err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: cr.Name}, &sts); {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	n := int(*sts.Spec.Replicas)
	var missing []string
	stale := false
	for i := range n {
		var pod corev1.Pod
		name := fmt.Sprintf("%s-%d", sts.Name, i)
		switch err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: name}, &pod); {
		case apierrors.IsNotFound(err):
			missing = append(missing, name)
		case err != nil:
			return err
		default:
			stale = stale || pod.Labels[render.LabelPodTemplateHash] != sts.Spec.Template.Labels[render.LabelPodTemplateHash]
		}
	}
	if len(missing) > 0 && stale {
		// The operator is deleting an old template's pods one Delete at a time: wait
		// until it has deleted them all, as one restart of the replica.
		return nil
	}
	if len(missing) > 0 {
		// A pod of the replica is gone (the operator rolls all of them together): its
		// processes share fate, so this incarnation's processes stop and a new one starts
		// from the current template, as new pods would.
		if err := k.procs.RemoveReplica(ctx, id); err != nil {
			return err
		}
		cfg := orchestrator.ReplicaConfig{ID: id, Processes: n, Workers: int(cr.Spec.Workers),
			Interactive: hasInteractivePort(&sts.Spec.Template), LogLevel: "debug"}
		if err := k.procs.EnsureReplica(ctx, cfg); err != nil {
			return err
		}
		k.mu.Lock()
		k.restartLog[cr.Name] = append(k.restartLog[cr.Name], time.Now())
		k.mu.Unlock()
	}
	for _, name := range missing {
		pod := corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns, Labels: sts.Spec.Template.Labels},
			Spec:       sts.Spec.Template.Spec,
		}
		if err := k.c.Create(ctx, &pod); err != nil {
			return err
		}
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		if err := k.c.Status().Update(ctx, &pod); err != nil {
			return err
		}
	}
	return nil
}

// Dial resolves "<replica>-<ordinal>.<service>...:port" to the local process of that pod.
func (k *fakeKubelet) Dial(ctx context.Context, addr string) (controller.Stream, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	podName, _, _ := strings.Cut(host, ".")
	i := strings.LastIndexByte(podName, '-')
	ordinal, err := strconv.Atoi(podName[i+1:])
	if i < 0 || err != nil {
		return nil, fmt.Errorf("fake DNS: %s is not a StatefulSet pod name", podName)
	}
	st, err := k.procs.Status(ctx, orchestrator.ReplicaID{Cluster: "pods", Replica: podName[:i]})
	if err != nil {
		return nil, fmt.Errorf("fake DNS: %s: %w", host, err)
	}
	if ordinal >= len(st.Processes) || st.Processes[ordinal].ComputeCtlAddr == "" {
		return nil, fmt.Errorf("fake DNS: %s has no process", host)
	}
	return controller.GRPCDialer{}.Dial(ctx, st.Processes[ordinal].ComputeCtlAddr)
}

func hasInteractivePort(tmpl *corev1.PodTemplateSpec) bool {
	for _, ctr := range tmpl.Spec.Containers {
		for _, p := range ctr.Ports {
			if p.Name == render.PortInteractive {
				return true
			}
		}
	}
	return false
}

// buildReplica builds cmd/replica into a temporary directory.
func buildReplica(t *testing.T) string {
	t.Helper()
	if dir, ok, err := prebuiltBinaries("replica"); ok || err != nil {
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, "replica")
	}
	dir := t.TempDir()
	out, err := exec.Command("go", "build", "-o", dir+"/", "../../cmd/replica").CombinedOutput()
	if err != nil {
		t.Fatalf("build replica: %v\n%s", err, out)
	}
	return filepath.Join(dir, "replica")
}

// freeAddr returns a loopback address nothing listens on (the controller's storage
// service, which the local replica processes must know before the controller starts).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startInProcessController runs the controller until ctx ends and returns its pgwire
// address, read from its banner; its log goes to the test log on failure.
func startInProcessController(ctx context.Context, t *testing.T, cfg *config) (pgwireAddr, httpAddr string, done <-chan error) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "controller.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		logf.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				lines := strings.Split(string(b), "\n")
				t.Logf("controller log (last 150 lines):\n%s", strings.Join(lines[max(0, len(lines)-150):], "\n"))
			}
		}
	})
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := run(ctx, cfg, pw, logf)
		pw.CloseWithError(io.EOF)
		errc <- err
	}()
	sc := bufio.NewScanner(pr)
	var addr string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "HTTP:"); ok {
			httpAddr = strings.TrimSuffix(strings.TrimPrefix(strings.Fields(rest)[0], "http://"), "/api/status")
		}
		if rest, ok := strings.CutPrefix(line, "SQL:"); ok {
			var host, port string
			fmt.Sscanf(strings.TrimSpace(rest), "psql -h %s -p %s", &host, &port)
			addr = host + ":" + port
		}
		if strings.HasPrefix(line, "Press Ctrl-C") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if addr == "" {
		select {
		case err := <-errc:
			t.Fatalf("controller stopped before serving: %v", err)
		case <-time.After(time.Second):
			t.Fatal("controller did not print its pgwire address")
		}
	}
	return addr, httpAddr, errc
}
