package reconciler

import (
	"context"
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
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

// ReasonInvalidSpec is the Degraded reason for a replica that cannot be rendered, or whose
// rendered objects the API server rejects (a resource request above its limit, a malformed
// toleration: things the ComputeReplica's schema does not check itself).
const ReasonInvalidSpec = "InvalidSpec"

// ReasonNameConflict is the Degraded reason for a replica whose Service, StatefulSet or
// PodDisruptionBudget name is taken by an object it does not control. The operator never
// takes such an object over: it would rewrite it, and garbage-collect it with the replica.
const ReasonNameConflict = "NameConflict"

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
	// TLS issues every replica's internal TLS Secret; required when Render.InternalTLS.
	TLS LeafIssuer
}

// LeafIssuer keeps a leaf certificate Secret (certs.Issuer): want carries the name,
// labels and owner, observed is the Secret as read (nil when absent). It returns when
// the Secret should be looked at again (its renewal).
type LeafIssuer interface {
	EnsureLeaf(ctx context.Context, want, observed *corev1.Secret, name string) (time.Time, error)
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
	// podUIDs are the UIDs of the pods observed, by name: a pod is deleted only if it is
	// still the one observed, never a successor the StatefulSet controller made under the
	// same name after a read from a lagging cache.
	podUIDs map[string]types.UID
	// rejected is the API server's refusal of an object rendered for the replica, or a
	// name conflict (rejectReason says which); the replica is then held where it is (no
	// rollout starts, no pod is deleted).
	rejected     error
	rejectReason string
	// observed is true once the StatefulSet and pods were read (input is meaningful).
	observed bool
	// owned are the replica's objects as observed; a write is skipped when the observed
	// object already carries everything it would set.
	owned owned
	// drainingNodes are the cordoned nodes running its live pods; maxUnavailable is the
	// budget decided for it.
	drainingNodes  []string
	maxUnavailable int32
}

// invalid is why the replica cannot be acted on, or nil.
func (st *replicaState) invalid() error {
	if st.renderEr != nil {
		return st.renderEr
	}
	return st.rejected
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

	// Decide every replica first (rollouts, then budgets, which depend on the rollouts),
	// then act: budgets closing before anything else, so two are never open at once.
	decisions := map[string]*rollout.Decision{}
	for _, st := range states {
		if st.invalid() != nil {
			continue
		}
		var others []rollout.Peer
		for _, s := range states {
			if s != st {
				others = append(others, peers[s.cr.Name])
			}
		}
		d := rollout.Decide(now, st.input, others)
		d.Events = unreported(st.cr, d.Events)
		peers[st.cr.Name] = rollout.Peer{Name: st.cr.Name, Rolling: d.Rolling, Available: d.Available}
		decisions[st.cr.Name] = &d
	}
	budgets := decideDisruption(req.Name, states, decisions)
	if err := r.closeBudgets(ctx, states, budgets); err != nil {
		return reconcile.Result{}, err
	}

	var requeue time.Duration
	decided := map[string]bool{}
	for _, st := range states {
		d := decisions[st.cr.Name]
		if d == nil {
			if err := r.writeInvalid(ctx, st); err != nil {
				return reconcile.Result{}, err
			}
			continue
		}
		st.maxUnavailable = int32(budgets[st.cr.Name].MaxUnavailable)
		withDisruption(st.cr, d, budgets[st.cr.Name])
		// The Secret first: pods of a new StatefulSet mount it.
		if next, err := r.ensureInternalTLS(ctx, st); err != nil {
			return reconcile.Result{}, err
		} else if !next.IsZero() {
			requeue = minRequeue(requeue, max(next.Sub(now), time.Second))
		}
		if err := r.act(ctx, st, *d); apierrors.IsInvalid(err) {
			// Rejected by the API server (a dry run passed, or there was none because the
			// template did not change): hold this replica and carry on with the others.
			st.rejected, st.rejectReason = err, ReasonInvalidSpec
			if err := r.writeInvalid(ctx, st); err != nil {
				return reconcile.Result{}, err
			}
			continue
		} else if err != nil {
			return reconcile.Result{}, err
		}
		r.Metrics.observeDecision(st.cr, *d)
		decided[st.cr.Name] = true
		requeue = minRequeue(requeue, d.RequeueAfter)
	}
	r.Metrics.observeCluster(req.Namespace, req.Name, decided)
	return reconcile.Result{RequeueAfter: requeue}, nil
}

