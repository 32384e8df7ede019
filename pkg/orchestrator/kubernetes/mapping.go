package kubernetes

// Pure translations between the orchestrator's vocabulary (ReplicaID, ReplicaConfig,
// ReplicaStatus) and ComputeReplica objects. Nothing here talks to the API server, so every
// rule about names, owned fields, adoption and conditions is unit-tested without one.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// Labels and annotations the controller puts on the ComputeReplicas it manages.
const (
	// LabelCluster carries spec.clusterName (the operator uses the same key on what it
	// renders, so one selector finds a cluster's replicas and their pods).
	LabelCluster = "compute.tandem.dev/cluster"
	// LabelReplicaName carries the Tandem replica name. The object name of a replica the
	// controller creates is "<cluster>-<replica>"; an adopted replica may be named anything,
	// and this label is what keeps its replica name stable.
	LabelReplicaName = "compute.tandem.dev/replica-name"
	// AnnotationAdoptedBy marks a replica a user applied and the controller adopted: the
	// user's manifest keeps owning its shape; the controller owns only the labels and
	// spec.interactiveRuntime.
	AnnotationAdoptedBy = "compute.tandem.dev/adopted-by"
)

// logLevels are the values spec.logLevel admits (the CRD's enum).
var logLevels = []string{"debug", "info", "warn", "error"}

// ObjectName is the name of the ComputeReplica the controller creates for id. It must be a
// DNS-1035 label because the operator names a Service and a StatefulSet after it, and leave
// room for the StatefulSet's pod ordinal suffix.
func ObjectName(id orchestrator.ReplicaID) (string, error) {
	name := id.Cluster + "-" + id.Replica
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		return "", fmt.Errorf("replica %s: object name %q: %s", id, name, strings.Join(errs, "; "))
	}
	// StatefulSet pods are "<name>-<ordinal>" and carry a controller-revision-hash label
	// "<name>-<hash>" that must fit in 63 characters; Kubernetes leaves 11 for the suffix.
	if len(name) > v1alpha1.MaxNameLength {
		return "", fmt.Errorf("replica %s: object name %q is longer than %d characters", id, name, v1alpha1.MaxNameLength)
	}
	return name, nil
}

// ReplicaIDOf is the Tandem replica a ComputeReplica stands for: its cluster is
// spec.clusterName, its replica name the LabelReplicaName label or, for a replica applied by
// a user without that label, the object name less a "<cluster>-" prefix.
func ReplicaIDOf(cr *v1alpha1.ComputeReplica) orchestrator.ReplicaID {
	id := orchestrator.ReplicaID{Cluster: cr.Spec.ClusterName}
	if n := cr.Labels[LabelReplicaName]; n != "" {
		id.Replica = n
	} else {
		id.Replica = strings.TrimPrefix(cr.Name, cr.Spec.ClusterName+"-")
	}
	return id
}

// ReplicaTemplate holds what the controller sets on every replica it creates, beside the
// ReplicaConfig: the image and its resources.
type ReplicaTemplate struct {
	Image           string
	ImagePullPolicy corev1.PullPolicy
	Resources       corev1.ResourceRequirements
}

// DesiredObject is the apply configuration of a replica the controller creates: every
// field listed here is owned by the controller's field manager, and a field the controller
// stops listing is removed by the next apply. Fields left out (ports, rollout, scheduling)
// keep their CRD defaults or a user's edits.
func DesiredObject(namespace, controllerName string, tmpl ReplicaTemplate, cfg orchestrator.ReplicaConfig) (*unstructured.Unstructured, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	name, err := ObjectName(cfg.ID)
	if err != nil {
		return nil, err
	}
	if tmpl.Image == "" {
		return nil, fmt.Errorf("replica %s: no replica image configured", cfg.ID)
	}
	if cfg.LogLevel != "" && !slices.Contains(logLevels, cfg.LogLevel) {
		return nil, fmt.Errorf("replica %s: log level %q is not one of %v", cfg.ID, cfg.LogLevel, logLevels)
	}
	spec := map[string]any{
		"clusterName":        cfg.ID.Cluster,
		"processes":          int64(cfg.Processes),
		"workers":            int64(cfg.Workers),
		"image":              tmpl.Image,
		"interactiveRuntime": cfg.Interactive,
	}
	if tmpl.ImagePullPolicy != "" {
		spec["imagePullPolicy"] = string(tmpl.ImagePullPolicy)
	}
	if cfg.LogLevel != "" {
		spec["logLevel"] = cfg.LogLevel
	}
	if len(tmpl.Resources.Limits) > 0 || len(tmpl.Resources.Requests) > 0 || len(tmpl.Resources.Claims) > 0 {
		res, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&tmpl.Resources)
		if err != nil {
			return nil, fmt.Errorf("replica %s: convert resources: %w", cfg.ID, err)
		}
		spec["resources"] = res
	}
	u := applyObject(namespace, name, managedLabels(controllerName, cfg.ID), nil)
	u.Object["spec"] = spec
	return u, nil
}

