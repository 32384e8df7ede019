//go:build k8ssim

package e2e

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
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/render"
)

const (
	namespace = "tandem"
	release   = "tandem"
	cluster   = "prod"
	// The chart's fullname for release "tandem" is "tandem".
	operatorSA   = "tandem-operator"
	controllerSA = "tandem-controller"
	sampleFile   = "config/samples/compute_v1alpha1_computereplica_cluster.yaml"
)

var replicas = []string{"prod-r1", "prod-r2", "prod-r3"}

// suite is the state the steps of TestSimulatedCluster share; each step builds on the last.
type suite struct {
	owner       *testing.T // the whole test: processes started by a step live until it ends
	s           *sim
	tracker     *availabilityTracker
	controller  fakeController
	operatorBin string
	operatorKC  string
	leader      *operatorProcess
	standby     *operatorProcess
	oldHash     map[string]string
}

// TestSimulatedCluster runs the operator's life on the simulated cluster as one story:
// install, apply, roll, pause, crash the leader, deadline, upgrade. Steps stop at the first
// failure, since each needs the state the previous one left.
func TestSimulatedCluster(t *testing.T) {
	s := newSim(t)
	ctx, cancel := context.WithTimeout(context.Background(), 13*time.Minute)
	defer cancel()
	if _, err := s.cs.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{}); err == nil {
		t.Fatalf("namespace %s exists: this suite needs a fresh simulated cluster (hack/kube-sim.sh down; hack/kube-sim.sh up)", namespace)
	}
	st := &suite{owner: t, s: s, tracker: newAvailabilityTracker(), oldHash: map[string]string{}}
	steps := []struct {
		name string
		run  func(context.Context, *testing.T)
	}{
		{"HelmInstall", st.helmInstall},
		{"ChartRBAC", st.chartRBAC},
		{"StartOperators", st.startOperators},
		{"ApplySamples", st.applySamples},
		{"RollWithPauseAndLeaderCrash", st.rollWithPauseAndLeaderCrash},
		{"ProgressDeadline", st.progressDeadline},
		{"HelmUpgradeCRD", st.helmUpgradeCRD},
		{"NodeDrain", st.nodeDrain},
		{"EvictionWithoutCordon", st.evictionWithoutCordon},
		{"ReadsThroughDrainAndRoll", st.readsThroughDrainAndRoll},
	}
	for _, step := range steps {
		start := time.Now()
		ok := t.Run(step.name, func(t *testing.T) { step.run(ctx, t) })
		t.Logf("step %s: %s", step.name, time.Since(start).Round(100*time.Millisecond))
		if !ok {
			for _, p := range []*operatorProcess{st.leader, st.standby} {
				if p != nil {
					t.Logf("operator %s log tail:\n%s", p.name, p.tail(30))
				}
			}
			t.Logf("pod timeline:\n%s", st.tracker.timelineText())
			if v := st.tracker.report().Violations; len(v) > 0 {
				t.Logf("availability violations so far:\n%s", strings.Join(v, "\n"))
			}
			t.FailNow()
		}
	}
	t.Logf("pod timeline:\n%s", st.tracker.timelineText())
}

// helmInstall installs the chart with the values charts/tandem/tests' TestChartOnHost runs
// on the host (chartValuesFile: a superuser password Secret, SQL TLS, internal mutual TLS),
// after creating the two Secrets they name. The controller StatefulSet's PVC binds to a
// pre-provisioned PersistentVolume (the simulated cluster has no provisioner), and
// `helm install --wait` returns once the operator Deployment's and the controller's pods,
// scheduled onto fake nodes, are Ready.
func (st *suite) helmInstall(ctx context.Context, t *testing.T) {
	s := st.s
	s.must(ctx, t, "kubectl", "apply", "-f", "operator/e2e/testdata/controller-pv.yaml")
	s.createChartSecrets(ctx, t)
	s.must(ctx, t, "helm", "install", release, "charts/tandem", "--namespace", namespace, "-f", chartValuesFile,
		"--wait", "--timeout", "2m", "--set", "image.repository=registry.example/tandem", "--set", "image.tag=e2e")

	var dep appsv1.Deployment
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: operatorSA}, &dep); err != nil {
		t.Fatal(err)
	}
	if dep.Status.ReadyReplicas != *dep.Spec.Replicas {
		t.Errorf("operator Deployment: %d of %d ready", dep.Status.ReadyReplicas, *dep.Spec.Replicas)
	}
	var sts appsv1.StatefulSet
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: controllerSA}, &sts); err != nil {
		t.Fatal(err)
	}
	if sts.Status.ReadyReplicas != 1 {
		t.Errorf("controller StatefulSet: %d ready, want 1", sts.Status.ReadyReplicas)
	}
	var pods corev1.PodList
	if err := s.c.List(ctx, &pods, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 3 {
		t.Errorf("%d pods in %s, want 3 (two operators, one controller)", len(pods.Items), namespace)
	}
	for _, p := range pods.Items {
		if !strings.HasPrefix(p.Spec.NodeName, "sim-node-") || !podReady(&p) {
			t.Errorf("pod %s: node %q, ready %v", p.Name, p.Spec.NodeName, podReady(&p))
		}
	}
	// The CRD came with the chart and is served.
	var list v1alpha1.ComputeReplicaList
	if err := s.c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		t.Fatalf("list computereplicas after install: %v", err)
	}
}

