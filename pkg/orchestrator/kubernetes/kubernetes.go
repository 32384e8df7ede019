package kubernetes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// RBAC the controller needs, in its namespace only (the chart binds it with a Role);
// `make generate-k8s` turns these markers into config/rbac/controller and the chart's
// controller Role. Creating a ComputeReplica is a server-side apply (patch, and create when it
// does not exist yet); Hydrated and Adopted are applies to the status subresource; adoption
// outcomes are also recorded as events (events.k8s.io). Nothing on pods, StatefulSets or
// Services.
//
// +kubebuilder:rbac:groups=compute.tandem.dev,resources=computereplicas,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=compute.tandem.dev,resources=computereplicas/status,verbs=get;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Default field managers and names.
const (
	// DefaultFieldManager owns the spec and labels the controller applies.
	DefaultFieldManager = "tandem-controller"
	// DefaultStatusFieldManager owns the Hydrated condition. It differs from the spec
	// manager so that managed fields show at a glance who wrote what.
	DefaultStatusFieldManager = "tandem-controller-status"
	// DefaultControllerName is the value of the managed-by label.
	DefaultControllerName = "tandem-controller"
	// DefaultPollInterval is how often RemoveReplica checks that a replica is gone.
	DefaultPollInterval = 500 * time.Millisecond
	// DefaultSyncTimeout bounds NewForConfig's wait for the first list of ComputeReplicas.
	DefaultSyncTimeout = 2 * time.Minute
)

// Options configure an Orchestrator.
type Options struct {
	// Namespace holds the replicas; required.
	Namespace string
	// Template is what every created replica runs (image, pull policy, resources).
	Template ReplicaTemplate
	// ControllerName is the managed-by label value; replicas labelled with another value
	// belong to another controller and are left alone. Default DefaultControllerName.
	ControllerName string
	// FieldManager and StatusFieldManager name the server-side apply managers.
	FieldManager       string
	StatusFieldManager string
	// AdoptionFieldManager owns the Adopted condition. Default DefaultAdoptionFieldManager.
	AdoptionFieldManager string
	// Recorder records adoption outcomes as events on the ComputeReplicas; nil records
	// none (the Adopted condition is still written). NewForConfig sets one.
	Recorder EventRecorder
	// KnownCluster says whether the controller's catalog has the cluster; user-applied
	// replicas of a known cluster are adopted. Clusters with at least one managed replica
	// are always known. May be nil.
	KnownCluster func(cluster string) bool
	// APIReader reads from the API server directly; lookups that miss the client's cache
	// fall back to it. Defaults to the client itself.
	APIReader client.Reader
	// PollInterval paces RemoveReplica's wait. Default DefaultPollInterval.
	PollInterval time.Duration
	// SyncTimeout bounds NewForConfig's wait for its cache. Default DefaultSyncTimeout.
	SyncTimeout time.Duration
	// Now is the clock of condition transition times. Default time.Now.
	Now func() time.Time
	// Log receives adoption and conflict messages.
	Log logr.Logger
}

// Orchestrator provisions replicas as ComputeReplica resources. It holds no mutable state:
// the API server is the record of which replicas exist and who manages them.
type Orchestrator struct {
	c    client.Client
	opts Options
	// uncached is opts.APIReader when it differs from c: where cache misses are checked.
	uncached client.Reader
}

var _ orchestrator.Orchestrator = (*Orchestrator)(nil)