// AdoptionObject is the apply configuration the controller uses for a replica a user
// applied: it claims the replica for the controller (labels, so that the operator also waits
// for Hydrated before rolling the next replica of the cluster) and, when interactive is not
// nil, owns spec.interactiveRuntime. Nothing else of the user's spec is touched.
func AdoptionObject(cr *v1alpha1.ComputeReplica, controllerName string, interactive *bool) *unstructured.Unstructured {
	u := applyObject(cr.Namespace, cr.Name, managedLabels(controllerName, ReplicaIDOf(cr)),
		map[string]any{AnnotationAdoptedBy: controllerName})
	// The UID makes the apply a precondition on this very object: a replica deleted and
	// recreated in between is not adopted blindly, and a deleted one is not resurrected.
	u.SetUID(cr.UID)
	if interactive != nil {
		u.Object["spec"] = map[string]any{"interactiveRuntime": *interactive}
	}
	return u
}

// IsManagedBy says whether a replica is managed by the named controller (created or adopted).
func IsManagedBy(cr *v1alpha1.ComputeReplica, controllerName string) bool {
	return cr.Labels[v1alpha1.LabelManagedBy] == controllerName
}

// IsAdopted says whether the controller must leave the replica's shape to the user: it was
// adopted, or it exists without having been created by the controller.
func IsAdopted(cr *v1alpha1.ComputeReplica, controllerName string) bool {
	return cr.Annotations[AnnotationAdoptedBy] != "" || !IsManagedBy(cr, controllerName)
}

// CheckAdoptedShape reports a config whose shape differs from a user-applied replica's: the
// controller does not resize replicas it does not own, so the difference must be resolved in
// the user's manifest (or the catalog) rather than silently ignored.
func CheckAdoptedShape(cr *v1alpha1.ComputeReplica, cfg orchestrator.ReplicaConfig) error {
	if got := ReplicaIDOf(cr); got != cfg.ID {
		return fmt.Errorf("replica %s: object %s/%s stands for replica %s", cfg.ID, cr.Namespace, cr.Name, got)
	}
	if int(cr.Spec.Processes) != cfg.Processes || int(cr.Spec.Workers) != cfg.Workers {
		return fmt.Errorf("replica %s: user-applied ComputeReplica %s/%s has %d processes x %d workers, config wants %d x %d; change the manifest",
			cfg.ID, cr.Namespace, cr.Name, cr.Spec.Processes, cr.Spec.Workers, cfg.Processes, cfg.Workers)
	}
	return nil
}

func managedLabels(controllerName string, id orchestrator.ReplicaID) map[string]any {
	return map[string]any{
		v1alpha1.LabelManagedBy: controllerName,
		LabelCluster:            id.Cluster,
		LabelReplicaName:        id.Replica,
	}
}

func applyObject(namespace, name string, labels, annotations map[string]any) *unstructured.Unstructured {
	meta := map[string]any{"name": name, "namespace": namespace, "labels": labels}
	if annotations != nil {
		meta["annotations"] = annotations
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion().String(),
		"kind":       v1alpha1.Kind,
		"metadata":   meta,
	}}
}