// chartRBAC asks the API server's authorizer what the chart's ServiceAccounts may do:
// enough for their jobs and nothing outside them. The later steps exercise the same
// grants for real (the operator and the controller's writes run with these accounts).
func (st *suite) chartRBAC(ctx context.Context, t *testing.T) {
	crs := func(ns, verb, sub string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: v1alpha1.GroupVersion().Group, Resource: "computereplicas", Subresource: sub}
	}
	core := func(ns, verb, resource string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Resource: resource}
	}
	ctrlSA := "system:serviceaccount:" + namespace + ":" + controllerSA
	opSA := "system:serviceaccount:" + namespace + ":" + operatorSA
	tests := []struct {
		sa    string
		attrs authorizationv1.ResourceAttributes
		want  bool
	}{
		// The controller creates, adopts, lists, watches and deletes replicas, and writes
		// their Hydrated condition (server-side apply is a patch of the status subresource).
		{ctrlSA, crs(namespace, "create", ""), true},
		{ctrlSA, crs(namespace, "patch", ""), true},
		{ctrlSA, crs(namespace, "list", ""), true},
		{ctrlSA, crs(namespace, "watch", ""), true},
		{ctrlSA, crs(namespace, "delete", ""), true},
		{ctrlSA, crs(namespace, "get", "status"), true},
		{ctrlSA, crs(namespace, "patch", "status"), true},
		// ...only in its own namespace, and never touches pods.
		{ctrlSA, crs("default", "patch", ""), false},
		{ctrlSA, crs(namespace, "update", "status"), false},
		{ctrlSA, crs(namespace, "update", ""), false}, // least privilege: it only applies
		{ctrlSA, core(namespace, "delete", "pods"), false},
		// The operator writes status but never a replica's spec.
		{opSA, crs("default", "watch", ""), true},
		{opSA, crs("default", "patch", "status"), true},
		{opSA, crs("default", "patch", ""), false},
		{opSA, core("default", "delete", "pods"), true},
		{opSA, core("default", "create", "pods"), false},
		// Leader election records core/v1 events; the reconciler records events.k8s.io ones.
		{opSA, core(namespace, "create", "events"), true},
		{opSA, authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "create", Group: "events.k8s.io", Resource: "events"}, true},
		// It issues the internal TLS Secrets (internalTLS.enabled, the default): it reads
		// and writes Secrets where replicas live, but never deletes or patches one.
		{opSA, core("default", "get", "secrets"), true},
		{opSA, core("default", "delete", "secrets"), false},
		{opSA, core("default", "patch", "secrets"), false},
		// It reads nodes, to open the budget of a replica on a node being drained.
		{opSA, core("", "watch", "nodes"), true},
		{opSA, core("", "patch", "nodes"), false},
		// The controller records adoption failures as events in its namespace.
		{ctrlSA, authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "create", Group: "events.k8s.io", Resource: "events"}, true},
	}
	for _, tt := range tests {
		got, err := st.s.canI(ctx, tt.sa, tt.attrs)
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			a := tt.attrs
			t.Errorf("%s %s %s/%s in %q: allowed %v, want %v", tt.sa, a.Verb, a.Resource, a.Subresource, a.Namespace, got, tt.want)
		}
	}
}

