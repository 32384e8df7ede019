package reconciler

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/render"
)

func TestClusterRequests(t *testing.T) {
	ours := map[string]string{render.LabelCluster: "prod", render.LabelManagedBy: render.ManagerName}
	tests := []struct {
		name string
		obj  client.Object
		want []reconcile.Request
	}{
		{"replica maps by spec", &v1alpha1.ComputeReplica{
			ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "ns"},
			Spec:       v1alpha1.ComputeReplicaSpec{ClusterName: "prod"},
		}, []reconcile.Request{ClusterRequest("ns", "prod")}},
		{"rendered pod maps by label", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "r1-0", Namespace: "ns", Labels: ours}},
			[]reconcile.Request{ClusterRequest("ns", "prod")}},
		{"rendered statefulset maps by label", &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "ns", Labels: ours}},
			[]reconcile.Request{ClusterRequest("ns", "prod")}},
		{"foreign pod maps to nothing", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns",
			Labels: map[string]string{render.LabelCluster: "prod"}}}, nil},
		{"unlabelled service maps to nothing", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns"}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := clusterRequests(tc.obj); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
