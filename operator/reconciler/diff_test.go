package reconciler

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
)

func TestStatusUpToDate(t *testing.T) {
	t0 := metav1.Now()
	base := func() v1alpha1.ComputeReplicaStatus {
		return v1alpha1.ComputeReplicaStatus{ObservedGeneration: 2, UpdateHash: "h", CurrentHash: "h", ReadyProcesses: 1,
			ComputectlAddresses: []string{"a:1"},
			Conditions: []metav1.Condition{
				{Type: v1alpha1.ConditionAvailable, Status: metav1.ConditionTrue, Reason: "R", Message: "m", ObservedGeneration: 2, LastTransitionTime: t0},
				{Type: v1alpha1.ConditionHydrated, Status: metav1.ConditionTrue, Reason: "H", ObservedGeneration: 1},
			}}
	}
	tests := []struct {
		name string
		mut  func(observed, want *v1alpha1.ComputeReplicaStatus)
		ok   bool
	}{
		{"same", func(o, w *v1alpha1.ComputeReplicaStatus) {}, true},
		{"controller condition ignored", func(o, w *v1alpha1.ComputeReplicaStatus) { w.Conditions = w.Conditions[:1] }, true},
		{"transition time ignored", func(o, w *v1alpha1.ComputeReplicaStatus) { w.Conditions[0].LastTransitionTime = metav1.Time{} }, true},
		{"message differs", func(o, w *v1alpha1.ComputeReplicaStatus) { w.Conditions[0].Message = "other" }, false},
		{"condition dropped", func(o, w *v1alpha1.ComputeReplicaStatus) { w.Conditions = w.Conditions[1:] }, false},
		{"condition added", func(o, w *v1alpha1.ComputeReplicaStatus) {
			w.Conditions = append(w.Conditions, metav1.Condition{Type: v1alpha1.ConditionDegraded, Status: metav1.ConditionFalse})
		}, false},
		{"rollout start set", func(o, w *v1alpha1.ComputeReplicaStatus) { w.RolloutStartTime = &t0 }, false},
		{"ready processes", func(o, w *v1alpha1.ComputeReplicaStatus) { w.ReadyProcesses = 2 }, false},
		{"addresses", func(o, w *v1alpha1.ComputeReplicaStatus) { w.ComputectlAddresses = nil }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, w := base(), base()
			tc.mut(&o, &w)
			if got := statusUpToDate(o, w); got != tc.ok {
				t.Errorf("statusUpToDate = %v, want %v", got, tc.ok)
			}
		})
	}
}
