//go:build k8s

package tests

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestHostKubeletRewritesOnlyAddressesAndMounts: the host kubelet changes an argument only
// where it is an address (a listen port to the pod's loopback address for it, a cluster name
// to the address its pod or Service leads to) or a path under a mount (to the same path under
// the mount's directory, the deepest mount winning); every other argument is passed as
// rendered, and an address it cannot place is an error, never passed on unchanged.
func TestHostKubeletRewritesOnlyAddressesAndMounts(t *testing.T) {
	svc := corev1.Service{}
	svc.Name = "ctl"
	svc.Spec.Selector = map[string]string{"app": "ctl"}
	svc.Spec.Ports = []corev1.ServicePort{{Name: "storage", Port: 6877, TargetPort: intstr.FromString("storage")}}
	hn := newHostNet("ns", []corev1.Service{svc})
	ctl, err := hn.addPod("ctl-0", map[string]string{"app": "ctl"}, corev1.PodSpec{Containers: []corev1.Container{{
		Ports: []corev1.ContainerPort{{Name: "pgwire", ContainerPort: 6875}, {Name: "storage", ContainerPort: 6877}}}}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := hn.addPod("r-0", nil, corev1.PodSpec{Containers: []corev1.Container{{
		Ports: []corev1.ContainerPort{{Name: "compute", ContainerPort: 2101}}}}})
	if err != nil {
		t.Fatal(err)
	}
	k := &hostKubelet{net: hn}
	mounts := map[string]string{"/etc/tandem": "/host/etc", "/etc/tandem/tls": "/host/tls"}
	tests := []struct {
		pod   *hostPod
		arg   string
		dials bool
		want  string // "" means an error
	}{
		{ctl, "--log-level=info", true, "--log-level=info"},
		{ctl, "--require-tls", true, "--require-tls"},
		{ctl, "--internal-tls-cert-validity=2160h", true, "--internal-tls-cert-validity=2160h"},
		{ctl, "--pgwire-listen-addr=:6875", true, "--pgwire-listen-addr=" + ctl.addrs[6875]},
		{ctl, "--http-listen-addr=:6876", true, ""}, // no container declares 6876
		{ctl, "--tls-cert=/etc/tandem/tls/tls.crt", true, "--tls-cert=/host/tls/tls.crt"},
		{ctl, "--ca=/etc/tandem/ca.crt", true, "--ca=/host/etc/ca.crt"},
		{ctl, "--data-dir=/etc/tandemx", true, "--data-dir=/etc/tandemx"},
		{rep, "--storage-addr=ctl.ns.svc:6877", true, "--storage-addr=" + ctl.addrs[6877]},
		{rep, "--storage-addr=ctl.ns.svc.cluster.local:6877", true, "--storage-addr=" + ctl.addrs[6877]},
		{rep, "--storage-addr=ctl.ns.svc:6877", false, "--storage-addr=ctl.ns.svc:6877"},
		{rep, "--compute-peers=r-0.r.ns.svc:2101,r-0.r.ns.svc:2101", true, "--compute-peers=" + rep.addrs[2101] + "," + rep.addrs[2101]},
		{rep, "--compute-peers=r-1.r.ns.svc:2101", true, ""}, // no such pod
		{rep, "--storage-addr=ctl.other.svc:6877", true, ""}, // another namespace
		{rep, "--storage-addr=ctl.ns.svc:9999", true, ""},    // no such Service port
		{rep, "--storage-addr=example.com:6877", true, ""},   // not a cluster name
		{rep, "--storage-addr=ctl.ns.svcfoo:6877", true, ""}, // not the namespace's suffix
	}
	for _, tt := range tests {
		got, err := k.rewriteArg(tt.pod, tt.arg, mounts, tt.dials)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("%s %q (dials %v): %q, want an error", tt.pod.name, tt.arg, tt.dials, got)
		case tt.want != "" && (err != nil || got != tt.want):
			t.Errorf("%s %q (dials %v): %q, %v, want %q", tt.pod.name, tt.arg, tt.dials, got, err, tt.want)
		}
		if err == nil && tt.want != tt.arg && !strings.Contains(got, "127.0.0.1:") && !strings.Contains(got, "/host/") {
			t.Errorf("%q rewritten to %q, neither a loopback address nor a mount", tt.arg, got)
		}
	}
}
