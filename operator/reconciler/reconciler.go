package reconciler

import (
	"context"
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/render"
	"github.com/tandemdb/tandem/operator/rollout"
)

// FieldOwner is the server-side apply field manager of everything the operator writes.
const FieldOwner = "tandem-operator"

// ReasonInvalidSpec is the Degraded reason for a replica that cannot be rendered.
const ReasonInvalidSpec = "InvalidSpec"

// Clock tells the time; tests inject a fake one.
type Clock interface{ Now() time.Time }

// EventRecorder records Kubernetes events (client-go's events.EventRecorder satisfies it).
type EventRecorder interface {
	Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Reconciler reconciles the ComputeReplicas of one cluster per request.
type Reconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads live from the API server; used for the replicas of the cluster.
	APIReader client.Reader
	Recorder  EventRecorder
	Clock     Clock
	Render    render.Options
	Metrics   *Metrics
}

// ClusterRequest is the request that reconciles the cluster of a replica.
func ClusterRequest(namespace, cluster string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: cluster}}
}

// replicaState is one replica of the cluster as observed in this pass.
type replicaState struct {
	cr       *v1alpha1.ComputeReplica
	sts      *appsv1.StatefulSet
	hash     string
	input    rollout.Replica
	renderEr error
}

// Reconcile brings every replica of the cluster req.Name in req.Namespace one step closer
// to its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
	logger := log.FromContext(ctx).WithValues("cluster", req.Name, "namespace", req.Namespace)
	ctx = log.IntoContext(ctx, logger)
	defer func() { r.Metrics.observeReconcile(err) }()

	var list v1alpha1.ComputeReplicaList
	if err := r.APIReader.List(ctx, &list, client.InNamespace(req.Namespace)); err != nil {
		return reconcile.Result{}, fmt.Errorf("list computereplicas of cluster %s: %w", req.Name, err)
	}
	var states []*replicaState
	for i := range list.Items {
		cr := &list.Items[i]
		if cr.Spec.ClusterName != req.Name || !cr.DeletionTimestamp.IsZero() {
			continue
		}
		st, err := r.observe(ctx, cr)
		if err != nil {
			return reconcile.Result{}, err
		}
		states = append(states, st)
	}
	sort.Slice(states, func(i, j int) bool { return states[i].cr.Name < states[j].cr.Name })

	// Peers as they stand before this pass; updated as decisions are taken so that a
	// rollout started for one replica blocks the others in the same pass.
	now := r.Clock.Now()
	peers := map[string]rollout.Peer{}
	for _, st := range states {
		_, available, _ := rollout.Observe(now, st.input)
		peers[st.cr.Name] = rollout.Peer{Name: st.cr.Name, Rolling: st.cr.Status.RolloutStartTime != nil, Available: available}
	}

	var requeue time.Duration
	for _, st := range states {
		if st.renderEr != nil {
			if err := r.writeInvalid(ctx, st); err != nil {
				return reconcile.Result{}, err
			}
			continue
		}
		var others []rollout.Peer
		for _, s := range states {
			if s != st {
				others = append(others, peers[s.cr.Name])
			}
		}
		d := rollout.Decide(now, st.input, others)
		peers[st.cr.Name] = rollout.Peer{Name: st.cr.Name, Rolling: d.Rolling, Available: d.Available}
		if err := r.act(ctx, st, d); err != nil {
			return reconcile.Result{}, err
		}
		r.Metrics.observeDecision(st.cr, d)
		if d.RequeueAfter > 0 && (requeue == 0 || d.RequeueAfter < requeue) {
			requeue = d.RequeueAfter
		}
	}
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// observe renders a replica and reads its StatefulSet and pods from the cache.
func (r *Reconciler) observe(ctx context.Context, cr *v1alpha1.ComputeReplica) (*replicaState, error) {
	st := &replicaState{cr: cr}
	st.sts, st.hash, st.renderEr = render.StatefulSet(cr, r.Render)
	if st.renderEr != nil {
		return st, nil
	}
	in := rollout.Replica{
		Name:             cr.Name,
		Generation:       cr.Generation,
		Processes:        int(cr.Spec.Processes),
		DesiredHash:      st.hash,
		Paused:           cr.Spec.Rollout.Paused,
		MinReady:         time.Duration(cr.Spec.Rollout.MinReadySeconds) * time.Second,
		ProgressDeadline: time.Duration(cr.Spec.Rollout.ProgressDeadlineSeconds) * time.Second,
		Managed:          cr.Labels[v1alpha1.LabelManagedBy] != "",
	}
	if t := cr.Status.RolloutStartTime; t != nil {
		start := t.Time
		in.RolloutStart = &start
	}
	if c := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionHydrated); c != nil {
		in.Hydrated, in.HydratedGeneration = c.Status == metav1.ConditionTrue, c.ObservedGeneration
	}

	var sts appsv1.StatefulSet
	switch err := r.Client.Get(ctx, client.ObjectKeyFromObject(st.sts), &sts); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("get statefulset %s/%s: %w", cr.Namespace, cr.Name, err)
	default:
		in.AppliedHash = sts.Spec.Template.Labels[render.LabelPodTemplateHash]
		if in.AppliedHash == "" {
			// A StatefulSet without our hash (made by someone else, or an older operator)
			// is outdated rather than missing.
			in.AppliedHash = "unknown"
		}
	}

	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(cr.Namespace), client.MatchingLabels(render.SelectorLabels(cr))); err != nil {
		return nil, fmt.Errorf("list pods of computereplica %s/%s: %w", cr.Namespace, cr.Name, err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		rp := rollout.Pod{Name: p.Name, Hash: p.Labels[render.LabelPodTemplateHash], Terminating: !p.DeletionTimestamp.IsZero()}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				rp.Ready, rp.ReadySince = c.Status == corev1.ConditionTrue, c.LastTransitionTime.Time
			}
		}
		in.Pods = append(in.Pods, rp)
	}
	st.input = in
	return st, nil
}

