package reconciler

// Drains: which replica of a cluster may lose its pods to evictions (package disruption
// decides; this file observes nodes and applies the PodDisruptionBudgets).

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/disruption"
	"github.com/tandemdb/tandem/operator/render"
	"github.com/tandemdb/tandem/operator/rollout"
)

// podNodeField indexes the operator's pods by the node they run on.
const podNodeField = "spec.nodeName"

// draining says whether a node is being drained: cordoned, or tainted by the cluster
// autoscaler for removal.
func draining(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return true
	}
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeUnschedulable || t.Key == "ToBeDeletedByClusterAutoscaler" {
			return true
		}
	}
	return false
}

// drainingNodes lists the draining nodes that run the given live pods, read from the cache.
func (r *Reconciler) drainingNodes(ctx context.Context, pods []corev1.Pod) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for i := range pods {
		p := &pods[i]
		name := p.Spec.NodeName
		if name == "" || seen[name] || !p.DeletionTimestamp.IsZero() {
			continue
		}
		seen[name] = true
		var n corev1.Node
		switch err := r.Client.Get(ctx, client.ObjectKey{Name: name}, &n); {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, fmt.Errorf("get node %s: %w", name, err)
		}
		if draining(&n) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// decideDisruption decides the budgets of the cluster's replicas after their rollout
// decisions (decisions, by name; replicas held as invalid have none and count as not
// hydrated, and their budgets are left alone).
func decideDisruption(cluster string, states []*replicaState, decisions map[string]*rollout.Decision) map[string]disruption.Decision {
	var rs []disruption.Replica
	for _, st := range states {
		d := decisions[st.cr.Name]
		rs = append(rs, disruption.Replica{
			Name:          st.cr.Name,
			Processes:     int(st.cr.Spec.Processes),
			Hydrated:      d != nil && d.State == rollout.StateCurrent && d.RolloutStart == nil,
			DrainingNodes: st.drainingNodes,
			Open:          budgetOpen(st),
			Policy:        st.cr.Spec.Disruption.SingleReplica,
		})
	}
	return disruption.Decide(cluster, rs)
}

// budgetOpen says whether the replica's observed PDB allows evictions.
func budgetOpen(st *replicaState) bool {
	pdb := st.owned.pdb
	return pdb != nil && pdb.Spec.MaxUnavailable != nil && pdb.Spec.MaxUnavailable.IntValue() > 0
}

// withDisruption adds the disruption condition to a rollout decision, and its event when
// the condition differs from the one the replica shows.
func withDisruption(cr *v1alpha1.ComputeReplica, d *rollout.Decision, dd disruption.Decision) {
	status := rollout.False
	if dd.Status {
		status = rollout.True
	}
	c := rollout.Condition{Type: disruption.TypeDisruptionAllowed, Status: status, Reason: dd.Reason, Message: dd.Message}
	d.Conditions = append(d.Conditions, c)
	old := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionDisruptionAllowed)
	if dd.Event != "" && (old == nil || string(old.Status) != string(status) || old.Reason != c.Reason || old.Message != c.Message) {
		d.Events = append(d.Events, rollout.Event{Warning: dd.Warning, Reason: dd.Event, Message: dd.Message})
	}
}

// closeBudgets closes, before anything else of the pass is written, the budgets that were
// open and must now be closed, so that two replicas of a cluster are never open at once.
func (r *Reconciler) closeBudgets(ctx context.Context, states []*replicaState, dd map[string]disruption.Decision) error {
	for _, st := range states {
		d, ok := dd[st.cr.Name]
		if !ok || st.invalid() != nil || d.MaxUnavailable > 0 || !budgetOpen(st) {
			continue
		}
		if err := r.applyObject(ctx, render.PodDisruptionBudget(st.cr, 0), optional(st.owned.pdb)); err != nil {
			return err
		}
	}
	return nil
}

// nodeRequests maps a node to the clusters with pods on it.
func (r *Reconciler) nodeRequests(ctx context.Context, node client.Object) []reconcile.Request {
	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.MatchingFields{podNodeField: node.GetName()}); err != nil {
		return nil
	}
	seen := map[reconcile.Request]bool{}
	var out []reconcile.Request
	for i := range pods.Items {
		for _, req := range clusterRequests(&pods.Items[i]) {
			if !seen[req] {
				seen[req] = true
				out = append(out, req)
			}
		}
	}
	return out
}

// drainChanged passes node updates that start or end a drain.
var drainChanged = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*corev1.Node)
		n, ok2 := e.ObjectNew.(*corev1.Node)
		return ok1 && ok2 && draining(o) != draining(n)
	},
}
