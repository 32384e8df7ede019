package e2e

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tandemdb/tandem/operator/render"
)

// These tests need no cluster: they check how the host-pod harness maps pod names to
// processes and judges a cluster's availability, from hand-made state.

func hostTestPod(name, replica, cluster string, uid types.UID) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "reads", UID: uid,
			Labels: map[string]string{render.LabelReplica: replica, render.LabelCluster: cluster}},
		Spec: corev1.PodSpec{NodeName: "sim-node-0", Containers: []corev1.Container{{
			Name:  render.ContainerName,
			Args:  []string{"--controller-listen-addr=:2100", "--workers=2", "--compute-peers=a-0.a.reads.svc:2101"},
			Ports: []corev1.ContainerPort{{Name: render.PortComputectl, ContainerPort: 2100}},
		}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

func TestHostPodsResolve(t *testing.T) {
	h := &hostPods{namespace: "reads", pods: map[string]*corev1.Pod{
		"a-0": hostTestPod("a-0", "a", "c", "uid-a0"),
		"b-0": hostTestPod("b-0", "b", "c", "uid-b0-new"), // replaced since its process started
		"d-0": hostTestPod("d-0", "d", "c", "uid-d0"),     // no process
	}, incs: map[string]*incarnation{
		"a": {pods: []types.UID{"uid-a0"}, procs: []*hostProcess{{pod: "a-0", ctlAddr: "127.0.0.1:4000"}}},
		"b": {pods: []types.UID{"uid-b0-old"}, procs: []*hostProcess{{pod: "b-0", ctlAddr: "127.0.0.1:4001"}}},
	}}
	tests := []struct {
		addr, want, wantErr string
	}{
		{addr: "a-0.a.reads.svc:2100", want: "127.0.0.1:4000"},
		{addr: "a-0.a.reads.svc.cluster.local:2100", want: "127.0.0.1:4000"},
		{addr: "a-0.a.reads.svc:2101", wantErr: "not its computectl port"},
		{addr: "a-0.a.other.svc:2100", wantErr: "not a pod of namespace reads"},
		{addr: "b-0.b.reads.svc:2100", wantErr: "runs no process"},
		{addr: "d-0.d.reads.svc:2100", wantErr: "runs no process"},
		{addr: "x-0.x.reads.svc:2100", wantErr: "no pod x-0"},
		{addr: "a-0.a.reads.svc", wantErr: "missing port"},
	}
	for _, tt := range tests {
		got, err := h.resolve(tt.addr)
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("resolve(%s) = %q, %v; want an error with %q", tt.addr, got, err, tt.wantErr)
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("resolve(%s) = %q, %v; want %q", tt.addr, got, err, tt.want)
		}
	}
}

func TestHostPodsClusterOutages(t *testing.T) {
	tests := []struct {
		name    string
		served  bool     // the cluster had two replicas running at once
		running []string // replicas with processes when "a" ends
		want    int
	}{
		{name: "a peer still runs", served: true, running: []string{"b"}, want: 0},
		{name: "the last one ends", served: true, running: nil, want: 1},
		{name: "never had two replicas", served: false, running: nil, want: 0},
		{name: "a replica of another cluster does not count", served: true, running: []string{"other"}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &hostPods{incs: map[string]*incarnation{}, served: map[string]bool{"c": tt.served},
				clusterOf: map[string]string{"a": "c", "b": "c", "other": "elsewhere"}}
			for _, r := range tt.running {
				h.incs[r] = &incarnation{}
			}
			h.checkClusterLocked("a")
			if got := h.clusterOutages(); len(got) != tt.want {
				t.Errorf("outages %v, want %d", got, tt.want)
			}
		})
	}
}

func TestPodArgs(t *testing.T) {
	p := hostTestPod("a-0", "a", "c", "u")
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "sidecar", Args: []string{"--workers=9"}})
	args := podArgs(p)
	if args["--workers"] != "2" || len(splitList(args["--compute-peers"])) != 1 {
		t.Errorf("podArgs = %v: want the replica container's --workers=2 and one peer", args)
	}
	if _, ok := args["--interactive-peers"]; ok {
		t.Errorf("podArgs = %v: no --interactive-peers was given", args)
	}
	if got := containerPort(p, render.PortComputectl); got != "2100" {
		t.Errorf("computectl port %q, want 2100", got)
	}
	if !live(p) {
		t.Error("a bound Running pod is live")
	}
	gone := p.DeepCopy()
	gone.DeletionTimestamp = &metav1.Time{}
	if live(gone) || live(nil) {
		t.Error("a pod marked for deletion, or none, is not live")
	}
	if got := splitList(""); !slices.Equal(got, nil) {
		t.Errorf("splitList(\"\") = %v", got)
	}
}
