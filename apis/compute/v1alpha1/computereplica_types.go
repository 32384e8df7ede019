package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types of a ComputeReplica. Available, Progressing and Degraded are written by the
// operator; Hydrated is written by the controller that manages the replica's cluster.
const (
	// ConditionAvailable is True when every process of the replica has been ready for at
	// least spec.rollout.minReadySeconds and runs the desired pod template.
	ConditionAvailable = "Available"
	// ConditionProgressing is True while a rollout is under way or waiting its turn, and
	// False with reason ProgressDeadlineExceeded when it took too long.
	ConditionProgressing = "Progressing"
	// ConditionDegraded is True when the replica cannot be rendered or some processes are
	// not ready outside a rollout.
	ConditionDegraded = "Degraded"
	// ConditionHydrated is True when the controller has connected to every process and
	// every dataflow it installed there has caught up. Its observedGeneration is the
	// generation of the spec whose pods the controller hydrated; the operator ignores a
	// Hydrated condition older than the generation that triggered a rollout.
	ConditionHydrated = "Hydrated"
	// ConditionAdopted is written by the controller on a ComputeReplica a user applied for
	// a cluster of its catalog: True once it manages the replica and has it in its catalog,
	// False with the reason it cannot (DuplicateReplica, ShapeMismatch, ImportFailed,
	// AdoptionRejected).
	ConditionAdopted = "Adopted"
	// ConditionDisruptionAllowed is written by the operator: True when a drain may evict
	// the replica's pods (every other replica of its cluster is hydrated, or the replica is
	// alone and its disruption policy allows it), False with the reason it waits.
	ConditionDisruptionAllowed = "DisruptionAllowed"
)

// LabelManagedBy marks a ComputeReplica whose cluster is managed by a Tandem controller; the
// operator then also waits for the Hydrated condition before rolling the next replica of the
// cluster. The value names the controller (informational).
const LabelManagedBy = "compute.tandem.dev/managed-by"

// MaxNameLength is the longest ComputeReplica name the CRD admits: a StatefulSet's pods carry
// a controller-revision-hash label "<name>-<hash>" that must fit in 63 characters, and
// Kubernetes leaves 11 of them for the suffix.
const MaxNameLength = 52

// Default port numbers, exposed so that renderers and tests agree with the CRD defaults.
const (
	DefaultComputectlPort   = 2100
	DefaultComputePort      = 2101
	DefaultInteractivePort  = 2102
	DefaultInternalHTTPPort = 6878
	DefaultPeekLanePort     = 2103
)

// ComputeReplicaSpec is the desired shape of one compute replica.
//
// +kubebuilder:validation:XValidation:rule="self.processes * self.workers <= 1024",message="processes x workers must be at most 1024"
type ComputeReplicaSpec struct {
	// ClusterName is the Tandem cluster this replica belongs to. Replicas of one cluster
	// are rolled one at a time. Immutable.
	//
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName"`

	// Processes is the number of replica processes (pods); they share fate.
	//
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	Processes int32 `json:"processes,omitempty"`

	// Workers is the number of worker threads per process.
	//
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	Workers int32 `json:"workers,omitempty"`

	// Image is the replica container image.
	//
	// +required
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`

	// ImagePullPolicy of the replica container.
	//
	// +optional
	// +kubebuilder:default=IfNotPresent
	// +kubebuilder:validation:Enum=Always;IfNotPresent;Never
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty"`

	// Resources of the replica container.
	//
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`

	// Scheduling constrains where the replica's pods run.
	//
	// +optional
	Scheduling Scheduling `json:"scheduling,omitempty"`

	// InteractiveRuntime runs a second, interactive runtime in every process beside the
	// maintenance runtime; changing it rolls the replica.
	//
	// +optional
	InteractiveRuntime bool `json:"interactiveRuntime,omitempty"`

	// LogLevel of the replica processes.
	//
	// +optional
	// +kubebuilder:default=info
	// +kubebuilder:validation:Enum=debug;info;warn;error
	LogLevel string `json:"logLevel,omitempty"`

	// Ports the replica processes listen on.
	//
	// +optional
	// +kubebuilder:default={computectl:2100,compute:2101,interactive:2102,internalHTTP:6878,peekLane:2103}
	Ports Ports `json:"ports,omitempty"`

	// Disruption controls voluntary disruptions (evictions by a node drain) of the
	// replica's pods.
	//
	// +optional
	// +kubebuilder:default={singleReplica:Wait}
	Disruption DisruptionSpec `json:"disruption,omitempty"`

	// Rollout controls how a changed pod template is rolled out.
	//
	// +optional
	// +kubebuilder:default={progressDeadlineSeconds:600,minReadySeconds:0}
	Rollout RolloutSpec `json:"rollout,omitempty"`
}

// Scheduling holds the pod scheduling constraints of a replica.
type Scheduling struct {
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// Ports are the container ports of a replica process; they must be distinct.
//
// +kubebuilder:validation:XValidation:rule="[self.computectl, self.compute, self.interactive, self.internalHTTP, self.peekLane].all(p, [self.computectl, self.compute, self.interactive, self.internalHTTP, self.peekLane].exists_one(q, q == p))",message="ports must be distinct"
type Ports struct {
	// Computectl serves the controller's gRPC compute protocol.
	//
	// +optional
	// +kubebuilder:default=2100
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=65535
	Computectl int32 `json:"computectl,omitempty"`
	// Compute carries the maintenance runtime's exchange between processes.
	//
	// +optional
	// +kubebuilder:default=2101
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=65535
	Compute int32 `json:"compute,omitempty"`
	// Interactive carries the interactive runtime's exchange; used only when
	// spec.interactiveRuntime is on.
	//
	// +optional
	// +kubebuilder:default=2102
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=65535
	Interactive int32 `json:"interactive,omitempty"`
	// InternalHTTP serves /metrics, /healthz and /readyz.
	//
	// +optional
	// +kubebuilder:default=6878
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=65535
	InternalHTTP int32 `json:"internalHTTP,omitempty"`
	// PeekLane is the tcp peek lane: the connection the controller sends point reads on
	// beside the computectl stream (docs/design/read-path.md, "The peek lane").
	//
	// +optional
	// +kubebuilder:default=2103
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=65535
	PeekLane int32 `json:"peekLane,omitempty"`
}

// DisruptionSpec controls evictions of a replica's pods. The operator lets a drain evict
// the pods of one replica of a cluster at a time, and only while every other replica of
// the cluster is hydrated; this says what happens to a replica alone in its cluster.
type DisruptionSpec struct {
	// SingleReplica decides whether a drain may evict the pods of a replica that is the
	// only one of its cluster, interrupting the cluster's reads until they are back: Wait
	// (the default) refuses the evictions, so the drain waits until a second replica is
	// hydrated or this is set to Allow; Allow lets them go.
	//
	// +optional
	// +kubebuilder:default=Wait
	// +kubebuilder:validation:Enum=Wait;Allow
	SingleReplica string `json:"singleReplica,omitempty"`
}

// RolloutSpec controls rollouts of a changed pod template.
//
// +kubebuilder:validation:XValidation:rule="self.progressDeadlineSeconds > self.minReadySeconds",message="progressDeadlineSeconds must be greater than minReadySeconds"
type RolloutSpec struct {
	// Paused stops the operator from starting a rollout of this replica; one under way
	// is not interrupted (its pods are already gone).
	//
	// +optional
	Paused bool `json:"paused,omitempty"`
	// ProgressDeadlineSeconds is how long a rollout may take, from deleting the old pods
	// to the replica being Available (and Hydrated when a controller manages it), before
	// Progressing turns False with reason ProgressDeadlineExceeded.
	//
	// +optional
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	ProgressDeadlineSeconds int32 `json:"progressDeadlineSeconds,omitempty"`
	// MinReadySeconds is how long every process must have been ready before the replica
	// counts as Available.
	//
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`
}