// startOperators runs two operator processes with the operator ServiceAccount's token, as
// the chart's two-replica Deployment would: one leads, one waits.
func (st *suite) startOperators(ctx context.Context, t *testing.T) {
	s := st.s
	st.operatorBin = s.buildOperator(ctx, t)
	var err error
	_, st.operatorKC, err = s.serviceAccountConfig(ctx, namespace, operatorSA)
	if err != nil {
		t.Fatal(err)
	}
	ctrlCfg, _, err := s.serviceAccountConfig(ctx, namespace, controllerSA)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newClient(ctrlCfg)
	if err != nil {
		t.Fatal(err)
	}
	st.controller = fakeController{c: c}

	st.leader = s.startOperator(t, st.owner, st.operatorBin, "operator-a", st.operatorKC, namespace)
	eventually(ctx, t, "operator-a leads", 30*time.Second, func() error {
		if st.leader.exited() {
			t.Fatalf("operator-a exited:\n%s", st.leader.tail(20))
		}
		_, err := s.leaseHolder(ctx, namespace)
		return err
	})
	st.standby = s.startOperator(t, st.owner, st.operatorBin, "operator-b", st.operatorKC, namespace)
}

// applySamples applies the three-replica sample, adopts the replicas as the controller
// would and reports them hydrated; the StatefulSet controller creates their pods, the
// scheduler binds them to fake nodes and kwok makes them Ready.
func (st *suite) applySamples(ctx context.Context, t *testing.T) {
	s := st.s
	s.must(ctx, t, "kubectl", "apply", "--namespace", namespace, "-f", sampleFile)
	for _, r := range replicas {
		st.tracker.setShape(r, cluster, 2)
		if err := st.controller.adopt(ctx, namespace, r); err != nil {
			t.Fatal(err)
		}
		cr, err := s.replica(ctx, namespace, r)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.controller.hydrate(ctx, namespace, r, cr.Generation); err != nil {
			t.Fatal(err)
		}
	}
	s.watchPods(ctx, t, namespace, st.tracker)
	for _, r := range replicas {
		cr := s.waitReplica(ctx, t, namespace, r, time.Minute, rolledOut)
		want := []string{r + "-0." + r + "." + namespace + ".svc:2100", r + "-1." + r + "." + namespace + ".svc:2100"}
		if !slices.Equal(cr.Status.ComputectlAddresses, want) {
			t.Errorf("%s computectl addresses %v, want %v", r, cr.Status.ComputectlAddresses, want)
		}
		if !meta.IsStatusConditionTrue(cr.Status.Conditions, v1alpha1.ConditionHydrated) {
			t.Errorf("%s lost the controller's Hydrated condition: %s", r, conditionsText(cr))
		}
		st.oldHash[r] = cr.Status.CurrentHash
	}
	// The rendered objects exist, and the pods were made by the StatefulSet controller.
	for _, r := range replicas {
		for _, obj := range []client.Object{&corev1.Service{}, &appsv1.StatefulSet{}} {
			if err := s.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: r}, obj); err != nil {
				t.Errorf("%T %s: %v", obj, r, err)
			}
		}
		var pod corev1.Pod
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: r + "-0"}, &pod); err != nil {
			t.Fatal(err)
		}
		if owner := metav1.GetControllerOf(&pod); owner == nil || owner.Kind != "StatefulSet" || owner.Name != r {
			t.Errorf("pod %s owner %v, want StatefulSet %s", pod.Name, owner, r)
		}
	}
	eventually(ctx, t, "the pod watch sees every replica up", 10*time.Second, st.tracker.arm)
}

// patch applies a JSON merge patch to a replica with kubectl, as a user would.
func (st *suite) patch(ctx context.Context, t *testing.T, replica, patch string) {
	t.Helper()
	st.s.must(ctx, t, "kubectl", "patch", "computereplica", replica, "--namespace", namespace, "--type", "merge", "-p", patch)
}

