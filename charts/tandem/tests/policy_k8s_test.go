//go:build k8s

package tests

import (
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// rendered is the objects of one `helm template`, by kind.
type rendered struct {
	policies     map[string]networkingv1.NetworkPolicy // by namespace/name
	roles        []rbacv1.Role
	clusterRoles []rbacv1.ClusterRole
	deployments  []appsv1.Deployment
	statefulSets []appsv1.StatefulSet
	services     []corev1.Service
	crds         []*apiextensionsv1.CustomResourceDefinition
}

func render(t *testing.T, set ...string) rendered {
	t.Helper()
	args := append([]string{"template", "tandem", "..", "--namespace", "tandem", "--kube-version", "1.37.2"}, set...)
	out, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	r := rendered{policies: map[string]networkingv1.NetworkPolicy{}}
	for _, doc := range strings.Split(out, "\n---\n") {
		var head struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("parse rendered document: %v\n%s", err, doc)
		}
		switch head.Kind {
		case "NetworkPolicy":
			var np networkingv1.NetworkPolicy
			mustUnmarshal(t, doc, &np)
			r.policies[np.Namespace+"/"+np.Name] = np
		case "Role":
			var role rbacv1.Role
			mustUnmarshal(t, doc, &role)
			r.roles = append(r.roles, role)
		case "ClusterRole":
			var role rbacv1.ClusterRole
			mustUnmarshal(t, doc, &role)
			r.clusterRoles = append(r.clusterRoles, role)
		case "Deployment":
			var d appsv1.Deployment
			mustUnmarshal(t, doc, &d)
			r.deployments = append(r.deployments, d)
		case "StatefulSet":
			var s appsv1.StatefulSet
			mustUnmarshal(t, doc, &s)
			r.statefulSets = append(r.statefulSets, s)
		case "Service":
			var s corev1.Service
			mustUnmarshal(t, doc, &s)
			r.services = append(r.services, s)
		case "CustomResourceDefinition":
			var crd apiextensionsv1.CustomResourceDefinition
			mustUnmarshal(t, doc, &crd)
			r.crds = append(r.crds, &crd)
		}
	}
	return r
}

func mustUnmarshal(t *testing.T, doc string, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
		t.Fatalf("parse rendered document: %v\n%s", err, doc)
	}
}

// peersOf returns the peers allowed to reach port on the pods of np, and whether some rule
// admits every source to it.
func peersOf(np networkingv1.NetworkPolicy, port string) (peers []networkingv1.NetworkPolicyPeer, anyone bool) {
	for _, rule := range np.Spec.Ingress {
		covers := len(rule.Ports) == 0
		for _, p := range rule.Ports {
			if p.Port == nil || p.Port.String() == port {
				covers = true
			}
		}
		if !covers {
			continue
		}
		if len(rule.From) == 0 {
			anyone = true
		}
		peers = append(peers, rule.From...)
	}
	return peers, anyone
}

func peerString(p networkingv1.NetworkPolicyPeer) string {
	var parts []string
	if p.NamespaceSelector != nil {
		parts = append(parts, "ns"+labelString(p.NamespaceSelector.MatchLabels))
	}
	if p.PodSelector != nil {
		parts = append(parts, "pod"+labelString(p.PodSelector.MatchLabels))
	}
	if p.IPBlock != nil {
		parts = append(parts, "ip:"+p.IPBlock.CIDR)
	}
	return strings.Join(parts, "+")
}

// labelString prints labels as {k:v k:v}, sorted by key.
func labelString(labels map[string]string) string {
	keys := slices.Sorted(maps.Keys(labels))
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+":"+labels[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func peerStrings(ps []networkingv1.NetworkPolicyPeer) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, peerString(p))
	}
	slices.Sort(out)
	return out
}

const (
	controllerPeer = "ns{kubernetes.io/metadata.name:tandem}+pod{app.kubernetes.io/component:controller app.kubernetes.io/instance:tandem}"
	replicaPodPeer = "pod{app.kubernetes.io/managed-by:tandem-operator app.kubernetes.io/name:tandem-replica}"
	releaseNSPeer  = "ns{kubernetes.io/metadata.name:tandem}"
	prometheusPeer = "ns{kubernetes.io/metadata.name:monitoring}+pod{app.kubernetes.io/name:prometheus}"
)