// minRequeue is the earlier of two requeue delays, 0 meaning none.
func minRequeue(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// ensureInternalTLS keeps the replica's internal TLS Secret issued, and returns when to
// look at it again (zero without internal TLS).
func (r *Reconciler) ensureInternalTLS(ctx context.Context, st *replicaState) (time.Time, error) {
	if !r.Render.InternalTLS {
		return time.Time{}, nil
	}
	if r.TLS == nil {
		return time.Time{}, fmt.Errorf("computereplica %s/%s: internal TLS is on but nothing issues certificates", st.cr.Namespace, st.cr.Name)
	}
	want := &corev1.Secret{ObjectMeta: render.InternalTLSSecretMeta(st.cr)}
	next, err := r.TLS.EnsureLeaf(ctx, want, st.owned.tls, st.cr.Name)
	if err != nil {
		return time.Time{}, fmt.Errorf("internal TLS secret of computereplica %s/%s: %w", st.cr.Namespace, st.cr.Name, err)
	}
	return next, nil
}

// observe renders a replica and reads its StatefulSet and pods from the cache.
func (r *Reconciler) observe(ctx context.Context, cr *v1alpha1.ComputeReplica) (*replicaState, error) {
	st := &replicaState{cr: cr}
	st.sts, st.hash, st.renderEr = render.StatefulSet(cr, r.Render)
	if st.renderEr != nil {
		return st, nil
	}
	objs, conflict, err := r.observeOwned(ctx, cr)
	if err != nil {
		return nil, err
	}
	if conflict != nil {
		st.rejected, st.rejectReason = conflict, ReasonNameConflict
		return st, nil
	}
	st.owned = objs
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

	in.Reasons = cr.Status.RolloutReasons
	if sts := objs.sts; sts != nil {
		for _, c := range render.TemplateChanges(sts, st.sts) {
			in.Changes = append(in.Changes, rollout.Change{Reason: c.Reason, Message: c.Message})
		}
		in.AppliedHash = sts.Spec.Template.Labels[render.LabelPodTemplateHash]
		if in.AppliedHash != st.hash && len(in.Changes) == 0 {
			// Only the hash differs (a hash computed differently by another version).
			in.Changes = []rollout.Change{{Reason: render.ReasonTemplateChanged, Message: "the pod-template hash differs"}}
		}
		if in.AppliedHash == "" {
			// A StatefulSet without our hash (made by someone else, or an older operator)
			// is outdated rather than missing.
			in.AppliedHash = "unknown"
		}
	}
	if in.AppliedHash != st.hash {
		// A new template: ask the API server whether it would take it before the rollout
		// policy deletes a single pod for it. The CRD's schema cannot check everything a
		// pod spec must satisfy (requests within limits, well-formed tolerations).
		switch err := r.dryRunApply(ctx, st.sts); {
		case apierrors.IsInvalid(err):
			st.rejected, st.rejectReason = err, ReasonInvalidSpec
		case err != nil:
			return nil, err
		}
	}

	var pods corev1.PodList
	if err := r.Client.List(ctx, &pods, client.InNamespace(cr.Namespace), client.MatchingLabels(render.SelectorLabels(cr))); err != nil {
		return nil, fmt.Errorf("list pods of computereplica %s/%s: %w", cr.Namespace, cr.Name, err)
	}
	r.Metrics.observePods(cr, pods.Items)
	if st.drainingNodes, err = r.drainingNodes(ctx, pods.Items); err != nil {
		return nil, err
	}
	st.podUIDs = make(map[string]types.UID, len(pods.Items))
	for i := range pods.Items {
		p := &pods.Items[i]
		st.podUIDs[p.Name] = p.UID
		rp := rollout.Pod{Name: p.Name, Hash: p.Labels[render.LabelPodTemplateHash], Terminating: !p.DeletionTimestamp.IsZero()}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				rp.Ready, rp.ReadySince = c.Status == corev1.ConditionTrue, c.LastTransitionTime.Time
			}
		}
		in.Pods = append(in.Pods, rp)
	}
	st.input, st.observed = in, true
	return st, nil
}