// hydrateWhenWaiting waits until the operator waits for the controller on a replica whose
// new pods are up, then reports it hydrated.
func (st *suite) hydrateWhenWaiting(ctx context.Context, t *testing.T, replica string, timeout time.Duration) {
	t.Helper()
	cr := st.s.waitReplica(ctx, t, namespace, replica, timeout, progressing(metav1.ConditionTrue, "WaitingForHydration"))
	if cr.Status.CurrentHash != cr.Status.UpdateHash {
		t.Fatalf("%s waits for hydration with current hash %q, update %q", replica, cr.Status.CurrentHash, cr.Status.UpdateHash)
	}
	if err := st.controller.hydrate(ctx, namespace, replica, cr.Generation); err != nil {
		t.Fatal(err)
	}
}

// podHashes are the distinct template hashes of a replica's pods, read live.
func (st *suite) podHashes(ctx context.Context, t *testing.T, replica string) []string {
	t.Helper()
	var pods corev1.PodList
	if err := st.s.c.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{render.LabelReplica: replica}); err != nil {
		t.Fatal(err)
	}
	var hs []string
	for _, p := range pods.Items {
		if h := p.Labels[render.LabelPodTemplateHash]; !slices.Contains(hs, h) {
			hs = append(hs, h)
		}
	}
	slices.Sort(hs)
	return hs
}

// rollWithPauseAndLeaderCrash flips interactiveRuntime on all three replicas with the third
// paused, kills the leading operator while the first waits for hydration, and checks that
// the standby finishes the roll one replica at a time and leaves the paused one alone until
// it is unpaused.
func (st *suite) rollWithPauseAndLeaderCrash(ctx context.Context, t *testing.T) {
	s := st.s
	st.patch(ctx, t, "prod-r3", `{"spec":{"rollout":{"paused":true}}}`)
	// Flip all three in one apply of the edited sample, so that the operator sees them
	// change together and only its one-at-a-time rule keeps them apart.
	sample, err := os.ReadFile(filepath.Join(s.root, sampleFile))
	if err != nil {
		t.Fatal(err)
	}
	flipped := strings.ReplaceAll(string(sample), "interactiveRuntime: false", "interactiveRuntime: true")
	if strings.Count(flipped, "interactiveRuntime: true") != len(replicas) {
		t.Fatalf("%s does not set interactiveRuntime: false on each of %d replicas", sampleFile, len(replicas))
	}
	flippedFile := filepath.Join(s.work, "flipped.yaml")
	if err := os.WriteFile(flippedFile, []byte(flipped), 0o644); err != nil {
		t.Fatal(err)
	}
	s.must(ctx, t, "kubectl", "apply", "--namespace", namespace, "-f", flippedFile)

	// prod-r1 rolls first (name order); the others wait.
	r1 := s.waitReplica(ctx, t, namespace, "prod-r1", time.Minute, progressing(metav1.ConditionTrue, "WaitingForHydration"))
	var sts appsv1.StatefulSet
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "prod-r1"}, &sts); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(sts.Spec.Template.Spec.Containers[0].Ports, func(p corev1.ContainerPort) bool { return p.Name == "interactive" }) {
		t.Errorf("prod-r1's StatefulSet has no interactive port after the flip")
	}
	s.waitReplica(ctx, t, namespace, "prod-r2", 10*time.Second, progressing(metav1.ConditionTrue, "WaitingForTurn"))
	s.waitReplica(ctx, t, namespace, "prod-r3", 10*time.Second, progressing(metav1.ConditionFalse, "RolloutPaused"))
	if got := st.podHashes(ctx, t, "prod-r2"); !slices.Equal(got, []string{st.oldHash["prod-r2"]}) {
		t.Errorf("prod-r2 pods have templates %v while prod-r1 rolls, want only the old %s", got, st.oldHash["prod-r2"])
	}

	// Crash the leader mid-rollout: no graceful shutdown, its lease must expire.
	holder, err := s.leaseHolder(ctx, namespace)
	if err != nil {
		t.Fatal(err)
	}
	crashed := time.Now()
	st.leader.kill()
	if err := st.controller.hydrate(ctx, namespace, "prod-r1", r1.Generation); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the standby operator takes the lease", 45*time.Second, func() error {
		h, err := s.leaseHolder(ctx, namespace)
		if err == nil && h == holder {
			return fmt.Errorf("still held by the killed leader %s", h)
		}
		return err
	})
	t.Logf("standby took over %s after the leader was killed", time.Since(crashed).Round(100*time.Millisecond))
	st.leader, st.standby = st.standby, s.startOperator(t, st.owner, st.operatorBin, "operator-c", st.operatorKC, namespace)

	s.waitReplica(ctx, t, namespace, "prod-r1", 30*time.Second, rolledOut)
	st.hydrateWhenWaiting(ctx, t, "prod-r2", 30*time.Second)
	s.waitReplica(ctx, t, namespace, "prod-r2", 30*time.Second, rolledOut)

	// prod-r3 stays paused on its old template.
	time.Sleep(2 * time.Second)
	s.waitReplica(ctx, t, namespace, "prod-r3", time.Second, progressing(metav1.ConditionFalse, "RolloutPaused"))
	if got := st.podHashes(ctx, t, "prod-r3"); !slices.Equal(got, []string{st.oldHash["prod-r3"]}) {
		t.Errorf("paused prod-r3 pods have templates %v, want only the old %s", got, st.oldHash["prod-r3"])
	}
	if n := st.tracker.report().Outages["prod-r3"]; n != 0 {
		t.Errorf("paused prod-r3 went down %d times", n)
	}

	st.patch(ctx, t, "prod-r3", `{"spec":{"rollout":{"paused":false}}}`)
	st.hydrateWhenWaiting(ctx, t, "prod-r3", 30*time.Second)
	for _, r := range replicas {
		cr := s.waitReplica(ctx, t, namespace, r, 30*time.Second, rolledOut)
		if cr.Status.CurrentHash == st.oldHash[r] {
			t.Errorf("%s still runs pod template %s after the flip", r, cr.Status.CurrentHash)
		}
		st.oldHash[r] = cr.Status.CurrentHash
	}

	rep := st.tracker.report()
	if len(rep.Violations) > 0 {
		t.Errorf("availability violations:\n%s", strings.Join(rep.Violations, "\n"))
	}
	if rep.MaxDown[cluster] != 1 {
		t.Errorf("at most %d replicas of %s were down at once, want exactly 1", rep.MaxDown[cluster], cluster)
	}
	for _, r := range replicas {
		if rep.Outages[r] != 1 {
			t.Errorf("%s went down %d times during the roll, want 1", r, rep.Outages[r])
		}
	}
}

