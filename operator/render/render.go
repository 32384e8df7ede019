package render

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
)

// Label and annotation keys the operator puts on what it renders.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// LabelCluster carries spec.clusterName; the operator watches by it.
	LabelCluster = "compute.tandem.dev/cluster"
	// LabelReplica carries the ComputeReplica's name; the pod selector uses it.
	LabelReplica = "compute.tandem.dev/replica"
	// LabelPodTemplateHash carries the pod-template hash on the StatefulSet's pod template
	// and so on every pod it creates.
	LabelPodTemplateHash = "compute.tandem.dev/pod-template-hash"
)

// Fixed names of what the operator renders.
const (
	AppName       = "tandem-replica"
	ComponentName = "compute-replica"
	ManagerName   = "tandem-operator"
	ContainerName = "replica"
	// UID and GID the replica runs as; the image must not need root.
	nonRootID = 65532
)

// Port names; the replica's flags and the controller refer to ports by these names.
const (
	PortComputectl   = "computectl"
	PortCompute      = "compute"
	PortInteractive  = "interactive"
	PortInternalHTTP = "internal-http"
	PortPeekLane     = "peek-lane"
)

// Options are operator-wide rendering settings.
type Options struct {
	// ClusterDomain, when set (e.g. "cluster.local"), makes peer and computectl addresses
	// fully qualified; when empty they end in ".svc" and rely on the pod's DNS search path.
	ClusterDomain string
	// StorageAddr is the address of the controller's table storage gRPC service
	// (host:port), passed to every replica as --storage-addr; replicas cannot read
	// tables or stored materialized views without it.
	StorageAddr string
	// InternalTLS mounts the replica's internal TLS Secret (InternalTLSSecretName, kept by
	// the operator's certs.Issuer) and passes its files to the replica, which then speaks
	// mutual TLS on every internal link and reloads the files when the Secret rotates.
	InternalTLS bool
}

// InternalTLSDir is where a replica pod mounts its internal TLS Secret.
const InternalTLSDir = "/etc/tandem/internal-tls"

// internalTLSVolume names the volume of the internal TLS Secret.
const internalTLSVolume = "internal-tls"

// InternalTLSSecretName is the name of a replica's internal TLS Secret (ca.crt, tls.crt,
// tls.key).
func InternalTLSSecretName(cr *v1alpha1.ComputeReplica) string { return cr.Name + "-internal-tls" }

// InternalTLSSecretMeta is the metadata of a replica's internal TLS Secret: the replica's
// labels, and the replica as its owner.
func InternalTLSSecretMeta(cr *v1alpha1.ComputeReplica) metav1.ObjectMeta {
	m := objectMeta(cr)
	m.Name = InternalTLSSecretName(cr)
	return m
}

// ServiceName is the name of the headless Service (and the StatefulSet) of a replica.
func ServiceName(cr *v1alpha1.ComputeReplica) string { return cr.Name }

// SelectorLabels select the pods of one replica.
func SelectorLabels(cr *v1alpha1.ComputeReplica) map[string]string {
	return map[string]string{LabelName: AppName, LabelReplica: cr.Name}
}

// Labels are put on every object rendered for a replica.
func Labels(cr *v1alpha1.ComputeReplica) map[string]string {
	return map[string]string{
		LabelName:      AppName,
		LabelInstance:  cr.Name,
		LabelComponent: ComponentName,
		LabelManagedBy: ManagerName,
		LabelCluster:   cr.Spec.ClusterName,
		LabelReplica:   cr.Name,
	}
}

// hostSuffix is the DNS suffix after "<pod>.<service>.<namespace>".
func (o Options) hostSuffix() string {
	if o.ClusterDomain == "" {
		return ".svc"
	}
	return ".svc." + strings.TrimSuffix(o.ClusterDomain, ".")
}

// ProcessHost is the stable DNS name of process i of a replica.
func ProcessHost(cr *v1alpha1.ComputeReplica, o Options, i int) string {
	return fmt.Sprintf("%s-%d.%s.%s%s", cr.Name, i, ServiceName(cr), cr.Namespace, o.hostSuffix())
}

// Peers lists host:port of every process of a replica, in process order.
func Peers(cr *v1alpha1.ComputeReplica, o Options, port int32) []string {
	peers := make([]string, 0, cr.Spec.Processes)
	for i := range int(cr.Spec.Processes) {
		peers = append(peers, ProcessHost(cr, o, i)+":"+strconv.Itoa(int(port)))
	}
	return peers
}

// ComputectlAddresses lists the computectl endpoint of every process, in process order; the
// operator publishes them in status for the controller.
func ComputectlAddresses(cr *v1alpha1.ComputeReplica, o Options) []string {
	return Peers(cr, o, cr.Spec.Ports.Computectl)
}