// owned are the objects of a replica's names as observed in the cache; nil when absent.
type owned struct {
	svc *corev1.Service
	sts *appsv1.StatefulSet
	pdb *policyv1.PodDisruptionBudget
	tls *corev1.Secret
}

// observeOwned reads the objects under the replica's names from the cache, and reports (as
// its second result) one that the replica does not control.
func (r *Reconciler) observeOwned(ctx context.Context, cr *v1alpha1.ComputeReplica) (o owned, conflict, err error) {
	svc, sts, pdb, sec := &corev1.Service{}, &appsv1.StatefulSet{}, &policyv1.PodDisruptionBudget{}, &corev1.Secret{}
	type ownedObject struct {
		kind string
		name string
		obj  client.Object
		set  func()
	}
	objects := []ownedObject{
		{"Service", cr.Name, svc, func() { o.svc = svc }},
		{"StatefulSet", cr.Name, sts, func() { o.sts = sts }},
		{"PodDisruptionBudget", cr.Name, pdb, func() { o.pdb = pdb }},
	}
	if r.Render.InternalTLS {
		objects = append(objects, ownedObject{"Secret", render.InternalTLSSecretName(cr), sec, func() { o.tls = sec }})
	}
	for _, x := range objects {
		switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: cr.Namespace, Name: x.name}, x.obj); {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return owned{}, nil, fmt.Errorf("get %s %s/%s: %w", x.kind, cr.Namespace, x.name, err)
		}
		if !metav1.IsControlledBy(x.obj, cr) {
			return owned{}, fmt.Errorf("%s %s/%s exists and is not controlled by this ComputeReplica: rename the replica or delete the %s",
				x.kind, cr.Namespace, x.name, x.kind), nil
		}
		x.set()
	}
	return o, nil, nil
}

// act carries out a decision in crash-safe order: status, StatefulSet, pod deletion.
func (r *Reconciler) act(ctx context.Context, st *replicaState, d rollout.Decision) error {
	cr := st.cr
	logger := log.FromContext(ctx).WithValues("computereplica", cr.Name)

	if err := r.applyObject(ctx, render.Service(cr), optional(st.owned.svc)); err != nil {
		return err
	}
	if err := r.applyObject(ctx, render.PodDisruptionBudget(cr, st.maxUnavailable), optional(st.owned.pdb)); err != nil {
		return err
	}
	// Record the rollout before touching pods.
	if err := r.writeStatus(ctx, st, d); err != nil {
		return err
	}
	if d.ApplyStatefulSet {
		if err := r.applyObject(ctx, st.sts, optional(st.owned.sts)); err != nil {
			return err
		}
	}
	for _, name := range d.DeletePods {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cr.Namespace}}
		var opts []client.DeleteOption
		if uid := st.podUIDs[name]; uid != "" {
			opts = append(opts, client.Preconditions{UID: &uid})
		}
		// NotFound: already gone. Conflict: the UID precondition failed, so the pod under
		// that name is a newer one (the next pass judges it by its own hash).
		if err := r.Client.Delete(ctx, pod, opts...); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
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