// progressDeadline gives prod-r1 a node selector no fake node matches and a short deadline:
// its new pods stay Pending, Progressing turns False with ProgressDeadlineExceeded, and
// prod-r2's own change waits behind it. Fixing the spec rolls prod-r1 again.
func (st *suite) progressDeadline(ctx context.Context, t *testing.T) {
	s := st.s
	before := st.tracker.report().Outages
	st.patch(ctx, t, "prod-r1", `{"spec":{"scheduling":{"nodeSelector":{"sim.tandem.dev/pool":"none"}},"rollout":{"progressDeadlineSeconds":6}}}`)
	st.patch(ctx, t, "prod-r2", `{"spec":{"logLevel":"debug"}}`)

	s.waitReplica(ctx, t, namespace, "prod-r1", 30*time.Second, func(cr *v1alpha1.ComputeReplica) string {
		if msg := progressing(metav1.ConditionFalse, "ProgressDeadlineExceeded")(cr); msg != "" {
			return msg
		}
		if c := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionDegraded); c == nil || c.Status != metav1.ConditionTrue || c.Reason != "ProgressDeadlineExceeded" {
			return "Degraded is not True/ProgressDeadlineExceeded"
		}
		return ""
	})
	// The scheduler, not kwok, holds the pods back.
	var pod corev1.Pod
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "prod-r1-0"}, &pod); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending {
		t.Errorf("prod-r1-0 on node %q in phase %s, want unscheduled and Pending", pod.Spec.NodeName, pod.Status.Phase)
	}
	eventually(ctx, t, "a ProgressDeadlineExceeded warning event", 10*time.Second, func() error {
		evs, err := s.cs.EventsV1().Events(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == "prod-r1" && e.Reason == "ProgressDeadlineExceeded" && e.Type == corev1.EventTypeWarning {
				return nil
			}
		}
		return fmt.Errorf("none among %d events", len(evs.Items))
	})
	// The rest of the cluster is not rolled while prod-r1 is stuck.
	s.waitReplica(ctx, t, namespace, "prod-r2", time.Second, progressing(metav1.ConditionTrue, "WaitingForTurn"))
	if got := st.podHashes(ctx, t, "prod-r2"); !slices.Equal(got, []string{st.oldHash["prod-r2"]}) {
		t.Errorf("prod-r2 pods have templates %v while prod-r1 is stuck, want only %s", got, st.oldHash["prod-r2"])
	}

	// Fix the spec: prod-r1 rolls again, then prod-r2 takes its turn.
	st.patch(ctx, t, "prod-r1", `{"spec":{"scheduling":{"nodeSelector":null},"rollout":{"progressDeadlineSeconds":600}}}`)
	st.hydrateWhenWaiting(ctx, t, "prod-r1", 30*time.Second)
	s.waitReplica(ctx, t, namespace, "prod-r1", 30*time.Second, rolledOut)
	st.hydrateWhenWaiting(ctx, t, "prod-r2", 30*time.Second)
	for _, r := range replicas {
		cr := s.waitReplica(ctx, t, namespace, r, 30*time.Second, rolledOut)
		st.oldHash[r] = cr.Status.CurrentHash
	}
	rep := st.tracker.report()
	if len(rep.Violations) > 0 {
		t.Errorf("availability violations:\n%s", strings.Join(rep.Violations, "\n"))
	}
	// prod-r1 went down once (its stuck pods and their replacements are one outage),
	// prod-r2 once, prod-r3 not at all.
	for r, want := range map[string]int{"prod-r1": 1, "prod-r2": 1, "prod-r3": 0} {
		if got := rep.Outages[r] - before[r]; got != want {
			t.Errorf("%s went down %d times, want %d", r, got, want)
		}
	}
}

