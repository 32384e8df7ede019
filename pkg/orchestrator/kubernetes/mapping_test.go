package kubernetes

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/render"
	"github.com/tandemdb/tandem/pkg/orchestrator"
)

func id(c, r string) orchestrator.ReplicaID { return orchestrator.ReplicaID{Cluster: c, Replica: r} }

func TestLabelsAgreeWithOperator(t *testing.T) {
	if LabelCluster != render.LabelCluster {
		t.Errorf("LabelCluster %q, operator uses %q", LabelCluster, render.LabelCluster)
	}
	if LabelReplicaName == render.LabelReplica {
		t.Errorf("LabelReplicaName must differ from the operator's %q (which carries the object name)", render.LabelReplica)
	}
}

func TestObjectName(t *testing.T) {
	tests := []struct {
		id      orchestrator.ReplicaID
		want    string
		wantErr string
	}{
		{id("default", "r1"), "default-r1", ""},
		{id("prod", "a-b"), "prod-a-b", ""},
		{id("Prod", "r1"), "", "a DNS-1035 label"},
		{id("prod", "r_1"), "", "a DNS-1035 label"},
		{id("1prod", "r1"), "", "a DNS-1035 label"},
		{id("c", strings.Repeat("r", 51)), "", "longer than 52"},
		{id("c", strings.Repeat("r", 50)), "c-" + strings.Repeat("r", 50), ""},
	}
	for _, tc := range tests {
		got, err := ObjectName(tc.id)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ObjectName(%s) = %q, %v; want error containing %q", tc.id, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ObjectName(%s) = %q, %v; want %q", tc.id, got, err, tc.want)
		}
	}
}

