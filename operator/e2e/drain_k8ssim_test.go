//go:build k8ssim

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/render"
)

// nodeOf names the node a pod runs on.
func (st *suite) nodeOf(ctx context.Context, t *testing.T, pod string) string {
	t.Helper()
	var p corev1.Pod
	if err := st.s.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: pod}, &p); err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName == "" {
		t.Fatalf("pod %s is not scheduled", pod)
	}
	return p.Spec.NodeName
}

// drain runs kubectl drain on the replica pods of a node.
func (st *suite) drain(ctx context.Context, t *testing.T, node string, timeout time.Duration) (string, error) {
	return st.s.run(ctx, t, "kubectl", "drain", node, "--pod-selector", replicaPodSelector,
		"--ignore-daemonsets", "--delete-emptydir-data", "--timeout", timeout.String())
}

func disruptionAllowed(status metav1.ConditionStatus, reason string) func(*v1alpha1.ComputeReplica) string {
	return func(cr *v1alpha1.ComputeReplica) string {
		c := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionDisruptionAllowed)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Sprintf("DisruptionAllowed is not %s/%s: %s", status, reason, conditionsText(cr))
		}
		return ""
	}
}

// nodeDrain drains the node running prod-r1-0 while every replica of prod is hydrated:
// the drain completes, the pods of each replica on it are moved one replica at a time (the
// pod watch checks that no two replicas of prod are down together), and every replica is
// back afterwards. Then a replica alone in its cluster: under Wait the drain of its node
// times out, and the replica says why in a condition and a warning event; under Allow the
// drain completes.
func (st *suite) nodeDrain(ctx context.Context, t *testing.T) {
	s := st.s
	for _, r := range replicas {
		s.waitReplica(ctx, t, namespace, r, 30*time.Second, disruptionAllowed(metav1.ConditionTrue, "PeersHydrated"))
	}
	before := st.tracker.report().Outages
	node := st.nodeOf(ctx, t, "prod-r1-0")
	onNode := map[string]bool{}
	var pods corev1.PodList
	if err := s.c.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{render.LabelName: render.AppName}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == node {
			onNode[p.Labels[render.LabelReplica]] = true
		}
	}
	start := time.Now()
	out, err := st.drain(ctx, t, node, 3*time.Minute)
	if err != nil {
		t.Fatalf("kubectl drain %s: %v\n%s", node, err, out)
	}
	t.Logf("kubectl drain of %s (pods of %d replicas) completed in %s", node, len(onNode), time.Since(start).Round(100*time.Millisecond))
	for _, r := range replicas {
		s.waitReplica(ctx, t, namespace, r, time.Minute, rolledOut)
	}
	if err := s.c.List(ctx, &pods, client.InNamespace(namespace), client.MatchingLabels{render.LabelName: render.AppName}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == node {
			t.Errorf("pod %s still on drained node %s", p.Name, node)
		}
	}
	rep := st.tracker.report()
	if len(rep.Violations) > 0 {
		t.Errorf("availability violations:\n%s", strings.Join(rep.Violations, "\n"))
	}
	for _, r := range replicas {
		want := 0
		if onNode[r] {
			want = 1
		}
		if got := rep.Outages[r] - before[r]; got != want {
			t.Errorf("%s went down %d times during the drain, want %d", r, got, want)
		}
	}
	s.must(ctx, t, "kubectl", "uncordon", node)

	// A replica alone in its cluster.
	const solo = "solo-r1"
	st.applySolo(ctx, t, solo)
	soloNode := st.nodeOf(ctx, t, solo+"-0")
	out, err = st.drain(ctx, t, soloNode, 10*time.Second)
	if err == nil {
		t.Fatalf("the drain of %s evicted the only replica of its cluster under Wait:\n%s", soloNode, out)
	}
	s.waitReplica(ctx, t, namespace, solo, 30*time.Second, func(cr *v1alpha1.ComputeReplica) string {
		c := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionDisruptionAllowed)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "SingleReplica" || !strings.Contains(c.Message, "interrupt reads") {
			return "DisruptionAllowed does not say the drain waits: " + conditionsText(cr)
		}
		return ""
	})
	st.expectEvent(ctx, t, solo, "DrainBlocked", corev1.EventTypeWarning)
	st.patch(ctx, t, solo, `{"spec":{"disruption":{"singleReplica":"Allow"}}}`)
	// A new generation: the controller reports Hydrated for it, as the real one does when
	// the pods run the current template.
	cr, err := s.replica(ctx, namespace, solo)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.controller.hydrate(ctx, namespace, solo, cr.Generation); err != nil {
		t.Fatal(err)
	}
	if out, err := st.drain(ctx, t, soloNode, 2*time.Minute); err != nil {
		t.Fatalf("kubectl drain %s under Allow: %v\n%s", soloNode, err, out)
	}
	st.expectEvent(ctx, t, solo, "DrainInterruptsReads", corev1.EventTypeWarning)
	s.must(ctx, t, "kubectl", "uncordon", soloNode)
	s.waitReplica(ctx, t, namespace, solo, time.Minute, rolledOut)
}