// New returns an orchestrator writing through c. c may read from a cache (see
// NewForConfig); writes always go to the API server.
func New(c client.Client, opts Options) (*Orchestrator, error) {
	if opts.Namespace == "" {
		return nil, errors.New("kubernetes orchestrator: a namespace is required")
	}
	if opts.Template.Image == "" {
		return nil, errors.New("kubernetes orchestrator: a replica image is required")
	}
	opts.ControllerName = cmp.Or(opts.ControllerName, DefaultControllerName)
	opts.FieldManager = cmp.Or(opts.FieldManager, DefaultFieldManager)
	opts.StatusFieldManager = cmp.Or(opts.StatusFieldManager, DefaultStatusFieldManager)
	opts.AdoptionFieldManager = cmp.Or(opts.AdoptionFieldManager, DefaultAdoptionFieldManager)
	opts.PollInterval = cmp.Or(opts.PollInterval, DefaultPollInterval)
	var uncached client.Reader
	if opts.APIReader != nil {
		uncached = opts.APIReader
	} else {
		opts.APIReader = c
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Orchestrator{c: c, opts: opts, uncached: uncached}, nil
}

// EnsureReplica creates or updates the replica's ComputeReplica. A replica the controller
// created gets the whole desired spec; one a user applied is adopted and only its
// interactiveRuntime is set, after checking its shape matches cfg.
func (o *Orchestrator) EnsureReplica(ctx context.Context, cfg orchestrator.ReplicaConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cr, err := o.find(ctx, cfg.ID)
	if err != nil && !errors.Is(err, orchestrator.ErrNotFound) {
		return fmt.Errorf("ensure replica %s: %w", cfg.ID, err)
	}
	if cr != nil {
		name, nameErr := ObjectName(cfg.ID)
		switch {
		case cr.DeletionTimestamp != nil:
			return fmt.Errorf("ensure replica %s: ComputeReplica %s/%s is being deleted", cfg.ID, cr.Namespace, cr.Name)
		case cr.Labels[v1alpha1.LabelManagedBy] != "" && !IsManagedBy(cr, o.opts.ControllerName):
			return fmt.Errorf("ensure replica %s: ComputeReplica %s/%s is managed by %q", cfg.ID, cr.Namespace, cr.Name, cr.Labels[v1alpha1.LabelManagedBy])
		case IsAdopted(cr, o.opts.ControllerName) || nameErr != nil || cr.Name != name:
			// Not created by the controller (or not under the name it would have
			// created): the user's manifest owns the shape.
			if err := CheckAdoptedShape(cr, cfg); err != nil {
				o.reportAdoptionLogged(ctx, cr, false, ReasonShapeMismatch, err.Error())
				return err
			}
			if c := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionAdopted); c != nil && c.Reason == ReasonShapeMismatch {
				o.reportAdoptionLogged(ctx, cr, true, ReasonAdopted, fmt.Sprintf("replica %s of the controller's catalog", cfg.ID))
			}
			return o.apply(ctx, AdoptionObject(cr, o.opts.ControllerName, &cfg.Interactive), cfg.ID)
		}
	}
	u, err := DesiredObject(o.opts.Namespace, o.opts.ControllerName, o.opts.Template, cfg)
	if err != nil {
		return err
	}
	if cr != nil {
		u.SetUID(cr.UID)
	} else {
		// The name may be taken by an object standing for another replica (a user's,
		// labelled for another replica name or cluster): applying would hijack it.
		var other v1alpha1.ComputeReplica
		switch err := o.opts.APIReader.Get(ctx, client.ObjectKey{Namespace: u.GetNamespace(), Name: u.GetName()}, &other); {
		case err == nil:
			return fmt.Errorf("ensure replica %s: ComputeReplica %s/%s already stands for replica %s", cfg.ID, other.Namespace, other.Name, ReplicaIDOf(&other))
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("ensure replica %s: get %s/%s: %w", cfg.ID, u.GetNamespace(), u.GetName(), err)
		}
	}
	return o.apply(ctx, u, cfg.ID)
}