// unreported drops a ProgressDeadlineExceeded event the replica's status shows was already
// recorded: the policy restates it on every pass until the rollout moves, and every pod
// event of the cluster brings a pass.
func unreported(cr *v1alpha1.ComputeReplica, events []rollout.Event) []rollout.Event {
	c := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionProgressing)
	if c == nil || c.Reason != rollout.ReasonProgressDeadlineExceeded {
		return events
	}
	out := events[:0:0]
	for _, e := range events {
		if e.Reason != rollout.ReasonProgressDeadlineExceeded {
			out = append(out, e)
		}
	}
	return out
}

// writeInvalid publishes Degraded=InvalidSpec for a replica that cannot be rendered or
// whose rendered objects the API server rejects, and records a warning event when the
// reason is new. A rollout already under way stays recorded (its pods may be gone, so the
// replica keeps blocking its peers); none is started.
func (r *Reconciler) writeInvalid(ctx context.Context, st *replicaState) error {
	msg := st.invalid().Error()
	reason, progressing := ReasonInvalidSpec, "the spec cannot be rendered"
	switch {
	case st.renderEr != nil:
	case st.rejectReason == ReasonNameConflict:
		reason, progressing = ReasonNameConflict, "a name the replica needs is taken"
	default:
		progressing = "the API server rejects the objects rendered from the spec"
	}
	d := rollout.Decision{
		Conditions: []rollout.Condition{
			{Type: rollout.TypeDegraded, Status: rollout.True, Reason: reason, Message: msg},
			{Type: rollout.TypeProgressing, Status: rollout.False, Reason: reason, Message: progressing},
		},
	}
	if st.observed {
		// The pods are known: keep reporting whether the old ones are up.
		_, available, _ := rollout.Observe(r.Clock.Now(), st.input)
		d.Conditions = append(d.Conditions, rollout.AvailableCondition(st.input, available))
	}
	if t := st.cr.Status.RolloutStartTime; t != nil {
		start := t.Time
		d.RolloutStart = &start
	}
	d.Reasons = st.cr.Status.RolloutReasons
	// Every pod event of the cluster reconciles it again; one event per distinct refusal.
	if c := meta.FindStatusCondition(st.cr.Status.Conditions, v1alpha1.ConditionDegraded); c == nil ||
		c.Reason != reason || c.Message != msg || c.ObservedGeneration != st.cr.Generation {
		r.Recorder.Eventf(st.cr, nil, corev1.EventTypeWarning, reason, "Render", "%s", msg)
	}
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
		RolloutReasons:     d.Reasons,
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
	if statusUpToDate(cr.Status, status) {
		return nil
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

// dryRunApply asks the API server whether it would take the server-side apply of obj,
// changing nothing. It sends the apply patch itself rather than using Client.Apply, whose
// dry-run controller-runtime's fake client ignores (it would really apply the object).
func (r *Reconciler) dryRunApply(ctx context.Context, obj client.Object) error {
	u, err := toApplyObject(obj, "status")
	if err != nil {
		return err
	}
	body, err := u.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encode %s %s/%s for a dry run: %w", u.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	if err := r.Client.Patch(ctx, u, client.RawPatch(types.ApplyPatchType, body), client.DryRunAll,
		client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("dry-run apply %s %s/%s: %w", u.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// applyObject server-side applies a rendered object with the operator's field owner,
// unless observed (the object as read, nil when absent) already carries all of it.
func (r *Reconciler) applyObject(ctx context.Context, obj client.Object, observed client.Object) error {
	u, err := toApplyObject(obj, "status")
	if err != nil {
		return err
	}
	if observed != nil {
		switch same, err := upToDate(u.Object, observed); {
		case err != nil:
			return err
		case same:
			return nil
		}
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

// optional turns a typed nil pointer into a nil interface, so that "absent" stays nil.
func optional[T any, P interface {
	*T
	client.Object
}](p P) client.Object {
	if p == nil {
		return nil
	}
	return p
}

var _ reconcile.Reconciler = (*Reconciler)(nil)
