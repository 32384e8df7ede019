package render

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
)

func TestTemplateChanges(t *testing.T) {
	tests := []struct {
		name    string
		mut     func(*v1alpha1.ComputeReplica)
		opts    Options
		reasons []string
		// contains is a fragment of the first change's message.
		contains string
	}{
		{"unchanged", nil, Options{}, nil, ""},
		{"image", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Image = "tandem/replica:v2" }, Options{},
			[]string{ReasonImageChanged}, "image tandem/replica:dev -> tandem/replica:v2"},
		{"pull policy", func(cr *v1alpha1.ComputeReplica) { cr.Spec.ImagePullPolicy = corev1.PullAlways }, Options{},
			[]string{ReasonImageChanged}, "imagePullPolicy IfNotPresent -> Always"},
		{"processes", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Processes = 3 }, Options{},
			[]string{ReasonSizeChanged}, "processes 2 -> 3"},
		{"workers", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Workers = 8 }, Options{},
			[]string{ReasonSizeChanged}, "workers 4 -> 8"},
		{"resources", func(cr *v1alpha1.ComputeReplica) {
			cr.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}
		}, Options{}, []string{ReasonSizeChanged}, "requests{memory=2Gi}"},
		{"interactive runtime", func(cr *v1alpha1.ComputeReplica) { cr.Spec.InteractiveRuntime = true }, Options{},
			[]string{ReasonInteractiveRuntimeChanged}, "interactiveRuntime false -> true"},
		{"interactive runtime with processes", func(cr *v1alpha1.ComputeReplica) {
			cr.Spec.InteractiveRuntime, cr.Spec.Processes = true, 4
		}, Options{}, []string{ReasonSizeChanged, ReasonInteractiveRuntimeChanged}, "processes 2 -> 4"},
		{"log level", func(cr *v1alpha1.ComputeReplica) { cr.Spec.LogLevel = "debug" }, Options{},
			[]string{ReasonLogLevelChanged}, "logLevel info -> debug"},
		{"ports", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Ports.Computectl = 3100 }, Options{},
			[]string{ReasonPortsChanged}, "computectl=3100"},
		{"peek lane port", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Ports.PeekLane = 3103 }, Options{},
			[]string{ReasonPortsChanged}, "peek-lane=3103"},
		{"scheduling", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Scheduling.NodeSelector = map[string]string{"pool": "a"} }, Options{},
			[]string{ReasonSchedulingChanged}, "node selector"},
		{"storage address", nil, Options{StorageAddr: "ctl:6877"},
			[]string{ReasonOperatorOptionsChanged}, "storage address (none) -> ctl:6877"},
		{"internal TLS", nil, Options{InternalTLS: true},
			[]string{ReasonOperatorOptionsChanged}, "internal TLS false -> true"},
		{"cluster domain", nil, Options{ClusterDomain: "cluster.local"},
			[]string{ReasonOperatorOptionsChanged}, "peer addresses"},
		{"image and workers", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Image, cr.Spec.Workers = "x", 1 }, Options{},
			[]string{ReasonImageChanged, ReasonSizeChanged}, "image"},
	}
	applied, _, err := StatefulSet(sample(nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			desired, _, err := StatefulSet(sample(tc.mut), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			changes := TemplateChanges(applied, desired)
			var reasons []string
			for _, c := range changes {
				reasons = append(reasons, c.Reason)
			}
			if !slices.Equal(reasons, tc.reasons) {
				t.Fatalf("reasons %v, want %v (%+v)", reasons, tc.reasons, changes)
			}
			if tc.contains != "" && !strings.Contains(changes[0].Message, tc.contains) {
				t.Errorf("message %q lacks %q", changes[0].Message, tc.contains)
			}
		})
	}

	t.Run("operator upgrade adds the peek lane", func(t *testing.T) {
		// A StatefulSet an operator without the lane port rendered: the new port and its
		// flags are a ports change, not an unexplained template change.
		old := applied.DeepCopy()
		c := &old.Spec.Template.Spec.Containers[0]
		c.Ports = slices.DeleteFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == PortPeekLane })
		c.Args = slices.DeleteFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--peek-lane") })
		changes := TemplateChanges(old, applied)
		if len(changes) != 1 || changes[0].Reason != ReasonPortsChanged || !strings.Contains(changes[0].Message, "peek-lane=2103") {
			t.Fatalf("changes %+v, want one %s adding peek-lane=2103", changes, ReasonPortsChanged)
		}
	})

	t.Run("unexplained", func(t *testing.T) {
		desired := applied.DeepCopy()
		desired.Spec.Template.Spec.Containers[0].WorkingDir = "/data"
		changes := TemplateChanges(applied, desired)
		if len(changes) != 1 || changes[0].Reason != ReasonTemplateChanged {
			t.Errorf("changes %+v, want one TemplateChanged", changes)
		}
	})
}

func TestCovers(t *testing.T) {
	tests := []struct {
		name      string
		want, got any
		ok        bool
	}{
		{"equal scalars", "a", "a", true},
		{"different scalars", int64(1), int64(2), false},
		{"extra observed field", map[string]any{"a": "x"}, map[string]any{"a": "x", "b": "defaulted"}, true},
		{"missing field", map[string]any{"a": "x"}, map[string]any{}, false},
		{"nested difference", map[string]any{"a": map[string]any{"b": true}}, map[string]any{"a": map[string]any{"b": false}}, false},
		{"list element carries more", []any{map[string]any{"n": "c"}}, []any{map[string]any{"n": "c", "p": int64(1)}}, true},
		{"list shorter", []any{"a", "b"}, []any{"a"}, false},
		{"list longer", []any{"a"}, []any{"a", "b"}, false},
		{"nil wanted, absent", map[string]any{"a": nil}, map[string]any{}, true},
		{"empty map, absent", map[string]any{}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Covers(tc.want, tc.got); got != tc.ok {
				t.Errorf("Covers(%v, %v) = %v, want %v", tc.want, tc.got, got, tc.ok)
			}
		})
	}
}
