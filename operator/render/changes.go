package render

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
)

// Reasons a replica's pod template changed; they name a rollout's cause in conditions,
// status.rolloutReasons and events.
const (
	// ReasonImageChanged: spec.image or spec.imagePullPolicy.
	ReasonImageChanged = "ImageChanged"
	// ReasonSizeChanged: spec.processes, spec.workers or spec.resources.
	ReasonSizeChanged = "SizeChanged"
	// ReasonInteractiveRuntimeChanged: spec.interactiveRuntime.
	ReasonInteractiveRuntimeChanged = "InteractiveRuntimeChanged"
	// ReasonLogLevelChanged: spec.logLevel.
	ReasonLogLevelChanged = "LogLevelChanged"
	// ReasonPortsChanged: spec.ports.
	ReasonPortsChanged = "PortsChanged"
	// ReasonSchedulingChanged: spec.scheduling (node selector, affinity, tolerations).
	ReasonSchedulingChanged = "SchedulingChanged"
	// ReasonOperatorOptionsChanged: the operator's own rendering options (cluster domain,
	// storage address) changed.
	ReasonOperatorOptionsChanged = "OperatorOptionsChanged"
	// ReasonTemplateChanged: anything else, such as an operator upgrade that renders pods
	// differently, or a StatefulSet template not rendered by this operator.
	ReasonTemplateChanged = "TemplateChanged"
)

// Change is one reason a pod template changed, with what changed.
type Change struct {
	Reason  string
	Message string
}

// argFlags are the replica flags TemplateChanges explains; any other argument that
// differs is a TemplateChanged.
var argFlags = []string{"--workers", "--compute-peers", "--interactive-peers", "--log-level",
	"--storage-addr", "--controller-listen-addr", "--internal-http-listen-addr",
	"--peek-lane", "--peek-lane-listen-addr",
	"--internal-tls-ca", "--internal-tls-cert", "--internal-tls-key"}

// TemplateChanges lists why the pod template of desired differs from that of applied (the
// StatefulSet as it is), in a fixed order of reasons, one entry per reason. It is empty
// when the templates agree apart from the pod-template-hash label.
func TemplateChanges(applied, desired *appsv1.StatefulSet) []Change {
	oldT, newT := applied.Spec.Template, desired.Spec.Template
	oldC, newC := firstContainer(&oldT.Spec), firstContainer(&newT.Spec)
	oldA, newA := parseArgs(oldC.Args), parseArgs(newC.Args)
	var out []Change
	add := func(reason, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		for i := range out {
			if out[i].Reason == reason {
				out[i].Message += "; " + msg
				return
			}
		}
		out = append(out, Change{reason, msg})
	}

	if oldC.Image != newC.Image {
		add(ReasonImageChanged, "image %s -> %s", orNone(oldC.Image), newC.Image)
	}
	if oldC.ImagePullPolicy != newC.ImagePullPolicy {
		add(ReasonImageChanged, "imagePullPolicy %s -> %s", orNone(string(oldC.ImagePullPolicy)), newC.ImagePullPolicy)
	}
	oldPeers, newPeers := splitList(oldA["--compute-peers"]), splitList(newA["--compute-peers"])
	if len(oldPeers) != len(newPeers) {
		add(ReasonSizeChanged, "processes %d -> %d", len(oldPeers), len(newPeers))
	}
	if oldA["--workers"] != newA["--workers"] {
		add(ReasonSizeChanged, "workers %s -> %s", orNone(oldA["--workers"]), orNone(newA["--workers"]))
	}
	if !equality.Semantic.DeepEqual(oldC.Resources, newC.Resources) {
		add(ReasonSizeChanged, "resources %s -> %s", resourcesString(oldC.Resources), resourcesString(newC.Resources))
	}
	_, oldI := oldA["--interactive-peers"]
	_, newI := newA["--interactive-peers"]
	if oldI != newI {
		add(ReasonInteractiveRuntimeChanged, "interactiveRuntime %t -> %t", oldI, newI)
	}
	if oldA["--log-level"] != newA["--log-level"] {
		add(ReasonLogLevelChanged, "logLevel %s -> %s", orNone(oldA["--log-level"]), orNone(newA["--log-level"]))
	}
	portsChanged := !equality.Semantic.DeepEqual(oldC.Ports, newC.Ports) && !(oldI != newI && samePortsBut(oldC.Ports, newC.Ports, PortInteractive))
	if portsChanged {
		add(ReasonPortsChanged, "ports %s -> %s", portsString(oldC.Ports), portsString(newC.Ports))
	}
	oldS, newS := oldT.Spec, newT.Spec
	if !equality.Semantic.DeepEqual(oldS.NodeSelector, newS.NodeSelector) ||
		!equality.Semantic.DeepEqual(oldS.Affinity, newS.Affinity) ||
		!equality.Semantic.DeepEqual(oldS.Tolerations, newS.Tolerations) {
		add(ReasonSchedulingChanged, "node selector, affinity or tolerations")
	}
	if oldA["--storage-addr"] != newA["--storage-addr"] {
		add(ReasonOperatorOptionsChanged, "storage address %s -> %s", orNone(oldA["--storage-addr"]), orNone(newA["--storage-addr"]))
	}
	_, oldTLS := oldA["--internal-tls-cert"]
	_, newTLS := newA["--internal-tls-cert"]
	if oldTLS != newTLS {
		add(ReasonOperatorOptionsChanged, "internal TLS %t -> %t", oldTLS, newTLS)
	}
	if len(oldPeers) == len(newPeers) && !portsChanged && oldA["--compute-peers"] != newA["--compute-peers"] {
		add(ReasonOperatorOptionsChanged, "peer addresses %s -> %s", oldA["--compute-peers"], newA["--compute-peers"])
	}
	if unexplained(&oldT, &newT, oldA, newA) {
		add(ReasonTemplateChanged, "the pod template differs beyond the spec (an operator upgrade, or a template this operator did not render)")
	}
	return out
}

