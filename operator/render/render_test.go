package render

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// sample is a replica with every field the CRD defaults filled in, as the API server
// would store it.
func sample(mut func(*v1alpha1.ComputeReplica)) *v1alpha1.ComputeReplica {
	cr := &v1alpha1.ComputeReplica{
		ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "tandem", UID: "uid-r1"},
		Spec: v1alpha1.ComputeReplicaSpec{
			ClusterName:     "quickstart",
			Processes:       2,
			Workers:         4,
			Image:           "tandem/replica:dev",
			ImagePullPolicy: corev1.PullIfNotPresent,
			LogLevel:        "info",
			Ports: v1alpha1.Ports{
				Computectl: v1alpha1.DefaultComputectlPort, Compute: v1alpha1.DefaultComputePort,
				Interactive: v1alpha1.DefaultInteractivePort, InternalHTTP: v1alpha1.DefaultInternalHTTPPort, PeekLane: v1alpha1.DefaultPeekLanePort,
			},
			Rollout: v1alpha1.RolloutSpec{ProgressDeadlineSeconds: 600},
		},
	}
	if mut != nil {
		mut(cr)
	}
	return cr
}

func golden(t *testing.T, name string, objs ...any) {
	t.Helper()
	var parts []string
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		parts = append(parts, string(b))
	}
	got := strings.Join(parts, "---\n")
	path := filepath.Join("testdata", name+".golden.yaml")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file; rerun with -update and review the diff.\ngot:\n%s", path, got)
	}
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name string
		cr   *v1alpha1.ComputeReplica
		opts Options
	}{
		{"default", sample(nil), Options{}},
		{"interactive", sample(func(cr *v1alpha1.ComputeReplica) {
			cr.Spec.InteractiveRuntime = true
			cr.Spec.Processes = 3
			cr.Spec.Rollout.MinReadySeconds = 10
			cr.Spec.Resources = corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")},
			}
			cr.Spec.Scheduling = v1alpha1.Scheduling{
				NodeSelector: map[string]string{"pool": "compute"},
				Tolerations:  []corev1.Toleration{{Key: "dedicated", Value: "tandem", Effect: corev1.TaintEffectNoSchedule}},
			}
		}), Options{ClusterDomain: "cluster.local", InternalTLS: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sts, _, err := StatefulSet(tc.cr, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, Service(tc.cr), sts, PodDisruptionBudget(tc.cr, 0))
		})
	}
}

func TestStatefulSetShape(t *testing.T) {
	cr := sample(func(cr *v1alpha1.ComputeReplica) { cr.Spec.InteractiveRuntime = true; cr.Spec.Processes = 3 })
	sts, hash, err := StatefulSet(cr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sts.Spec.PodManagementPolicy != "Parallel" || sts.Spec.UpdateStrategy.Type != "OnDelete" {
		t.Errorf("pod management %s, update strategy %s", sts.Spec.PodManagementPolicy, sts.Spec.UpdateStrategy.Type)
	}
	if got := *sts.Spec.Replicas; got != 3 {
		t.Errorf("replicas = %d, want 3", got)
	}
	if got := sts.Spec.Template.Labels[LabelPodTemplateHash]; got != hash || hash == "" {
		t.Errorf("template hash label %q, returned hash %q", got, hash)
	}
	c := sts.Spec.Template.Spec.Containers[0]
	var names []string
	for _, p := range c.Ports {
		names = append(names, p.Name)
	}
	if want := []string{PortComputectl, PortCompute, PortInteractive, PortInternalHTTP, PortPeekLane}; !slices.Equal(names, want) {
		t.Errorf("ports = %v, want %v", names, want)
	}
	wantPeers := "--compute-peers=r1-0.r1.tandem.svc:2101,r1-1.r1.tandem.svc:2101,r1-2.r1.tandem.svc:2101"
	if !slices.Contains(c.Args, wantPeers) {
		t.Errorf("args %v lack %s", c.Args, wantPeers)
	}
	for _, want := range []string{"--peek-lane=tcp", "--peek-lane-listen-addr=:2103"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("args %v lack %s", c.Args, want)
		}
	}
	if got := Service(sample(nil)).Spec.Ports; got[len(got)-1].Name != PortPeekLane || got[len(got)-1].Port != v1alpha1.DefaultPeekLanePort {
		t.Errorf("service ports %v lack %s", got, PortPeekLane)
	}
	if !slices.Contains(c.Args, "--interactive-peers=r1-0.r1.tandem.svc:2102,r1-1.r1.tandem.svc:2102,r1-2.r1.tandem.svc:2102") {
		t.Errorf("args %v lack the interactive peers", c.Args)
	}
	sc := c.SecurityContext
	if !*sc.RunAsNonRoot || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("security context %+v", sc)
	}
	if c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("probes: readiness %s, liveness %s", c.ReadinessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Path)
	}
	if ref := sts.OwnerReferences; len(ref) != 1 || ref[0].UID != "uid-r1" || !*ref[0].Controller {
		t.Errorf("owner references %+v", ref)
	}
	svc := Service(cr)
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses {
		t.Errorf("service is not headless with not-ready addresses: %+v", svc.Spec)
	}
}