// RemoveReplica deletes the replica's ComputeReplica in the foreground and waits until it
// is gone, so that its pods are gone too and a replica of the same name can be created.
func (o *Orchestrator) RemoveReplica(ctx context.Context, id orchestrator.ReplicaID) error {
	cr, err := o.find(ctx, id)
	if errors.Is(err, orchestrator.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove replica %s: %w", id, err)
	}
	if !IsManagedBy(cr, o.opts.ControllerName) {
		return fmt.Errorf("remove replica %s: ComputeReplica %s/%s is not managed by %q", id, cr.Namespace, cr.Name, o.opts.ControllerName)
	}
	err = o.c.Delete(ctx, cr, client.PropagationPolicy(metav1.DeletePropagationForeground), client.Preconditions{UID: &cr.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove replica %s: delete %s/%s: %w", id, cr.Namespace, cr.Name, err)
	}
	key := client.ObjectKeyFromObject(cr)
	err = wait.PollUntilContextCancel(ctx, o.opts.PollInterval, true, func(ctx context.Context) (bool, error) {
		var cur v1alpha1.ComputeReplica
		switch err := o.opts.APIReader.Get(ctx, key, &cur); {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			return false, err
		default:
			return cur.UID != cr.UID, nil
		}
	})
	if err != nil {
		return fmt.Errorf("remove replica %s: wait for %s to be gone: %w", id, key, err)
	}
	return nil
}

// ListReplicas returns the replicas this controller manages, adopting on the way the
// user-applied replicas of known clusters. When two objects stand for one replica, the one
// named "<cluster>-<replica>" wins and the other is left alone (and logged).
func (o *Orchestrator) ListReplicas(ctx context.Context) ([]orchestrator.ReplicaID, error) {
	var list v1alpha1.ComputeReplicaList
	if err := o.c.List(ctx, &list, client.InNamespace(o.opts.Namespace)); err != nil {
		return nil, fmt.Errorf("list replicas in %s: %w", o.opts.Namespace, err)
	}
	managedClusters := map[string]bool{}
	for i := range list.Items {
		if cr := &list.Items[i]; IsManagedBy(cr, o.opts.ControllerName) {
			managedClusters[cr.Spec.ClusterName] = true
		}
	}
	known := func(cluster string) bool {
		return managedClusters[cluster] || (o.opts.KnownCluster != nil && o.opts.KnownCluster(cluster))
	}
	chosen := map[orchestrator.ReplicaID]*v1alpha1.ComputeReplica{}
	for i := range list.Items {
		cr := &list.Items[i]
		switch {
		case cr.DeletionTimestamp != nil:
			continue
		case cr.Labels[v1alpha1.LabelManagedBy] != "" && !IsManagedBy(cr, o.opts.ControllerName):
			continue // another controller's
		case !IsManagedBy(cr, o.opts.ControllerName) && !known(cr.Spec.ClusterName):
			continue
		}
		id := ReplicaIDOf(cr)
		if prev, ok := chosen[id]; ok {
			canonical, _ := ObjectName(id)
			keep, drop := prev, cr
			if cr.Name == canonical {
				keep, drop = cr, prev
			}
			o.opts.Log.Info("Ignored a ComputeReplica standing for an already listed replica",
				"replica", id.String(), "kept", keep.Name, "ignored", drop.Name)
			o.reportAdoptionLogged(ctx, drop, false, ReasonDuplicateReplica,
				fmt.Sprintf("ComputeReplica %s already stands for replica %s; this one is ignored (delete it, or label it %s with another replica name)",
					keep.Name, id, LabelReplicaName))
			chosen[id] = keep
			continue
		}
		chosen[id] = cr
	}
	ids := make([]orchestrator.ReplicaID, 0, len(chosen))
	for id, cr := range chosen {
		if !IsManagedBy(cr, o.opts.ControllerName) {
			err := o.apply(ctx, AdoptionObject(cr, o.opts.ControllerName, nil), id)
			switch {
			case apierrors.IsInvalid(err) && o.stillThere(ctx, cr):
				// The object is there and the API server refuses the adoption's apply.
				o.opts.Log.Info("Skipped adopting a ComputeReplica the API server refuses to label", "name", cr.Name, "error", err.Error())
				o.reportAdoptionLogged(ctx, cr, false, ReasonAdoptionRejected, err.Error())
				continue
			case apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsInvalid(err):
				// Deleted or replaced since the cache saw it (the UID precondition):
				// the next list sees what is there now.
				o.opts.Log.Info("Skipped adopting a ComputeReplica that changed meanwhile", "name", cr.Name, "error", err.Error())
				continue
			case err != nil:
				return nil, fmt.Errorf("adopt %s/%s: %w", cr.Namespace, cr.Name, err)
			}
			o.opts.Log.Info("Adopted a user-applied ComputeReplica", "replica", id.String(), "name", cr.Name)
		}
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b orchestrator.ReplicaID) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Replica, b.Replica))
	})
	return ids, nil
}

// Status reports the replica's processes with the computectl addresses the operator
// published, or ErrNotFound.
func (o *Orchestrator) Status(ctx context.Context, id orchestrator.ReplicaID) (orchestrator.ReplicaStatus, error) {
	cr, err := o.find(ctx, id)
	if err != nil {
		return orchestrator.ReplicaStatus{}, fmt.Errorf("status of replica %s: %w", id, err)
	}
	return StatusOf(cr), nil
}

