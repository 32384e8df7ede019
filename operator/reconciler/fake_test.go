package reconciler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
)

// newFakeClient is controller-runtime's in-memory client. It supports server-side apply,
// but with a schema deduced from the objects (conditions are then an atomic list), and it
// applies no CRD defaults or validation: those are covered by the envtest suites.
func newFakeClient(t *testing.T) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).
		WithStatusSubresource(&v1alpha1.ComputeReplica{}, &corev1.Pod{}).Build()
}

func TestFakeRolloutOneReplicaAtATime(t *testing.T) {
	scenarioRolloutOneReplicaAtATime(t, newFakeClient(t))
}
func TestFakePausedAndDeadline(t *testing.T) { scenarioPausedAndDeadline(t, newFakeClient(t)) }
func TestFakeRestartMidRollout(t *testing.T) { scenarioRestartMidRollout(t, newFakeClient(t)) }
func TestFakeInvalidSpec(t *testing.T)       { scenarioInvalidSpec(t, newFakeClient(t)) }

func TestFakeNameConflict(t *testing.T) { scenarioNameConflict(t, newFakeClient(t)) }

func TestFakeNoOpReconciles(t *testing.T) { scenarioNoOpReconciles(t, newFakeClient(t)) }

func TestFakeRollReasons(t *testing.T) { scenarioRollReasons(t, newFakeClient(t)) }
