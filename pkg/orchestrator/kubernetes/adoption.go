package kubernetes

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// Adoption outcomes, published on a user-applied ComputeReplica as its Adopted condition
// (field manager DefaultAdoptionFieldManager) and as events: a Warning event with reason
// EventAdoptionFailed whenever the condition turns to a new failure, a Normal event
// EventAdopted when it turns True.
const (
	// ReasonAdopted: the controller manages the replica and has it in its catalog.
	ReasonAdopted = "Adopted"
	// ReasonDuplicateReplica: another ComputeReplica already stands for the same Tandem
	// replica (cluster and replica name); this one is ignored.
	ReasonDuplicateReplica = "DuplicateReplica"
	// ReasonAdoptionRejected: the API server refused the adoption's apply.
	ReasonAdoptionRejected = "AdoptionRejected"
	// ReasonShapeMismatch: the manifest's processes or workers differ from the catalog's.
	ReasonShapeMismatch = "ShapeMismatch"
	// ReasonImportFailed: the controller's catalog refused the replica.
	ReasonImportFailed = "ImportFailed"

	EventAdoptionFailed = "AdoptionFailed"
	EventAdopted        = "Adopted"
)

// DefaultAdoptionFieldManager owns the Adopted condition; it differs from the Hydrated
// condition's manager so that each apply lists only its own condition.
const DefaultAdoptionFieldManager = "tandem-controller-adoption"

// EventRecorder records Kubernetes events (client-go's events.EventRecorder satisfies it).
type EventRecorder interface {
	Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// ImportFailed records that the controller's catalog refused the adopted replica id: the
// Adopted condition False with reason ImportFailed, and a Warning event when that is news.
func (o *Orchestrator) ImportFailed(ctx context.Context, id orchestrator.ReplicaID, cause error) error {
	cr, err := o.find(ctx, id)
	if err != nil {
		return fmt.Errorf("record import failure of replica %s: %w", id, err)
	}
	return o.reportAdoption(ctx, cr, false, ReasonImportFailed, "the controller's catalog refused the replica: "+cause.Error())
}

// Imported records that the adopted replica id is in the controller's catalog: the Adopted
// condition True, and a Normal event when it was not already.
func (o *Orchestrator) Imported(ctx context.Context, id orchestrator.ReplicaID) error {
	cr, err := o.find(ctx, id)
	if err != nil {
		return fmt.Errorf("record adoption of replica %s: %w", id, err)
	}
	return o.reportAdoption(ctx, cr, true, ReasonAdopted, fmt.Sprintf("replica %s of the controller's catalog", id))
}

// reportAdoption publishes an adoption outcome on cr unless its Adopted condition (as read,
// from the cache) already says so: adoption is retried every few seconds, and a failure
// must be one event, not one a round.
func (o *Orchestrator) reportAdoption(ctx context.Context, cr *v1alpha1.ComputeReplica, ok bool, reason, message string) error {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	old := meta.FindStatusCondition(cr.Status.Conditions, v1alpha1.ConditionAdopted)
	if old != nil && old.Status == status && old.Reason == reason && old.Message == message {
		return nil
	}
	c := metav1.Condition{Type: v1alpha1.ConditionAdopted, Status: status, Reason: reason, Message: message,
		ObservedGeneration: cr.Generation, LastTransitionTime: metav1.NewTime(o.opts.Now().UTC().Truncate(time.Second))}
	if old != nil && old.Status == status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	cm, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
	if err != nil {
		return fmt.Errorf("convert condition: %w", err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion().String(),
		"kind":       v1alpha1.Kind,
		"metadata":   map[string]any{"name": cr.Name, "namespace": cr.Namespace},
		"status":     map[string]any{"conditions": []any{cm}},
	}}
	u.SetUID(cr.UID)
	if err := o.c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(o.opts.AdoptionFieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply Adopted condition of %s/%s: %w", cr.Namespace, cr.Name, err)
	}
	if o.opts.Recorder == nil {
		return nil
	}
	if ok {
		o.opts.Recorder.Eventf(cr, nil, corev1.EventTypeNormal, EventAdopted, "Adopt", "%s", message)
	} else {
		o.opts.Recorder.Eventf(cr, nil, corev1.EventTypeWarning, EventAdoptionFailed, "Adopt", "%s: %s", reason, message)
	}
	return nil
}

// reportAdoptionLogged is reportAdoption where the caller has no error to return: a failure
// to record is logged (the next round tries again).
func (o *Orchestrator) reportAdoptionLogged(ctx context.Context, cr *v1alpha1.ComputeReplica, ok bool, reason, message string) {
	if err := o.reportAdoption(ctx, cr, ok, reason, message); err != nil {
		o.opts.Log.Error(err, "Failed to record an adoption outcome", "name", cr.Name, "reason", reason)
	}
}