// Validate reports a spec that cannot be rendered. The CRD's schema rejects all of these on
// admission; this guards objects that bypassed it (older CRD, tests) so rendering never
// produces nonsense.
func Validate(cr *v1alpha1.ComputeReplica) error {
	s := cr.Spec
	p := s.Ports
	if errs := validation.IsDNS1035Label(cr.Name); len(errs) > 0 {
		return fmt.Errorf("computereplica %s/%s: the name must be a DNS-1035 label (it names a Service): %s",
			cr.Namespace, cr.Name, strings.Join(errs, "; "))
	}
	switch {
	case len(cr.Name) > v1alpha1.MaxNameLength:
		return fmt.Errorf("computereplica %s/%s: the name is longer than %d characters (it names a StatefulSet)",
			cr.Namespace, cr.Name, v1alpha1.MaxNameLength)
	case s.ClusterName == "":
		return fmt.Errorf("computereplica %s/%s: spec.clusterName is empty", cr.Namespace, cr.Name)
	case s.Image == "":
		return fmt.Errorf("computereplica %s/%s: spec.image is empty", cr.Namespace, cr.Name)
	case s.Processes < 1 || s.Workers < 1:
		return fmt.Errorf("computereplica %s/%s: processes (%d) and workers (%d) must be at least 1",
			cr.Namespace, cr.Name, s.Processes, s.Workers)
	case p.Computectl == 0 || p.Compute == 0 || p.InternalHTTP == 0 || p.PeekLane == 0 || (s.InteractiveRuntime && p.Interactive == 0):
		return fmt.Errorf("computereplica %s/%s: a port is unset", cr.Namespace, cr.Name)
	}
	seen := map[int32]string{}
	for _, np := range namedPorts(cr) {
		if other, dup := seen[np.ContainerPort]; dup {
			return fmt.Errorf("computereplica %s/%s: ports %s and %s are both %d",
				cr.Namespace, cr.Name, other, np.Name, np.ContainerPort)
		}
		seen[np.ContainerPort] = np.Name
	}
	return nil
}

// namedPorts are the container ports in a fixed order; interactive only when enabled.
func namedPorts(cr *v1alpha1.ComputeReplica) []corev1.ContainerPort {
	p := cr.Spec.Ports
	ports := []corev1.ContainerPort{
		{Name: PortComputectl, ContainerPort: p.Computectl, Protocol: corev1.ProtocolTCP},
		{Name: PortCompute, ContainerPort: p.Compute, Protocol: corev1.ProtocolTCP},
	}
	if cr.Spec.InteractiveRuntime {
		ports = append(ports, corev1.ContainerPort{Name: PortInteractive, ContainerPort: p.Interactive, Protocol: corev1.ProtocolTCP})
	}
	return append(ports,
		corev1.ContainerPort{Name: PortInternalHTTP, ContainerPort: p.InternalHTTP, Protocol: corev1.ProtocolTCP},
		corev1.ContainerPort{Name: PortPeekLane, ContainerPort: p.PeekLane, Protocol: corev1.ProtocolTCP})
}

// Service renders the headless Service that gives every process a stable DNS name.
func Service(cr *v1alpha1.ComputeReplica) *corev1.Service {
	var ports []corev1.ServicePort
	for _, p := range namedPorts(cr) {
		ports = append(ports, corev1.ServicePort{
			Name: p.Name, Port: p.ContainerPort, TargetPort: intstr.FromString(p.Name), Protocol: corev1.ProtocolTCP,
		})
	}
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(cr),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 SelectorLabels(cr),
			Ports:                    ports,
			PublishNotReadyAddresses: true,
		},
	}
}

// PodDisruptionBudget renders the PDB of a replica's pods with the given maxUnavailable:
// 0 (no eviction) or the replica's processes (all of them, since losing one process takes
// the whole replica down anyway); package disruption decides which. Pods that are not
// ready may always be evicted: their replica is down already.
func PodDisruptionBudget(cr *v1alpha1.ComputeReplica, maxUnavailable int32) *policyv1.PodDisruptionBudget {
	mu := intstr.FromInt32(maxUnavailable)
	always := policyv1.AlwaysAllow
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: objectMeta(cr),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable:             &mu,
			Selector:                   &metav1.LabelSelector{MatchLabels: SelectorLabels(cr)},
			UnhealthyPodEvictionPolicy: &always,
		},
	}
}

// StatefulSet renders the StatefulSet running a replica's processes, and returns the
// pod-template hash it stamped on the pod template.
func StatefulSet(cr *v1alpha1.ComputeReplica, o Options) (*appsv1.StatefulSet, string, error) {
	if err := Validate(cr); err != nil {
		return nil, "", err
	}
	tmpl := podTemplate(cr, o)
	hash, err := hashTemplate(&tmpl)
	if err != nil {
		return nil, "", fmt.Errorf("computereplica %s/%s: %w", cr.Namespace, cr.Name, err)
	}
	tmpl.Labels[LabelPodTemplateHash] = hash
	replicas := cr.Spec.Processes
	sts := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: objectMeta(cr),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &replicas,
			Selector:            &metav1.LabelSelector{MatchLabels: SelectorLabels(cr)},
			ServiceName:         ServiceName(cr),
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			MinReadySeconds:     cr.Spec.Rollout.MinReadySeconds,
			Template:            tmpl,
		},
	}
	return sts, hash, nil
}

