package reconciler

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/render"
)

// RBAC the operator needs; `make generate-k8s` turns these markers into config/rbac.
// Events go through events.k8s.io, except the manager's leader election, which records
// its own through the core/v1 API.
//
// +kubebuilder:rbac:groups=compute.tandem.dev,resources=computereplicas,verbs=get;list;watch
// +kubebuilder:rbac:groups=compute.tandem.dev,resources=computereplicas/status,verbs=get;patch;update
// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;create;patch;update
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch;update
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch

// Rate limits of the workqueue: failures back off exponentially from minBackoff, capped at
// maxBackoff so that a cluster that failed for a while is retried within a minute of the
// cause going away.
const (
	minBackoff = 500 * time.Millisecond
	maxBackoff = time.Minute
)

// SetupWithManager registers the reconciler with a manager: every ComputeReplica, and every
// StatefulSet, Service, PDB, pod and internal TLS Secret the operator labelled, enqueues its
// cluster (the manager should cache only labelled Secrets: see cmd/operator).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	byCluster := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		return clusterRequests(obj)
	})
	// A node cordoned for a drain (or uncordoned) reconciles the clusters with pods on it.
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, podNodeField, func(o client.Object) []string {
		if p, ok := o.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			return []string{p.Spec.NodeName}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("index pods by node: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("computereplica").
		Watches(&v1alpha1.ComputeReplica{}, byCluster).
		Watches(&appsv1.StatefulSet{}, byCluster).
		Watches(&corev1.Service{}, byCluster).
		Watches(&policyv1.PodDisruptionBudget{}, byCluster).
		Watches(&corev1.Pod{}, byCluster).
		Watches(&corev1.Secret{}, byCluster).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.nodeRequests), builder.WithPredicates(drainChanged)).
		WithOptions(controller.Options{
			RateLimiter: workqueue.NewTypedMaxOfRateLimiter(
				workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](minBackoff, maxBackoff),
			),
		}).
		Complete(r)
}

// clusterRequests maps an object to the request of the cluster it belongs to: a
// ComputeReplica by its spec, anything else by the labels the operator rendered on it
// (objects the operator did not render map to nothing).
func clusterRequests(obj client.Object) []reconcile.Request {
	if cr, ok := obj.(*v1alpha1.ComputeReplica); ok {
		return []reconcile.Request{ClusterRequest(cr.Namespace, cr.Spec.ClusterName)}
	}
	cluster := obj.GetLabels()[render.LabelCluster]
	if cluster == "" || obj.GetLabels()[render.LabelManagedBy] != render.ManagerName {
		return nil
	}
	return []reconcile.Request{ClusterRequest(obj.GetNamespace(), cluster)}
}
