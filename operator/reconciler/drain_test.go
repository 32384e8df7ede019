package reconciler

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/disruption"
)

func (cl *cluster) budget(name string) int {
	cl.t.Helper()
	var pdb policyv1.PodDisruptionBudget
	if err := cl.c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: name}, &pdb); err != nil {
		cl.t.Fatal(err)
	}
	return pdb.Spec.MaxUnavailable.IntValue()
}

func (cl *cluster) cordon(node string, on bool) {
	cl.t.Helper()
	var n corev1.Node
	if err := cl.c.Get(cl.ctx, client.ObjectKey{Name: node}, &n); err != nil {
		cl.t.Fatal(err)
	}
	n.Spec.Unschedulable = on
	if err := cl.c.Update(cl.ctx, &n); err != nil {
		cl.t.Fatal(err)
	}
}

// nodes creates nodes with names unique to the test (nodes are cluster-scoped).
func (cl *cluster) nodes(names ...string) {
	cl.t.Helper()
	for _, n := range names {
		if err := cl.c.Create(cl.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
			cl.t.Fatal(err)
		}
	}
}

func (cl *cluster) expectDisruption(name string, max int, status metav1.ConditionStatus, reason string) {
	cl.t.Helper()
	if got := cl.budget(name); got != max {
		cl.t.Errorf("%s budget maxUnavailable %d, want %d", name, got, max)
	}
	c := cl.condition(name, v1alpha1.ConditionDisruptionAllowed)
	if c.Status != status || c.Reason != reason {
		cl.t.Errorf("%s DisruptionAllowed %s/%s (%s), want %s/%s", name, c.Status, c.Reason, c.Message, status, reason)
	}
}

// scenarioDrain drains a node running a pod of each of two hydrated replicas: one replica
// at a time has its budget opened (the other's stays closed until the first is back and off
// the node, and a budget closes before the next opens), with events; a replica alone in its
// cluster keeps its budget closed under Wait and opens it under Allow, saying that reads
// are interrupted.
func scenarioDrain(t *testing.T, c client.Client) {
	counting := &countingClient{Client: c}
	cl := newCluster(t, "d", counting)
	n1, n2, n3 := cl.ns+"-n1", cl.ns+"-n2", cl.ns+"-n3"
	cl.nodes(n1, n2, n3)
	// a-0 on n1, b-0 on n3, the others (and whatever is recreated) on n2.
	placed := map[string]string{"a-0": n1, "b-0": n3}
	cl.nodeOf = func(pod string) string {
		if n, ok := placed[pod]; ok {
			return n
		}
		return n2
	}
	mk := func(name, cluster string) *v1alpha1.ComputeReplica {
		return &v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ComputeReplicaSpec{ClusterName: cluster, Image: "img", Processes: 2}}
	}
	cl.create(mk("a", "d"), mk("b", "d"))
	for range 3 {
		cl.step(true)
	}
	cl.expectDisruption("a", 0, metav1.ConditionTrue, disruption.ReasonPeersHydrated)
	cl.expectDisruption("b", 0, metav1.ConditionTrue, disruption.ReasonPeersHydrated)

	// n3 (b-0) is cordoned: b's budget opens, a's stays closed.
	cl.cordon(n3, true)
	cl.reconcile()
	cl.expectDisruption("a", 0, metav1.ConditionFalse, disruption.ReasonPeerDraining)
	cl.expectDisruption("b", 2, metav1.ConditionTrue, disruption.ReasonDraining)
	if !slices.Contains(cl.rec.reasons("b"), disruption.EventDrainAllowed) {
		t.Errorf("events of b %v, want DrainAllowed", cl.rec.reasons("b"))
	}
	// n1 (a-0) is cordoned too: a waits for b.
	cl.cordon(n1, true)
	cl.reconcile()
	cl.expectDisruption("a", 0, metav1.ConditionFalse, disruption.ReasonPeerDraining)
	if !slices.Contains(cl.rec.reasons("a"), disruption.EventDrainBlocked) {
		t.Errorf("events of a %v, want DrainBlocked", cl.rec.reasons("a"))
	}
	// The drain evicts b-0; the StatefulSet recreates it on n2, not ready yet: b stays open.
	evict := func(pod string) {
		delete(placed, pod)
		// Grace period 0: there is no kubelet to finish a graceful deletion of a bound pod.
		if err := cl.c.Delete(cl.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: cl.ns}}, client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
	}
	evict("b-0")
	cl.playStatefulSets(false)
	cl.reconcile()
	cl.expectDisruption("a", 0, metav1.ConditionFalse, disruption.ReasonPeerDraining)
	cl.expectDisruption("b", 2, metav1.ConditionTrue, disruption.ReasonDraining)
	// b is back: its budget closes, then a's opens, in that order (a comes first by name).
	cl.playStatefulSets(true)
	counting.take()
	cl.reconcile()
	cl.expectDisruption("a", 2, metav1.ConditionTrue, disruption.ReasonDraining)
	cl.expectDisruption("b", 0, metav1.ConditionFalse, disruption.ReasonPeerDraining)
	w := counting.take()
	budgetWrite := func(name string) int {
		return slices.Index(w, "apply PodDisruptionBudget "+name)
	}
	if closeB, openA := budgetWrite("b"), budgetWrite("a"); closeB < 0 || openA < 0 || closeB > openA {
		t.Errorf("writes %q: want b's budget closed before a's opens", w)
	}
	evict("a-0")
	cl.step(true)
	cl.step(true)
	cl.expectDisruption("a", 0, metav1.ConditionTrue, disruption.ReasonPeersHydrated)
	cl.expectDisruption("b", 0, metav1.ConditionTrue, disruption.ReasonPeersHydrated)

	// A replica alone in its cluster, on n1 (still cordoned): Wait keeps it.
	solo := newCluster(t, "s", counting)
	solo.ns, solo.clock, solo.rec, solo.r = cl.ns, cl.clock, cl.rec, cl.r
	solo.nodeOf = func(string) string { return n1 }
	solo.create(mk("s1", "s"))
	for range 3 {
		solo.step(true)
	}
	solo.expectDisruption("s1", 0, metav1.ConditionFalse, disruption.ReasonSingleReplica)
	if c := solo.condition("s1", v1alpha1.ConditionDisruptionAllowed); !strings.Contains(c.Message, "interrupt reads") {
		t.Errorf("single-replica message %q does not say reads are interrupted", c.Message)
	}
	if !slices.Contains(solo.rec.reasons("s1"), disruption.EventDrainBlocked) {
		t.Errorf("no DrainBlocked event on s1: %v", solo.rec.reasons("s1"))
	}
	s1 := solo.get("s1")
	s1.Spec.Disruption.SingleReplica = disruption.PolicyAllow
	if err := solo.c.Update(solo.ctx, s1); err != nil {
		t.Fatal(err)
	}
	solo.reconcile()
	solo.expectDisruption("s1", 2, metav1.ConditionTrue, disruption.ReasonSingleReplica)
	if !slices.Contains(solo.rec.reasons("s1"), disruption.EventDrainInterruptsReads) {
		t.Errorf("no DrainInterruptsReads event on s1: %v", solo.rec.reasons("s1"))
	}
}

func TestFakeDrain(t *testing.T) { scenarioDrain(t, newFakeClient(t)) }
