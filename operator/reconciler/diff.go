package reconciler

// Deciding whether a write is needed. A pass that changes nothing must write nothing: every
// pod event of a cluster reconciles it, and an unconditional apply per object per pass is a
// steady load on the API server (and, for status, a watch event that brings another pass).

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/render"
)

// operatorConditions are the condition types the operator owns on a ComputeReplica.
var operatorConditions = []string{
	v1alpha1.ConditionAvailable, v1alpha1.ConditionProgressing, v1alpha1.ConditionDegraded,
	v1alpha1.ConditionDisruptionAllowed,
}

// upToDate says whether the observed object already carries every field the apply
// configuration want sets in its metadata and spec. Fields want leaves out (defaults the
// API server filled in, fields of other managers) do not matter; a list must have want's
// length and each element must carry want's element. Both sides come from typed objects
// through the same converter, so quantities and integers compare in one canonical form.
func upToDate(want map[string]any, observed runtime.Object) (bool, error) {
	got, err := runtime.DefaultUnstructuredConverter.ToUnstructured(observed)
	if err != nil {
		return false, fmt.Errorf("convert %T for comparison: %w", observed, err)
	}
	for _, k := range []string{"metadata", "spec"} {
		if !render.Covers(want[k], got[k]) {
			return false, nil
		}
	}
	return true, nil
}

// statusUpToDate says whether the observed status already is what applying want (the
// operator's part of the status) would make it: the same fields, the same operator
// conditions (a condition's transition time moves only with its status, so it is not
// compared), and no operator condition that want drops.
func statusUpToDate(observed, want v1alpha1.ComputeReplicaStatus) bool {
	if observed.ObservedGeneration != want.ObservedGeneration || observed.UpdateHash != want.UpdateHash ||
		observed.CurrentHash != want.CurrentHash || observed.ReadyProcesses != want.ReadyProcesses ||
		!slices.Equal(observed.ComputectlAddresses, want.ComputectlAddresses) ||
		!slices.Equal(observed.RolloutReasons, want.RolloutReasons) ||
		!timesEqual(observed.RolloutStartTime, want.RolloutStartTime) {
		return false
	}
	for _, typ := range operatorConditions {
		o := meta.FindStatusCondition(observed.Conditions, typ)
		w := meta.FindStatusCondition(want.Conditions, typ)
		switch {
		case o == nil && w == nil:
		case o == nil || w == nil:
			return false
		case o.Status != w.Status || o.Reason != w.Reason || o.Message != w.Message ||
			o.ObservedGeneration != w.ObservedGeneration:
			return false
		}
	}
	return true
}

func timesEqual(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(b)
}