// ComputeReplicaStatus is the observed state of a replica.
type ComputeReplicaStatus struct {
	// ObservedGeneration is the generation the operator last acted on.
	//
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Available, Progressing, Degraded (operator) and Hydrated (controller).
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ReadyProcesses counts processes whose pod is ready.
	//
	// +optional
	ReadyProcesses int32 `json:"readyProcesses,omitempty"`
	// CurrentHash is the pod-template hash every existing pod carries; empty while pods
	// disagree or none exist.
	//
	// +optional
	CurrentHash string `json:"currentHash,omitempty"`
	// UpdateHash is the pod-template hash of the desired spec.
	//
	// +optional
	UpdateHash string `json:"updateHash,omitempty"`
	// RolloutStartTime is when the operator deleted the pods of the rollout under way;
	// the progress deadline counts from it.
	//
	// +optional
	RolloutStartTime *metav1.Time `json:"rolloutStartTime,omitempty"`
	// RolloutReasons say why the replica rolls (or waits to): what changed between the
	// pod template its pods run and the desired one (ImageChanged, SizeChanged,
	// InteractiveRuntimeChanged, ...). Set while a rollout is pending or under way.
	//
	// +optional
	// +listType=atomic
	RolloutReasons []string `json:"rolloutReasons,omitempty"`
	// ComputectlAddresses are the host:port computectl endpoints of the processes, in
	// process order; the controller dials them.
	//
	// +optional
	// +listType=atomic
	ComputectlAddresses []string `json:"computectlAddresses,omitempty"`
}

// ComputeReplica is one compute replica of a Tandem cluster.
//
// The name becomes the name of the replica's headless Service (a DNS-1035 label) and of its
// StatefulSet, whose pods carry a controller-revision-hash label "<name>-<hash>" that must fit
// in 63 characters; an object named otherwise could be stored but never run.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 52",message="metadata.name must be at most 52 characters (it names the replica's StatefulSet)"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label: lower-case letters, digits and '-', starting with a letter (it names the replica's headless Service)"
// +kubebuilder:resource:shortName=crep,categories=tandem
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.clusterName`
// +kubebuilder:printcolumn:name="Processes",type=integer,JSONPath=`.spec.processes`
// +kubebuilder:printcolumn:name="Workers",type=integer,JSONPath=`.spec.workers`
// +kubebuilder:printcolumn:name="Interactive",type=boolean,JSONPath=`.spec.interactiveRuntime`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyProcesses`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ComputeReplica struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ComputeReplicaSpec   `json:"spec"`
	Status ComputeReplicaStatus `json:"status,omitempty"`
}

// ComputeReplicaList is a list of ComputeReplica.
//
// +kubebuilder:object:root=true
type ComputeReplicaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ComputeReplica `json:"items"`
}
