package reconciler

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