// helmUpgradeCRD upgrades the release to a copy of the chart whose CRD has one more printer
// column, and checks the API server serves it while the replicas keep running.
func (st *suite) helmUpgradeCRD(ctx context.Context, t *testing.T) {
	s := st.s
	chart := filepath.Join(s.work, "tandem")
	if err := copyChart(filepath.Join(s.root, "charts/tandem"), chart); err != nil {
		t.Fatal(err)
	}
	crdPath := filepath.Join(chart, "templates/crds/compute.tandem.dev_computereplicas.yaml")
	crd, err := os.ReadFile(crdPath)
	if err != nil {
		t.Fatal(err)
	}
	age := "    - jsonPath: .metadata.creationTimestamp\n      name: Age\n      type: date\n"
	if !strings.Contains(string(crd), age) {
		t.Fatalf("%s has no Age printer column to add after", crdPath)
	}
	changed := strings.Replace(string(crd), age, age+"    - jsonPath: .status.currentHash\n      name: Template\n      type: string\n", 1)
	if err := os.WriteFile(crdPath, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	before := st.tracker.report().Outages
	s.must(ctx, t, "helm", "upgrade", release, chart, "--namespace", namespace, "--wait", "--timeout", "2m",
		"--reuse-values")

	out := s.must(ctx, t, "kubectl", "get", "crd", "computereplicas.compute.tandem.dev",
		"-o", "jsonpath={.spec.versions[0].additionalPrinterColumns[*].name}")
	if !strings.Contains(out, "Template") {
		t.Errorf("CRD printer columns after upgrade: %s", out)
	}
	eventually(ctx, t, "kubectl shows the new column", 10*time.Second, func() error {
		out, err := s.run(ctx, t, "kubectl", "get", "computereplicas", "--namespace", namespace)
		if err != nil {
			return err
		}
		if !strings.Contains(strings.SplitN(out, "\n", 2)[0], "TEMPLATE") || !strings.Contains(out, st.oldHash["prod-r1"]) {
			return fmt.Errorf("output:\n%s", out)
		}
		return nil
	})
	for _, r := range replicas {
		s.waitReplica(ctx, t, namespace, r, 10*time.Second, rolledOut)
	}
	if after := st.tracker.report().Outages; fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("outages changed across the upgrade: %v -> %v", before, after)
	}
	var crdObj metav1.PartialObjectMetadata
	crdObj.SetGroupVersionKind(apiextensionsCRD)
	if err := s.c.Get(ctx, client.ObjectKey{Name: "computereplicas.compute.tandem.dev"}, &crdObj); err != nil {
		t.Fatal(err)
	}
	if crdObj.Annotations["helm.sh/resource-policy"] != "keep" {
		t.Errorf("CRD annotations %v: want helm.sh/resource-policy=keep", crdObj.Annotations)
	}
}
