//go:build k8s

package tests

import (
	"slices"
	"strconv"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
)

// egressPeersOf returns the peers np lets its pods reach on port, and whether some rule lets
// them reach any address on it.
func egressPeersOf(np networkingv1.NetworkPolicy, port string) (peers []networkingv1.NetworkPolicyPeer, anywhere bool) {
	for _, rule := range np.Spec.Egress {
		covers := len(rule.Ports) == 0
		for _, p := range rule.Ports {
			if p.Port == nil || p.Port.String() == port {
				covers = true
			}
		}
		if !covers {
			continue
		}
		if len(rule.To) == 0 {
			anywhere = true
		}
		peers = append(peers, rule.To...)
	}
	return peers, anywhere
}

const dnsPeer = "ns{kubernetes.io/metadata.name:kube-system}+pod{k8s-app:kube-dns}"

// TestEgressPolicies: off by default; on, each component's pods may reach, port by port,
// exactly the peers of the design (name resolution, the API server for the operator and the
// controller, storage and the mesh for replicas, computectl and the peek lane for the controller) and nothing
// else, with the API server open to any address only when no peers are given.
func TestEgressPolicies(t *testing.T) {
	for name, np := range render(t).policies {
		if slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
			t.Errorf("policy %s restricts egress by default", name)
		}
	}
	apiPeer := "ip:10.96.0.1/32"
	replicasIn := func(ns string) string {
		return "ns{kubernetes.io/metadata.name:" + ns + "}+pod{app.kubernetes.io/managed-by:tandem-operator app.kubernetes.io/name:tandem-replica}"
	}
	allPorts := []string{"53", "443", "6443", "storage", "compute", "interactive", "computectl", "peek-lane", "pgwire", "http"}
	want := map[string]map[string][]string{ // policy -> port -> sorted peers
		"tandem/tandem-replicas-egress": {"53": {dnsPeer}, "storage": {controllerPeer}, "compute": {replicaPodPeer}, "interactive": {replicaPodPeer}},
		"team-a/tandem-replicas-egress": {"53": {dnsPeer}, "storage": {controllerPeer}, "compute": {replicaPodPeer}, "interactive": {replicaPodPeer}},
		"tandem/tandem-controller-egress": {"53": {dnsPeer}, "443": {apiPeer}, "6443": {apiPeer},
			"computectl": {replicasIn("tandem"), replicasIn("team-a")}, "peek-lane": {replicasIn("tandem"), replicasIn("team-a")}},
		"tandem/tandem-operator-egress": {"53": {dnsPeer}, "443": {apiPeer}, "6443": {apiPeer}},
	}
	r := render(t, "-f", "testdata/all-enabled.values.yaml")
	for policy, ports := range want {
		np, ok := r.policies[policy]
		if !ok {
			t.Errorf("no policy %s", policy)
			continue
		}
		if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}) {
			t.Errorf("%s: policy types %v, want Egress only", policy, np.Spec.PolicyTypes)
		}
		for _, port := range allPorts {
			peers, anywhere := egressPeersOf(np, port)
			if got := peerStrings(peers); anywhere || !slices.Equal(got, ports[port]) {
				t.Errorf("%s port %s: peers %v (anywhere %v), want %v", policy, port, got, anywhere, ports[port])
			}
		}
	}

	// Without API server peers, the API ports are open to any address, and only they.
	r = render(t, "--set", "networkPolicy.egress.enabled=true", "--set", "networkPolicy.egress.apiServer.ports={8443}")
	np := r.policies["tandem/tandem-operator-egress"]
	for _, port := range []int{443, 8443} {
		_, anywhere := egressPeersOf(np, strconv.Itoa(port))
		if anywhere != (port == 8443) {
			t.Errorf("operator egress to any address on %d: %v", port, anywhere)
		}
	}
}