// TestNetworkPolicyFlows checks that the NetworkPolicies are on by default and admit, port by
// port, exactly the flows of the design and nothing from anywhere but pgwire.
func TestNetworkPolicyFlows(t *testing.T) {
	type flow struct {
		policy, port string
		peers        []string // sorted
		anyone       bool
	}
	tests := []struct {
		name  string
		set   []string
		flows []flow
	}{
		{
			name: "default",
			flows: []flow{
				{"tandem/tandem-replicas", "computectl", []string{controllerPeer}, false},
				{"tandem/tandem-replicas", "peek-lane", []string{controllerPeer}, false},
				{"tandem/tandem-replicas", "compute", []string{replicaPodPeer}, false},
				{"tandem/tandem-replicas", "interactive", []string{replicaPodPeer}, false},
				{"tandem/tandem-replicas", "internal-http", []string{releaseNSPeer}, false},
				{"tandem/tandem-controller", "pgwire", nil, true},
				{"tandem/tandem-controller", "storage", []string{"ns{kubernetes.io/metadata.name:tandem}+" + replicaPodPeer}, false},
				{"tandem/tandem-controller", "http", []string{releaseNSPeer}, false},
				{"tandem/tandem-operator", "metrics", []string{releaseNSPeer}, false},
			},
		},
		{
			name: "all-enabled",
			set:  []string{"-f", "testdata/all-enabled.values.yaml"},
			flows: []flow{
				{"team-a/tandem-replicas", "computectl", []string{controllerPeer}, false},
				{"team-a/tandem-replicas", "peek-lane", []string{controllerPeer}, false},
				{"team-a/tandem-replicas", "compute", []string{replicaPodPeer}, false},
				{"team-a/tandem-replicas", "internal-http", []string{prometheusPeer}, false},
				{"tandem/tandem-replicas", "interactive", []string{replicaPodPeer}, false},
				{"tandem/tandem-controller", "pgwire", []string{"ip:10.0.0.0/8"}, false},
				{"tandem/tandem-controller", "storage", []string{
					"ns{kubernetes.io/metadata.name:tandem}+" + replicaPodPeer,
					"ns{kubernetes.io/metadata.name:team-a}+" + replicaPodPeer,
				}, false},
				{"tandem/tandem-controller", "http", []string{prometheusPeer}, false},
				{"tandem/tandem-operator", "metrics", []string{prometheusPeer}, false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := render(t, tt.set...)
			for _, f := range tt.flows {
				np, ok := r.policies[f.policy]
				if !ok {
					t.Fatalf("no NetworkPolicy %s rendered (have %d)", f.policy, len(r.policies))
				}
				if np.Spec.PodSelector.MatchLabels == nil || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
					t.Errorf("%s: selects no pods or does not restrict ingress", f.policy)
				}
				peers, anyone := peersOf(np, f.port)
				if got := peerStrings(peers); anyone != f.anyone || !slices.Equal(got, f.peers) {
					t.Errorf("%s port %s: admits %v (anyone: %t), want %v (anyone: %t)", f.policy, f.port, got, anyone, f.peers, f.anyone)
				}
			}
		})
	}
	t.Run("disabled", func(t *testing.T) {
		if r := render(t, "--set", "networkPolicy.enabled=false"); len(r.policies) != 0 {
			t.Errorf("networkPolicy.enabled=false rendered %d NetworkPolicies", len(r.policies))
		}
	})
}

var writeVerbs = []string{"create", "update", "patch", "delete", "*"}

// grants reports whether rules allow some write verb on resource.
func grants(rules []rbacv1.PolicyRule, resource string) bool {
	for _, r := range rules {
		if !slices.Contains(r.Resources, resource) && !slices.Contains(r.Resources, "*") {
			continue
		}
		for _, v := range r.Verbs {
			if slices.Contains(writeVerbs, v) {
				return true
			}
		}
	}
	return false
}

// TestOperatorRBACScope checks that with watchNamespaces the operator's writes on leases and
// on the replicas' objects are granted by Roles in the right namespaces, never by a ClusterRole;
// without it, the ClusterRole grants them.
func TestOperatorRBACScope(t *testing.T) {
	namespacedWrites := []string{"statefulsets", "services", "poddisruptionbudgets", "pods", "events", "computereplicas/status"}
	t.Run("all namespaces", func(t *testing.T) {
		r := render(t)
		op := clusterRole(t, r, "tandem-operator")
		for _, res := range append(namespacedWrites, "leases") {
			if !grants(op.Rules, res) {
				t.Errorf("ClusterRole tandem-operator does not grant writes on %s", res)
			}
		}
	})
	t.Run("watchNamespaces", func(t *testing.T) {
		r := render(t, "--set", "operator.watchNamespaces={team-a,team-b}")
		for _, cr := range r.clusterRoles {
			for _, res := range append(namespacedWrites, "leases") {
				if grants(cr.Rules, res) {
					t.Errorf("ClusterRole %s grants writes on %s cluster-wide although watchNamespaces is set", cr.Name, res)
				}
			}
		}
		for _, ns := range []string{"team-a", "team-b"} {
			role := role(t, r, ns, "tandem-operator")
			for _, res := range namespacedWrites {
				if !grants(role.Rules, res) {
					t.Errorf("Role %s/%s does not grant writes on %s", ns, role.Name, res)
				}
			}
			if grants(role.Rules, "leases") {
				t.Errorf("Role %s/%s grants leases outside the leader-election namespace", ns, role.Name)
			}
		}
		if le := role(t, r, "tandem", "tandem-operator-leader-election"); !grants(le.Rules, "leases") {
			t.Errorf("leader-election Role does not grant writes on leases")
		}
		if op := clusterRole(t, r, "tandem-operator"); !slices.ContainsFunc(op.Rules, func(p rbacv1.PolicyRule) bool {
			return slices.Contains(p.Resources, "nodes")
		}) {
			t.Errorf("ClusterRole tandem-operator lost the read on nodes: %+v", op.Rules)
		}
	})
}

func clusterRole(t *testing.T, r rendered, name string) rbacv1.ClusterRole {
	t.Helper()
	for _, cr := range r.clusterRoles {
		if cr.Name == name {
			return cr
		}
	}
	t.Fatalf("no ClusterRole %s rendered", name)
	return rbacv1.ClusterRole{}
}

func role(t *testing.T, r rendered, ns, name string) rbacv1.Role {
	t.Helper()
	for _, role := range r.roles {
		if role.Namespace == ns && role.Name == name {
			return role
		}
	}
	t.Fatalf("no Role %s/%s rendered", ns, name)
	return rbacv1.Role{}
}