// applySolo creates a one-process replica alone in cluster "solo", adopted and hydrated.
func (st *suite) applySolo(ctx context.Context, t *testing.T, name string) {
	s := st.s
	cr := &v1alpha1.ComputeReplica{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       v1alpha1.ComputeReplicaSpec{ClusterName: "solo", Processes: 1, Workers: 1, Image: "tandem/tandem:dev"},
	}
	if err := s.c.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	st.tracker.setShape(name, "solo", 1)
	if err := st.controller.adopt(ctx, namespace, name); err != nil {
		t.Fatal(err)
	}
	got, err := s.replica(ctx, namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.controller.hydrate(ctx, namespace, name, got.Generation); err != nil {
		t.Fatal(err)
	}
	s.waitReplica(ctx, t, namespace, name, time.Minute, rolledOut)
}

func (st *suite) expectEvent(ctx context.Context, t *testing.T, object, reason, typ string) {
	t.Helper()
	st.expectEventIn(ctx, t, namespace, object, reason, typ)
}

func (st *suite) expectEventIn(ctx context.Context, t *testing.T, ns, object, reason, typ string) {
	t.Helper()
	eventually(ctx, t, "a "+reason+" event on "+object, 20*time.Second, func() error {
		evs, err := st.s.cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == object && e.Reason == reason && e.Type == typ {
				return nil
			}
		}
		return fmt.Errorf("none among %d events", len(evs.Items))
	})
}

// evictionWithoutCordon evicts a pod of each replica of prod directly through the Eviction
// API, as the descheduler or a script would, with no node cordoned and every replica of
// prod hydrated: the operator opens a replica's budget only for a drain (a cordoned node),
// so every eviction is refused (429) for as long as it is retried, the pods stay, and
// DisruptionAllowed stays PeersHydrated.
func (st *suite) evictionWithoutCordon(ctx context.Context, t *testing.T) {
	s := st.s
	pods := map[string]types.UID{}
	for _, r := range replicas {
		s.waitReplica(ctx, t, namespace, r, 30*time.Second, disruptionAllowed(metav1.ConditionTrue, "PeersHydrated"))
		eventually(ctx, t, "the budget of "+r+" is closed and observed", 20*time.Second, func() error {
			var pdb policyv1.PodDisruptionBudget
			if err := s.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: r}, &pdb); err != nil {
				return err
			}
			if mu := pdb.Spec.MaxUnavailable; mu == nil || mu.IntValue() != 0 {
				return fmt.Errorf("maxUnavailable %v", mu)
			}
			if pdb.Status.ObservedGeneration != pdb.Generation || pdb.Status.DisruptionsAllowed != 0 {
				return fmt.Errorf("status: observed generation %d of %d, %d disruptions allowed",
					pdb.Status.ObservedGeneration, pdb.Generation, pdb.Status.DisruptionsAllowed)
			}
			return nil
		})
		var pod corev1.Pod
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: r + "-0"}, &pod); err != nil {
			t.Fatal(err)
		}
		pods[pod.Name] = pod.UID
	}
	before := st.tracker.report().Outages
	// Retry the evictions as kubectl drain does, over a few of the operator's passes.
	const window, every = 6 * time.Second, 500 * time.Millisecond
	attempts := 0
	for end := time.Now().Add(window); time.Now().Before(end); attempts++ {
		for name := range pods {
			err := s.cs.PolicyV1().Evictions(namespace).Evict(ctx, &policyv1.Eviction{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			})
			if !apierrors.IsTooManyRequests(err) {
				t.Fatalf("eviction %d of %s without a cordon: %v, want 429 (the budget stays closed)", attempts+1, name, err)
			}
		}
		time.Sleep(every)
	}
	for name, uid := range pods {
		var now corev1.Pod
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &now); err != nil {
			t.Fatal(err)
		}
		if now.UID != uid || now.DeletionTimestamp != nil {
			t.Errorf("pod %s was replaced or is being deleted after %d refused evictions", name, attempts)
		}
	}
	after := st.tracker.report().Outages
	for _, r := range replicas {
		s.waitReplica(ctx, t, namespace, r, time.Second, disruptionAllowed(metav1.ConditionTrue, "PeersHydrated"))
		if got := after[r] - before[r]; got != 0 {
			t.Errorf("%s went down %d times under refused evictions", r, got)
		}
	}
	t.Logf("%d rounds of evictions of %d pods without a cordon refused over %s", attempts, len(pods), window)
}