// TestHash checks that the hash changes exactly when the pods must change.
func TestHash(t *testing.T) {
	hash := func(mut func(*v1alpha1.ComputeReplica)) string {
		_, h, err := StatefulSet(sample(mut), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	base := hash(nil)
	if again := hash(nil); again != base {
		t.Fatalf("hash not deterministic: %s then %s", base, again)
	}
	changes := map[string]func(*v1alpha1.ComputeReplica){
		"interactive": func(cr *v1alpha1.ComputeReplica) { cr.Spec.InteractiveRuntime = true },
		"image":       func(cr *v1alpha1.ComputeReplica) { cr.Spec.Image = "tandem/replica:v2" },
		"workers":     func(cr *v1alpha1.ComputeReplica) { cr.Spec.Workers = 8 },
		"processes":   func(cr *v1alpha1.ComputeReplica) { cr.Spec.Processes = 3 },
		"log level":   func(cr *v1alpha1.ComputeReplica) { cr.Spec.LogLevel = "debug" },
		"node selector": func(cr *v1alpha1.ComputeReplica) {
			cr.Spec.Scheduling.NodeSelector = map[string]string{"a": "b"}
		},
	}
	for name, mut := range changes {
		if hash(mut) == base {
			t.Errorf("changing %s did not change the hash", name)
		}
	}
	same := map[string]func(*v1alpha1.ComputeReplica){
		"paused":            func(cr *v1alpha1.ComputeReplica) { cr.Spec.Rollout.Paused = true },
		"progress deadline": func(cr *v1alpha1.ComputeReplica) { cr.Spec.Rollout.ProgressDeadlineSeconds = 60 },
		"min ready":         func(cr *v1alpha1.ComputeReplica) { cr.Spec.Rollout.MinReadySeconds = 30 },
		"unused port":       func(cr *v1alpha1.ComputeReplica) { cr.Spec.Ports.Interactive = 3000 },
	}
	for name, mut := range same {
		if hash(mut) != base {
			t.Errorf("changing %s changed the hash", name)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := map[string]struct {
		mut  func(*v1alpha1.ComputeReplica)
		want string
	}{
		"valid":        {nil, ""},
		"dotted name":  {func(cr *v1alpha1.ComputeReplica) { cr.Name = "r1.prod" }, "must be a DNS-1035 label"},
		"digit first":  {func(cr *v1alpha1.ComputeReplica) { cr.Name = "1r" }, "must be a DNS-1035 label"},
		"long name":    {func(cr *v1alpha1.ComputeReplica) { cr.Name = strings.Repeat("r", 53) }, "longer than 52 characters"},
		"longest name": {func(cr *v1alpha1.ComputeReplica) { cr.Name = strings.Repeat("r", 52) }, ""},
		"no cluster":   {func(cr *v1alpha1.ComputeReplica) { cr.Spec.ClusterName = "" }, "clusterName is empty"},
		"no image":     {func(cr *v1alpha1.ComputeReplica) { cr.Spec.Image = "" }, "image is empty"},
		"zero workers": {func(cr *v1alpha1.ComputeReplica) { cr.Spec.Workers = 0 }, "must be at least 1"},
		"unset port":   {func(cr *v1alpha1.ComputeReplica) { cr.Spec.Ports.Compute = 0 }, "a port is unset"},
		"same ports":   {func(cr *v1alpha1.ComputeReplica) { cr.Spec.Ports.Compute = cr.Spec.Ports.Computectl }, "ports computectl and compute are both 2100"},
		"unset lane":   {func(cr *v1alpha1.ComputeReplica) { cr.Spec.Ports.PeekLane = 0 }, "a port is unset"},
		"lane clash":   {func(cr *v1alpha1.ComputeReplica) { cr.Spec.Ports.PeekLane = cr.Spec.Ports.Computectl }, "ports computectl and peek-lane are both 2100"},
		"unused clash": {func(cr *v1alpha1.ComputeReplica) { cr.Spec.Ports.Interactive = cr.Spec.Ports.Compute }, ""},
		"used clash": {func(cr *v1alpha1.ComputeReplica) {
			cr.Spec.InteractiveRuntime = true
			cr.Spec.Ports.Interactive = cr.Spec.Ports.InternalHTTP
		}, "ports interactive and internal-http are both 6878"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := Validate(sample(tc.mut))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if tc.want != "" {
				if _, _, err := StatefulSet(sample(tc.mut), Options{}); err == nil {
					t.Errorf("StatefulSet rendered an invalid spec")
				}
			}
		})
	}
}

func TestArgsStorageAddr(t *testing.T) {
	cr := sample(nil)
	if args := Args(cr, Options{}); slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--storage-addr") }) {
		t.Errorf("args %v name a storage address although none is configured", args)
	}
	want := "--storage-addr=tandem-controller.tandem.svc:6877"
	if args := Args(cr, Options{StorageAddr: "tandem-controller.tandem.svc:6877"}); !slices.Contains(args, want) {
		t.Errorf("args %v lack %s", args, want)
	}
}