// unexplained says whether the templates differ in anything the reasons above do not cover.
func unexplained(oldT, newT *corev1.PodTemplateSpec, oldA, newA map[string]string) bool {
	a, b := oldT.DeepCopy(), newT.DeepCopy()
	delete(a.Labels, LabelPodTemplateHash)
	delete(b.Labels, LabelPodTemplateHash)
	if len(a.Spec.Containers) != 1 || len(b.Spec.Containers) != 1 {
		return !equality.Semantic.DeepEqual(a, b)
	}
	// Overwrite what the reasons cover with the desired values; whatever still differs
	// is unexplained.
	ac, bc := &a.Spec.Containers[0], &b.Spec.Containers[0]
	ac.Image, ac.ImagePullPolicy, ac.Resources, ac.Ports = bc.Image, bc.ImagePullPolicy, bc.Resources, bc.Ports
	a.Spec.NodeSelector, a.Spec.Affinity, a.Spec.Tolerations = b.Spec.NodeSelector, b.Spec.Affinity, b.Spec.Tolerations
	if _, oldTLS := oldA["--internal-tls-cert"]; oldTLS != hasArg(newA, "--internal-tls-cert") {
		// The internal TLS Secret's volume comes and goes with the flags.
		a.Spec.Volumes, ac.VolumeMounts = b.Spec.Volumes, bc.VolumeMounts
	}
	for _, f := range argFlags {
		delete(oldA, f)
		delete(newA, f)
	}
	ac.Args, bc.Args = nil, nil
	if !equality.Semantic.DeepEqual(oldA, newA) {
		return true
	}
	// The applied template carries the API server's defaults; what matters is whether it
	// still carries everything desired sets.
	am, errA := runtime.DefaultUnstructuredConverter.ToUnstructured(a)
	bm, errB := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if errA != nil || errB != nil {
		return true
	}
	return !Covers(bm, am)
}

func hasArg(args map[string]string, flag string) bool {
	_, ok := args[flag]
	return ok
}

// Covers says whether got carries every field of want with the same value: a map may hold
// more keys than want (defaults the API server filled in, other managers' fields), a list
// must have want's length and each element must cover want's. Both sides are unstructured
// forms of typed objects, converted the same way.
func Covers(want, got any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return len(w) == 0 && got == nil
		}
		for k, wv := range w {
			gv, present := g[k]
			if !present && wv != nil {
				return false
			}
			if !Covers(wv, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok {
			return len(w) == 0 && got == nil
		}
		if len(g) != len(w) {
			return false
		}
		for i := range w {
			if !Covers(w[i], g[i]) {
				return false
			}
		}
		return true
	default:
		return want == got
	}
}

func firstContainer(s *corev1.PodSpec) corev1.Container {
	if len(s.Containers) == 0 {
		return corev1.Container{}
	}
	return s.Containers[0]
}

// parseArgs maps "--flag=value" arguments to their values (a bare flag maps to "").
func parseArgs(args []string) map[string]string {
	m := make(map[string]string, len(args))
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		m[k] = v
	}
	return m
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// samePortsBut says whether a and b are the same ports once the named one is left out.
func samePortsBut(a, b []corev1.ContainerPort, name string) bool {
	drop := func(ps []corev1.ContainerPort) []corev1.ContainerPort {
		var out []corev1.ContainerPort
		for _, p := range ps {
			if p.Name != name {
				out = append(out, p)
			}
		}
		return out
	}
	return equality.Semantic.DeepEqual(drop(a), drop(b))
}

func portsString(ps []corev1.ContainerPort) string {
	parts := make([]string, 0, len(ps))
	for _, p := range ps {
		parts = append(parts, fmt.Sprintf("%s=%d", p.Name, p.ContainerPort))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func resourcesString(r corev1.ResourceRequirements) string {
	list := func(l corev1.ResourceList) string {
		parts := make([]string, 0, len(l))
		for _, k := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := l[k]; ok {
				parts = append(parts, fmt.Sprintf("%s=%s", k, q.String()))
			}
		}
		if len(parts) < len(l) {
			parts = append(parts, fmt.Sprintf("+%d more", len(l)-len(parts)))
		}
		return strings.Join(parts, ",")
	}
	return fmt.Sprintf("requests{%s} limits{%s}", list(r.Requests), list(r.Limits))
}