// act carries out a decision in crash-safe order: status, StatefulSet, pod deletion.
func (r *Reconciler) act(ctx context.Context, st *replicaState, d rollout.Decision) error {
	cr := st.cr
	logger := log.FromContext(ctx).WithValues("computereplica", cr.Name)

	if err := r.applyObject(ctx, render.Service(cr)); err != nil {
		return err
	}
	if err := r.applyObject(ctx, render.PodDisruptionBudget(cr)); err != nil {
		return err
	}
	// Record the rollout before touching pods.
	if err := r.writeStatus(ctx, st, d); err != nil {
		return err
	}
	if d.ApplyStatefulSet {
		if err := r.applyObject(ctx, st.sts); err != nil {
			return err
		}
	}
	for _, name := range d.DeletePods {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cr.Namespace}}
		if err := r.Client.Delete(ctx, pod); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete pod %s/%s of computereplica %s: %w", cr.Namespace, name, cr.Name, err)
		}
	}
	if len(d.DeletePods) > 0 {
		logger.Info("Deleted ComputeReplica pods for rollout", "pods", d.DeletePods, "hash", st.hash)
	}
	for _, e := range d.Events {
		typ := corev1.EventTypeNormal
		if e.Warning {
			typ = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(cr, nil, typ, e.Reason, "Reconcile", "%s", e.Message)
	}
	return nil
}

// writeInvalid publishes Degraded=InvalidSpec for a replica that cannot be rendered.
func (r *Reconciler) writeInvalid(ctx context.Context, st *replicaState) error {
	d := rollout.Decision{
		RolloutStart: nil,
		Conditions: []rollout.Condition{
			{Type: rollout.TypeDegraded, Status: rollout.True, Reason: ReasonInvalidSpec, Message: st.renderEr.Error()},
			{Type: rollout.TypeProgressing, Status: rollout.False, Reason: ReasonInvalidSpec, Message: "the spec cannot be rendered"},
		},
	}
	if t := st.cr.Status.RolloutStartTime; t != nil {
		start := t.Time
		d.RolloutStart = &start
	}
	r.Recorder.Eventf(st.cr, nil, corev1.EventTypeWarning, ReasonInvalidSpec, "Render", "%s", st.renderEr.Error())
	return r.writeStatus(ctx, st, d)
}

// writeStatus applies the operator's part of a replica's status.
func (r *Reconciler) writeStatus(ctx context.Context, st *replicaState, d rollout.Decision) error {
	cr := st.cr
	now := metav1.NewTime(r.Clock.Now())
	conds := append([]metav1.Condition(nil), cr.Status.Conditions...)
	var mine []metav1.Condition
	for _, c := range d.Conditions {
		meta.SetStatusCondition(&conds, metav1.Condition{
			Type: c.Type, Status: metav1.ConditionStatus(c.Status), Reason: c.Reason, Message: c.Message,
			ObservedGeneration: cr.Generation, LastTransitionTime: now,
		})
		mine = append(mine, *meta.FindStatusCondition(conds, c.Type))
	}
	status := v1alpha1.ComputeReplicaStatus{
		ObservedGeneration: cr.Generation,
		Conditions:         mine,
		UpdateHash:         st.hash,
	}
	if st.renderEr == nil {
		status.ComputectlAddresses = render.ComputectlAddresses(cr, r.Render)
		status.CurrentHash = commonHash(st.input.Pods)
		for _, p := range st.input.Pods {
			if p.Ready && !p.Terminating {
				status.ReadyProcesses++
			}
		}
	}
	if d.RolloutStart != nil {
		t := metav1.NewTime(d.RolloutStart.UTC().Truncate(time.Second))
		status.RolloutStartTime = &t
	}
	u, err := toApplyObject(&v1alpha1.ComputeReplica{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion().String(), Kind: v1alpha1.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: cr.Name, Namespace: cr.Namespace},
		Status:     status,
	}, "spec")
	if err != nil {
		return err
	}
	if err := r.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply status of computereplica %s/%s: %w", cr.Namespace, cr.Name, err)
	}
	return nil
}

// commonHash is the hash all live pods share, or "" when they differ or there are none.
func commonHash(pods []rollout.Pod) string {
	h := ""
	for _, p := range pods {
		if p.Terminating {
			continue
		}
		if h != "" && p.Hash != h {
			return ""
		}
		h = p.Hash
	}
	return h
}

// applyObject server-side applies a rendered object with the operator's field owner.
func (r *Reconciler) applyObject(ctx context.Context, obj client.Object) error {
	u, err := toApplyObject(obj, "status")
	if err != nil {
		return err
	}
	if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply %s %s/%s: %w", u.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// toApplyObject converts a typed object to the unstructured form applied, dropping the
// named top-level field and the null creation timestamps typed objects carry, so that the
// apply claims only fields the operator means to own.
func toApplyObject(obj runtime.Object, drop string) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %T for apply: %w", obj, err)
	}
	delete(m, drop)
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(m, "spec", "template", "metadata", "creationTimestamp")
	return &unstructured.Unstructured{Object: m}, nil
}

var _ reconcile.Reconciler = (*Reconciler)(nil)