func TestReplicaIDOf(t *testing.T) {
	mk := func(name, cluster string, labels map[string]string) *v1alpha1.ComputeReplica {
		return &v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: v1alpha1.ComputeReplicaSpec{ClusterName: cluster}}
	}
	tests := []struct {
		cr   *v1alpha1.ComputeReplica
		want orchestrator.ReplicaID
	}{
		{mk("prod-r1", "prod", nil), id("prod", "r1")},
		{mk("quickstart-r1", "quickstart", nil), id("quickstart", "r1")},
		{mk("blue", "prod", nil), id("prod", "blue")},
		{mk("prod-r1", "prod", map[string]string{LabelReplicaName: "main"}), id("prod", "main")},
		{mk("prod-r1", "prodx", nil), id("prodx", "prod-r1")},
	}
	for _, tc := range tests {
		if got := ReplicaIDOf(tc.cr); got != tc.want {
			t.Errorf("ReplicaIDOf(%s, cluster %s, %v) = %s, want %s", tc.cr.Name, tc.cr.Spec.ClusterName, tc.cr.Labels, got, tc.want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDesiredObject(t *testing.T) {
	tmpl := ReplicaTemplate{Image: "tandem/replica:1", ImagePullPolicy: corev1.PullAlways,
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}
	cfg := orchestrator.ReplicaConfig{ID: id("prod", "r1"), Processes: 2, Workers: 4, Interactive: true, LogLevel: "debug"}
	u, err := DesiredObject("ns", "ctl", tmpl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"apiVersion":"compute.tandem.dev/v1alpha1","kind":"ComputeReplica",` +
		`"metadata":{"labels":{"compute.tandem.dev/cluster":"prod","compute.tandem.dev/managed-by":"ctl","compute.tandem.dev/replica-name":"r1"},"name":"prod-r1","namespace":"ns"},` +
		`"spec":{"clusterName":"prod","image":"tandem/replica:1","imagePullPolicy":"Always","interactiveRuntime":true,"logLevel":"debug","processes":2,"resources":{"requests":{"cpu":"500m"}},"workers":4}}`
	if got := mustJSON(t, u.Object); got != want {
		t.Errorf("desired object\n got %s\nwant %s", got, want)
	}

	// Interactive off is written explicitly, so the controller keeps owning the field and
	// flipping the flag back is an apply of the same field; no resources means none owned.
	cfg.Interactive, cfg.LogLevel = false, ""
	u, err = DesiredObject("ns", "ctl", ReplicaTemplate{Image: "img"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want = `{"clusterName":"prod","image":"img","interactiveRuntime":false,"processes":2,"workers":4}`
	if got := mustJSON(t, u.Object["spec"]); got != want {
		t.Errorf("spec\n got %s\nwant %s", got, want)
	}

	bad := []struct {
		name string
		tmpl ReplicaTemplate
		cfg  orchestrator.ReplicaConfig
		want string
	}{
		{"no image", ReplicaTemplate{}, orchestrator.ReplicaConfig{ID: id("c", "r"), Processes: 1, Workers: 1}, "no replica image"},
		{"bad log level", tmpl, orchestrator.ReplicaConfig{ID: id("c", "r"), Processes: 1, Workers: 1, LogLevel: "trace"}, `log level "trace"`},
		{"no processes", tmpl, orchestrator.ReplicaConfig{ID: id("c", "r"), Workers: 1}, "processes must be >= 1"},
		{"bad name", tmpl, orchestrator.ReplicaConfig{ID: id("C", "r"), Processes: 1, Workers: 1}, "DNS-1035"},
	}
	for _, tc := range bad {
		if _, err := DesiredObject("ns", "ctl", tc.tmpl, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestAdoptionObject(t *testing.T) {
	cr := &v1alpha1.ComputeReplica{
		ObjectMeta: metav1.ObjectMeta{Name: "blue", Namespace: "ns", UID: "u-1", Labels: map[string]string{"team": "x"}},
		Spec:       v1alpha1.ComputeReplicaSpec{ClusterName: "prod", Processes: 3, Workers: 2, Image: "user-image"},
	}
	u := AdoptionObject(cr, "ctl", nil)
	want := `{"apiVersion":"compute.tandem.dev/v1alpha1","kind":"ComputeReplica","metadata":{` +
		`"annotations":{"compute.tandem.dev/adopted-by":"ctl"},` +
		`"labels":{"compute.tandem.dev/cluster":"prod","compute.tandem.dev/managed-by":"ctl","compute.tandem.dev/replica-name":"blue"},` +
		`"name":"blue","namespace":"ns","uid":"u-1"}}`
	if got := mustJSON(t, u.Object); got != want {
		t.Errorf("adoption object\n got %s\nwant %s", got, want)
	}
	on := true
	u = AdoptionObject(cr, "ctl", &on)
	if got := mustJSON(t, u.Object["spec"]); got != `{"interactiveRuntime":true}` {
		t.Errorf("adoption spec %s: only interactiveRuntime may be owned", got)
	}
}

func TestIsAdoptedAndShape(t *testing.T) {
	created := &v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Name: "prod-r1",
		Labels: map[string]string{v1alpha1.LabelManagedBy: "ctl"}}, Spec: v1alpha1.ComputeReplicaSpec{ClusterName: "prod", Processes: 2, Workers: 4}}
	adopted := created.DeepCopy()
	adopted.Annotations = map[string]string{AnnotationAdoptedBy: "ctl"}
	user := created.DeepCopy()
	user.Labels = nil
	for _, tc := range []struct {
		cr      *v1alpha1.ComputeReplica
		managed bool
		adopted bool
	}{{created, true, false}, {adopted, true, true}, {user, false, true}} {
		if got := IsManagedBy(tc.cr, "ctl"); got != tc.managed {
			t.Errorf("%v %v: managed %v", tc.cr.Labels, tc.cr.Annotations, got)
		}
		if got := IsAdopted(tc.cr, "ctl"); got != tc.adopted {
			t.Errorf("%v %v: adopted %v", tc.cr.Labels, tc.cr.Annotations, got)
		}
	}
	if IsManagedBy(created, "other") {
		t.Error("managed by another controller name")
	}
	ok := orchestrator.ReplicaConfig{ID: id("prod", "r1"), Processes: 2, Workers: 4, Interactive: true}
	if err := CheckAdoptedShape(adopted, ok); err != nil {
		t.Errorf("matching shape: %v", err)
	}
	resized := ok
	resized.Processes = 3
	if err := CheckAdoptedShape(adopted, resized); err == nil || !strings.Contains(err.Error(), "2 processes x 4 workers") {
		t.Errorf("resized: %v", err)
	}
	other := ok
	other.ID = id("prod", "r2")
	if err := CheckAdoptedShape(adopted, other); err == nil {
		t.Error("another replica's config was accepted")
	}
}

func TestStatusOf(t *testing.T) {
	base := func() *v1alpha1.ComputeReplica {
		return &v1alpha1.ComputeReplica{
			ObjectMeta: metav1.ObjectMeta{Name: "prod-r1"},
			Spec: v1alpha1.ComputeReplicaSpec{ClusterName: "prod", Processes: 2, Workers: 4, LogLevel: "info",
				InteractiveRuntime: true, Ports: v1alpha1.Ports{Computectl: 2100, InternalHTTP: 6878}},
			Status: v1alpha1.ComputeReplicaStatus{ReadyProcesses: 2,
				ComputectlAddresses: []string{"prod-r1-0.prod-r1.ns.svc:2100", "prod-r1-1.prod-r1.ns.svc:2100"}},
		}
	}
	now := metav1.Now()
	tests := []struct {
		name  string
		mut   func(*v1alpha1.ComputeReplica)
		state orchestrator.ProcessState
		addrs []string
	}{
		{"ready", func(*v1alpha1.ComputeReplica) {}, orchestrator.ProcessRunning,
			[]string{"prod-r1-0.prod-r1.ns.svc:2100", "prod-r1-1.prod-r1.ns.svc:2100"}},
		{"one not ready", func(cr *v1alpha1.ComputeReplica) { cr.Status.ReadyProcesses = 1 }, orchestrator.ProcessStarting,
			[]string{"prod-r1-0.prod-r1.ns.svc:2100", "prod-r1-1.prod-r1.ns.svc:2100"}},
		{"not yet published", func(cr *v1alpha1.ComputeReplica) { cr.Status = v1alpha1.ComputeReplicaStatus{} },
			orchestrator.ProcessStarting, []string{"", ""}},
		{"scaled, stale addresses", func(cr *v1alpha1.ComputeReplica) { cr.Spec.Processes = 3 },
			orchestrator.ProcessStarting, []string{"", "", ""}},
		{"deleting", func(cr *v1alpha1.ComputeReplica) { cr.DeletionTimestamp = &now }, orchestrator.ProcessStopped,
			[]string{"prod-r1-0.prod-r1.ns.svc:2100", "prod-r1-1.prod-r1.ns.svc:2100"}},
	}
	for _, tc := range tests {
		cr := base()
		tc.mut(cr)
		st := StatusOf(cr)
		if got := st.ComputeCtlAddrs(); !reflect.DeepEqual(got, tc.addrs) {
			t.Errorf("%s: addresses %q, want %q", tc.name, got, tc.addrs)
		}
		for i, p := range st.Processes {
			if p.State != tc.state || p.Index != i {
				t.Errorf("%s: process %d = %+v, want state %s", tc.name, i, p, tc.state)
			}
		}
		wantCfg := orchestrator.ReplicaConfig{ID: id("prod", "r1"), Processes: int(cr.Spec.Processes), Workers: 4, Interactive: true, LogLevel: "info"}
		if st.Config != wantCfg {
			t.Errorf("%s: config %+v, want %+v", tc.name, st.Config, wantCfg)
		}
	}
	if got := StatusOf(base()).Processes[1].InternalHTTPAddr; got != "prod-r1-1.prod-r1.ns.svc:6878" {
		t.Errorf("internal http address %q", got)
	}
}

func TestHydratedGeneration(t *testing.T) {
	hydrated := func(gen int64) []metav1.Condition {
		return []metav1.Condition{{Type: v1alpha1.ConditionHydrated, Status: metav1.ConditionTrue, ObservedGeneration: gen}}
	}
	tests := []struct {
		name   string
		gen    int64
		status v1alpha1.ComputeReplicaStatus
		want   int64
	}{
		{"pods run the current template", 3, v1alpha1.ComputeReplicaStatus{ObservedGeneration: 3, CurrentHash: "h2", UpdateHash: "h2"}, 3},
		{"operator has not seen the spec", 3, v1alpha1.ComputeReplicaStatus{ObservedGeneration: 2, CurrentHash: "h1", UpdateHash: "h1", Conditions: hydrated(2)}, 2},
		{"old pods still run", 3, v1alpha1.ComputeReplicaStatus{ObservedGeneration: 3, CurrentHash: "h1", UpdateHash: "h2", Conditions: hydrated(2)}, 2},
		{"no pods", 3, v1alpha1.ComputeReplicaStatus{ObservedGeneration: 3, UpdateHash: "h2", Conditions: hydrated(2)}, 2},
		{"never hydrated, pods rolling", 3, v1alpha1.ComputeReplicaStatus{ObservedGeneration: 3, CurrentHash: "h1", UpdateHash: "h2"}, 0},
		{"no hashes yet", 1, v1alpha1.ComputeReplicaStatus{ObservedGeneration: 1}, 0},
	}
	for _, tc := range tests {
		cr := &v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Generation: tc.gen}, Status: tc.status}
		if got := HydratedGeneration(cr); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestHydratedCondition(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	cr := &v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Generation: 2},
		Status: v1alpha1.ComputeReplicaStatus{ObservedGeneration: 2, CurrentHash: "h", UpdateHash: "h"}}
	c := HydratedCondition(cr, false, "Connecting", "waiting", t0)
	if c.Status != metav1.ConditionFalse || !c.LastTransitionTime.Time.Equal(t0) || c.ObservedGeneration != 2 || c.Reason != "Connecting" {
		t.Errorf("first condition %+v", c)
	}
	cr.Status.Conditions = []metav1.Condition{c}
	same := HydratedCondition(cr, false, "Hydrating", "2 of 3 caught up", t1)
	if !same.LastTransitionTime.Time.Equal(t0) || same.Message != "2 of 3 caught up" {
		t.Errorf("unchanged status moved the transition time: %+v", same)
	}
	flipped := HydratedCondition(cr, true, "CaughtUp", "all caught up", t1)
	if flipped.Status != metav1.ConditionTrue || !flipped.LastTransitionTime.Time.Equal(t1) {
		t.Errorf("flipped condition %+v", flipped)
	}
	cr.Name, cr.Namespace, cr.UID = "prod-r1", "ns", "u-1"
	u, err := HydratedStatusObject(cr, flipped)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"apiVersion":"compute.tandem.dev/v1alpha1","kind":"ComputeReplica","metadata":{"name":"prod-r1","namespace":"ns","uid":"u-1"},` +
		`"status":{"conditions":[{"lastTransitionTime":"2026-01-01T00:01:00Z","message":"all caught up","observedGeneration":2,"reason":"CaughtUp","status":"True","type":"Hydrated"}]}}`
	if got := mustJSON(t, u.Object); got != want {
		t.Errorf("status object\n got %s\nwant %s", got, want)
	}
}

func TestHydratedUpToDate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	written := metav1.Condition{Type: v1alpha1.ConditionHydrated, Status: metav1.ConditionTrue, Reason: "Hydrated",
		Message: "all 2 maintained collections hydrated", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(t0)}
	rolled := func(gen int64) *v1alpha1.ComputeReplica {
		return &v1alpha1.ComputeReplica{ObjectMeta: metav1.ObjectMeta{Generation: gen},
			Status: v1alpha1.ComputeReplicaStatus{ObservedGeneration: gen, CurrentHash: "h", UpdateHash: "h",
				Conditions: []metav1.Condition{written}}}
	}
	tests := []struct {
		name     string
		cr       *v1alpha1.ComputeReplica
		hydrated bool
		reason   string
		message  string
		want     bool
	}{
		{"same report, same generation", rolled(2), true, "Hydrated", written.Message, true},
		{"same report, new pods of a newer generation", rolled(3), true, "Hydrated", written.Message, false},
		{"status flips", rolled(2), false, "NotConnected", "gone", false},
		{"reason changes", rolled(2), true, "CaughtUp", written.Message, false},
		{"message changes", rolled(2), true, "Hydrated", "all 3 maintained collections hydrated", false},
		{"no condition yet", &v1alpha1.ComputeReplica{}, false, "NotConnected", "", false},
	}
	for _, tc := range tests {
		c := HydratedCondition(tc.cr, tc.hydrated, tc.reason, tc.message, t0.Add(time.Hour))
		if got := HydratedUpToDate(tc.cr, c); got != tc.want {
			t.Errorf("%s: up to date = %v, want %v", tc.name, got, tc.want)
		}
	}
}