// Args are the replica container's arguments. There is no --process: the replica takes its
// process index from the StatefulSet hostname's ordinal suffix, which matches the order of
// the peer lists.
func Args(cr *v1alpha1.ComputeReplica, o Options) []string {
	s := cr.Spec
	args := []string{
		"--controller-listen-addr=:" + strconv.Itoa(int(s.Ports.Computectl)),
		"--workers=" + strconv.Itoa(int(s.Workers)),
		"--compute-peers=" + strings.Join(Peers(cr, o, s.Ports.Compute), ","),
	}
	if s.InteractiveRuntime {
		args = append(args, "--interactive-peers="+strings.Join(Peers(cr, o, s.Ports.Interactive), ","))
	}
	args = append(args, "--internal-http-listen-addr=:"+strconv.Itoa(int(s.Ports.InternalHTTP)),
		// A named port, so that the pod spec and the chart's NetworkPolicy admit the lane
		// (the replica's default is a port the system chooses).
		"--peek-lane=tcp", "--peek-lane-listen-addr=:"+strconv.Itoa(int(s.Ports.PeekLane)))
	if o.StorageAddr != "" {
		args = append(args, "--storage-addr="+o.StorageAddr)
	}
	if s.LogLevel != "" {
		args = append(args, "--log-level="+s.LogLevel)
	}
	if o.InternalTLS {
		args = append(args, "--internal-tls-ca="+InternalTLSDir+"/ca.crt",
			"--internal-tls-cert="+InternalTLSDir+"/tls.crt", "--internal-tls-key="+InternalTLSDir+"/tls.key")
	}
	return args
}

func podTemplate(cr *v1alpha1.ComputeReplica, o Options) corev1.PodTemplateSpec {
	s := cr.Spec
	no, yes := false, true
	uid := int64(nonRootID)
	grace := int64(30)
	probe := func(path string, period, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: path, Port: intstr.FromString(PortInternalHTTP), Scheme: corev1.URISchemeHTTP,
			}},
			PeriodSeconds: period, TimeoutSeconds: 2, FailureThreshold: failures, SuccessThreshold: 1,
		}
	}
	container := corev1.Container{
		Name:            ContainerName,
		Image:           s.Image,
		ImagePullPolicy: s.ImagePullPolicy,
		Args:            Args(cr, o),
		Ports:           namedPorts(cr),
		Resources:       s.Resources,
		// Startup allows a slow first connection to peers; readiness gates the rollout;
		// liveness only catches a wedged process.
		StartupProbe:   probe("/healthz", 2, 60),
		ReadinessProbe: probe("/readyz", 5, 3),
		LivenessProbe:  probe("/healthz", 10, 6),
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             &yes,
			RunAsUser:                &uid,
			RunAsGroup:               &uid,
			ReadOnlyRootFilesystem:   &yes,
			AllowPrivilegeEscalation: &no,
			Privileged:               &no,
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		VolumeMounts:             []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	volumes := []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	if o.InternalTLS {
		// Not a subPath mount: the kubelet then swaps rotated files in place.
		mode := int32(0o440)
		volumes = append(volumes, corev1.Volume{Name: internalTLSVolume, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: InternalTLSSecretName(cr), DefaultMode: &mode},
		}})
		container.VolumeMounts = append(container.VolumeMounts,
			corev1.VolumeMount{Name: internalTLSVolume, MountPath: InternalTLSDir, ReadOnly: true})
	}
	labels := Labels(cr)
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{container},
			Volumes:                       volumes,
			NodeSelector:                  s.Scheduling.NodeSelector,
			Affinity:                      s.Scheduling.Affinity,
			Tolerations:                   s.Scheduling.Tolerations,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			TerminationGracePeriodSeconds: &grace,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   &yes,
				RunAsUser:      &uid,
				RunAsGroup:     &uid,
				FSGroup:        &uid,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
		},
	}
}

// hashTemplate hashes the JSON form of a pod template; encoding/json sorts map keys, so the
// hash is deterministic.
func hashTemplate(t *corev1.PodTemplateSpec) (string, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("hash pod template: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:10], nil
}

func objectMeta(cr *v1alpha1.ComputeReplica) metav1.ObjectMeta {
	// The replica owns what is rendered for it: deleting it garbage-collects them.
	owner := metav1.NewControllerRef(cr, v1alpha1.GroupVersion().WithKind(v1alpha1.Kind))
	return metav1.ObjectMeta{
		Name: cr.Name, Namespace: cr.Namespace, Labels: Labels(cr),
		OwnerReferences: []metav1.OwnerReference{*owner},
	}
}