// SetHydrated writes the replica's Hydrated condition. The generation it claims is the
// one whose pods are running (see HydratedGeneration), so a hydration of old pods never
// releases the operator's rollout of new ones. It writes nothing when the condition read
// (from the cache) already says the same for the same generation, so callers may repeat it:
// the controller does, and a repeat is how a hydration reported before the operator
// published the new pods' hash comes to claim the new generation.
func (o *Orchestrator) SetHydrated(ctx context.Context, id orchestrator.ReplicaID, hydrated bool, reason, message string) error {
	cr, err := o.find(ctx, id)
	if err != nil {
		return fmt.Errorf("set hydrated on replica %s: %w", id, err)
	}
	if !IsManagedBy(cr, o.opts.ControllerName) {
		return fmt.Errorf("set hydrated on replica %s: ComputeReplica %s/%s is not managed by %q", id, cr.Namespace, cr.Name, o.opts.ControllerName)
	}
	c := HydratedCondition(cr, hydrated, reason, message, o.opts.Now())
	if HydratedUpToDate(cr, c) {
		// The controller re-reports every replica's hydration periodically (it is
		// level-triggered); an unchanged report costs a cache read, not a request.
		return nil
	}
	u, err := HydratedStatusObject(cr, c)
	if err != nil {
		return fmt.Errorf("set hydrated on replica %s: %w", id, err)
	}
	if err := o.c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(o.opts.StatusFieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("set hydrated on replica %s: apply status of %s/%s: %w", id, cr.Namespace, cr.Name, err)
	}
	return nil
}

// apply applies u with the controller's field manager. Ownership is forced: the fields in
// u are the controller's by the rules above, and a stale claim on them (a kubectl edit of a
// created replica, a user's interactiveRuntime on an adopted one) must not wedge it.
func (o *Orchestrator) apply(ctx context.Context, u *unstructured.Unstructured, id orchestrator.ReplicaID) error {
	if err := o.c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(o.opts.FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply ComputeReplica %s/%s for replica %s: %w", u.GetNamespace(), u.GetName(), id, err)
	}
	return nil
}

// stillThere says whether cr still exists on the API server as the same object (its UID).
func (o *Orchestrator) stillThere(ctx context.Context, cr *v1alpha1.ComputeReplica) bool {
	var cur v1alpha1.ComputeReplica
	err := o.opts.APIReader.Get(ctx, client.ObjectKeyFromObject(cr), &cur)
	return err == nil && cur.UID == cr.UID
}

// find returns the object standing for id: the one named "<cluster>-<replica>" if it
// exists, else one labelled or named for the replica in its cluster. A miss in the cache is
// checked against the API server, which may have an object the informer has not seen yet.
func (o *Orchestrator) find(ctx context.Context, id orchestrator.ReplicaID) (*v1alpha1.ComputeReplica, error) {
	cr, err := o.findIn(ctx, o.c, id)
	if errors.Is(err, orchestrator.ErrNotFound) && o.uncached != nil {
		cr, err = o.findIn(ctx, o.uncached, id)
	}
	return cr, err
}

func (o *Orchestrator) findIn(ctx context.Context, r client.Reader, id orchestrator.ReplicaID) (*v1alpha1.ComputeReplica, error) {
	if name, err := ObjectName(id); err == nil {
		var cr v1alpha1.ComputeReplica
		switch err := r.Get(ctx, client.ObjectKey{Namespace: o.opts.Namespace, Name: name}, &cr); {
		case err == nil && ReplicaIDOf(&cr) == id:
			return &cr, nil
		case err != nil && !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("get %s/%s: %w", o.opts.Namespace, name, err)
		}
	}
	var list v1alpha1.ComputeReplicaList
	if err := r.List(ctx, &list, client.InNamespace(o.opts.Namespace)); err != nil {
		return nil, fmt.Errorf("list replicas in %s: %w", o.opts.Namespace, err)
	}
	for i := range list.Items {
		if cr := &list.Items[i]; ReplicaIDOf(cr) == id {
			return cr, nil
		}
	}
	return nil, orchestrator.ErrNotFound
}

// AdoptedReplicas adopts, as ListReplicas does, the user-applied replicas of known clusters,
// and returns the configs of every replica this controller manages that a user applied
// (created replicas are left out). The controller imports these into its catalog, so that
// it connects to them, reports their hydration and rolls them with the others.
func (o *Orchestrator) AdoptedReplicas(ctx context.Context) ([]orchestrator.ReplicaConfig, error) {
	ids, err := o.ListReplicas(ctx)
	if err != nil {
		return nil, err
	}
	var out []orchestrator.ReplicaConfig
	for _, id := range ids {
		cr, err := o.find(ctx, id)
		switch {
		case errors.Is(err, orchestrator.ErrNotFound):
			continue // deleted since the list
		case err != nil:
			return nil, fmt.Errorf("adopted replicas: %w", err)
		case cr.DeletionTimestamp != nil || !IsManagedBy(cr, o.opts.ControllerName):
			continue
		case cr.Annotations[AnnotationAdoptedBy] != "":
			out = append(out, StatusOf(cr).Config)
		}
	}
	return out, nil
}
