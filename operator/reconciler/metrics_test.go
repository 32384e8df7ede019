package reconciler

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
)

// TestMetricsForgetDeletedReplicas checks that the per-replica state series follow the
// replicas: one series set per replica, and none left for a deleted one.
func TestMetricsForgetDeletedReplicas(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	cl := newCluster(t, "m", newFakeClient(t))
	cl.r.Metrics = m
	mk := func(name string) *v1alpha1.ComputeReplica {
		return &v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: v1alpha1.ComputeReplicaSpec{ClusterName: "m", Image: "img"}}
	}
	cl.create(mk("m1"), mk("m2"))
	cl.step(true)
	// series lists replica/state of every state series with value 1, and counts all.
	series := func() (on []string, n int) {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "tandem_operator_replica_rollout_state" {
				continue
			}
			for _, mt := range mf.GetMetric() {
				n++
				if mt.GetGauge().GetValue() != 1 {
					continue
				}
				labels := map[string]string{}
				for _, l := range mt.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				on = append(on, labels["replica"]+"/"+labels["state"])
			}
		}
		return on, n
	}
	if on, n := series(); n != 2*len(allStates) || len(on) != 2 {
		t.Fatalf("%d state series for two replicas (set: %v), want %d with one set each", n, on, 2*len(allStates))
	}
	if err := cl.c.Delete(cl.ctx, cl.get("m2")); err != nil {
		t.Fatal(err)
	}
	cl.reconcile()
	if on, n := series(); n != len(allStates) || len(on) != 1 || !strings.HasPrefix(on[0], "m1/") {
		t.Errorf("%d state series after deleting m2 (set: %v), want %d, all m1's", n, on, len(allStates))
	}
}

// TestRestartAndHydratingMetrics: container restarts of a replica's pods are counted as
// they grow (a new pod starts from its own baseline), and the hydrating gauge follows the
// controller's Hydrated condition.
func TestRestartAndHydratingMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	cl := newCluster(t, "rs", newFakeClient(t))
	cl.r.Metrics = m
	cl.create(&v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Name: "rs1"},
		Spec: v1alpha1.ComputeReplicaSpec{ClusterName: "rs", Image: "img", Processes: 2}})
	for range 3 {
		cl.step(true)
	}
	restarts := m.restarts.WithLabelValues(cl.ns, "rs1", "rs")
	hydrating := m.hydrating.WithLabelValues(cl.ns, "rs1", "rs")
	setRestarts := func(pod string, n int32) {
		t.Helper()
		var p corev1.Pod
		if err := cl.c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: pod}, &p); err != nil {
			t.Fatal(err)
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "replica", RestartCount: n}}
		if err := cl.c.Status().Update(cl.ctx, &p); err != nil {
			t.Fatal(err)
		}
		cl.reconcile()
	}
	for _, step := range []struct {
		name string
		do   func()
		want float64
	}{
		{"no restarts", func() {}, 0},
		{"rs1-0 restarted twice", func() { setRestarts("rs1-0", 2) }, 2},
		{"and once more", func() { setRestarts("rs1-0", 3) }, 3},
		{"rs1-1 restarted", func() { setRestarts("rs1-1", 1) }, 4},
		{"a pass without change", func() { cl.reconcile() }, 4},
		{"rs1-0 replaced by a new pod", func() {
			if err := cl.c.Delete(cl.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: cl.ns, Name: "rs1-0"}}); err != nil {
				t.Fatal(err)
			}
			cl.step(true)
			setRestarts("rs1-0", 0)
		}, 4},
	} {
		step.do()
		if got := value(t, restarts); got != step.want {
			t.Fatalf("%s: %v restarts counted, want %v", step.name, got, step.want)
		}
	}

	for _, c := range []struct {
		status metav1.ConditionStatus
		reason string
		want   float64
	}{
		{metav1.ConditionFalse, ReasonHydrating, 1},
		{metav1.ConditionFalse, "NotConnected", 0},
		{metav1.ConditionTrue, "Hydrated", 0},
	} {
		cr := cl.get("rs1")
		meta.SetStatusCondition(&cr.Status.Conditions, metav1.Condition{Type: v1alpha1.ConditionHydrated,
			Status: c.status, Reason: c.reason, Message: "m", ObservedGeneration: cr.Generation})
		if err := cl.c.Status().Update(cl.ctx, cr); err != nil {
			t.Fatal(err)
		}
		cl.reconcile()
		if got := value(t, hydrating); got != c.want {
			t.Errorf("Hydrated %s/%s: hydrating %v, want %v", c.status, c.reason, got, c.want)
		}
	}
}

// value reads a counter's or gauge's value.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		t.Fatal(err)
	}
	if c := out.GetCounter(); c != nil {
		return c.GetValue()
	}
	return out.GetGauge().GetValue()
}