// StatusOf maps a ComputeReplica to the orchestrator's view. It always reports
// spec.processes processes; a process's address is the one the operator published for it,
// or empty while the published list does not match the spec (before the operator's first
// reconcile, or after a scale), which makes the controller wait rather than dial a stale
// set. Processes share fate, so they are all running when every one is ready, all starting
// otherwise, and all stopped while the replica is being deleted.
func StatusOf(cr *v1alpha1.ComputeReplica) orchestrator.ReplicaStatus {
	st := orchestrator.ReplicaStatus{Config: orchestrator.ReplicaConfig{
		ID:          ReplicaIDOf(cr),
		Processes:   int(cr.Spec.Processes),
		Workers:     int(cr.Spec.Workers),
		Interactive: cr.Spec.InteractiveRuntime,
		LogLevel:    cr.Spec.LogLevel,
	}}
	state := orchestrator.ProcessStarting
	switch {
	case cr.DeletionTimestamp != nil:
		state = orchestrator.ProcessStopped
	case cr.Spec.Processes > 0 && cr.Status.ReadyProcesses >= cr.Spec.Processes:
		state = orchestrator.ProcessRunning
	}
	addrs := cr.Status.ComputectlAddresses
	published := len(addrs) == int(cr.Spec.Processes)
	for i := range int(cr.Spec.Processes) {
		p := orchestrator.ProcessStatus{Index: i, State: state}
		if published {
			p.ComputeCtlAddr = addrs[i]
			if host, _, ok := strings.Cut(addrs[i], ":"); ok && cr.Spec.Ports.InternalHTTP > 0 {
				p.InternalHTTPAddr = fmt.Sprintf("%s:%d", host, cr.Spec.Ports.InternalHTTP)
			}
		}
		st.Processes = append(st.Processes, p)
	}
	return st
}

// HydratedGeneration is the generation a Hydrated condition written now may claim: the
// replica's generation when the operator has observed it and every pod runs its template
// (CurrentHash == UpdateHash), else the generation the previous Hydrated condition claimed.
// Claiming the current generation while old pods still run would let the operator take a
// hydration of the old pods for one of the new, and roll the next replica too early.
func HydratedGeneration(cr *v1alpha1.ComputeReplica) int64 {
	s := cr.Status
	if s.ObservedGeneration == cr.Generation && s.UpdateHash != "" && s.CurrentHash == s.UpdateHash {
		return cr.Generation
	}
	if c := meta.FindStatusCondition(s.Conditions, v1alpha1.ConditionHydrated); c != nil {
		return c.ObservedGeneration
	}
	return 0
}

// HydratedCondition is the Hydrated condition to write on cr: its transition time moves
// only when its status changes, as meta.SetStatusCondition does.
func HydratedCondition(cr *v1alpha1.ComputeReplica, hydrated bool, reason, message string, now time.Time) metav1.Condition {
	status := metav1.ConditionFalse
	if hydrated {
		status = metav1.ConditionTrue
	}
	c := metav1.Condition{
		Type:               v1alpha1.ConditionHydrated,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: HydratedGeneration(cr),
		LastTransitionTime: metav1.NewTime(now.UTC().Truncate(time.Second)),
	}
	if old := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionHydrated); old != nil && old.Status == status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	return c
}

// HydratedUpToDate says whether cr already carries c (apart from its transition time,
// which HydratedCondition keeps when the status is unchanged).
func HydratedUpToDate(cr *v1alpha1.ComputeReplica, c metav1.Condition) bool {
	old := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionHydrated)
	return old != nil && old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message &&
		old.ObservedGeneration == c.ObservedGeneration
}

// HydratedStatusObject is the status apply configuration carrying only the Hydrated
// condition: conditions are a map list keyed by type, so the controller's field manager owns
// this one entry and the operator's applies keep the others (and this one) intact.
func HydratedStatusObject(cr *v1alpha1.ComputeReplica, c metav1.Condition) (*unstructured.Unstructured, error) {
	cm, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
	if err != nil {
		return nil, fmt.Errorf("convert condition: %w", err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion().String(),
		"kind":       v1alpha1.Kind,
		"metadata":   map[string]any{"name": cr.Name, "namespace": cr.Namespace},
		"status":     map[string]any{"conditions": []any{cm}},
	}}
	u.SetUID(cr.UID)
	return u, nil
}
