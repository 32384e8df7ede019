//go:build k8s

package tests

import (
	"path"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// argValue is the value of --name=value in args, and whether it is there.
func argValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if a == name {
			return "", true
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// mountOf is the directory where container c mounts the volume of Secret
// secret, or "".
func mountOf(spec corev1.PodSpec, c corev1.Container, secret string) string {
	for _, v := range spec.Volumes {
		if v.Secret == nil || v.Secret.SecretName != secret {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name && m.SubPath == "" {
				return m.MountPath
			}
		}
	}
	return ""
}

// TestInternalTLSWiring: with internalTLS on (the default) the operator is
// told to issue the controller's Secret, and the controller's pod mounts
// that very Secret (not through subPath, so rotations reach it) and passes
// its three files; the operator may write Secrets where it keeps them.
// With internalTLS off, neither.
func TestInternalTLSWiring(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  []string
		on   bool
	}{
		{"default", nil, true},
		{"watched namespaces", []string{"-f", "testdata/all-enabled.values.yaml"}, true},
		{"off", []string{"--set", "internalTLS.enabled=false"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := render(t, tc.set...)
			if len(r.deployments) != 1 || len(r.statefulSets) != 1 {
				t.Fatalf("%d deployments, %d statefulsets", len(r.deployments), len(r.statefulSets))
			}
			op := r.deployments[0].Spec.Template.Spec.Containers[0]
			ctlPod := r.statefulSets[0].Spec.Template.Spec
			ctl := ctlPod.Containers[0]
			_, opOn := argValue(op.Args, "--internal-tls")
			_, ctlOn := argValue(ctl.Args, "--internal-tls-cert")
			if opOn != tc.on || ctlOn != tc.on {
				t.Fatalf("operator internal TLS %v, controller %v, want %v", opOn, ctlOn, tc.on)
			}
			if !tc.on {
				if canReadSecrets(r) {
					t.Error("the operator may read secrets without internal TLS")
				}
				return
			}
			secret, ok := argValue(op.Args, "--internal-tls-controller-secret")
			if !ok || secret == "" {
				t.Fatalf("the operator issues no controller secret: %v", op.Args)
			}
			ns, _ := argValue(op.Args, "--internal-tls-namespace")
			if ns != r.statefulSets[0].Namespace {
				t.Errorf("secrets kept in %q, the controller runs in %q", ns, r.statefulSets[0].Namespace)
			}
			dir := mountOf(ctlPod, ctl, secret)
			if dir == "" {
				t.Fatalf("the controller does not mount secret %s: %+v %+v", secret, ctlPod.Volumes, ctl.VolumeMounts)
			}
			for flag, file := range map[string]string{"--internal-tls-ca": "ca.crt", "--internal-tls-cert": "tls.crt", "--internal-tls-key": "tls.key"} {
				if v, _ := argValue(ctl.Args, flag); v != path.Join(dir, file) {
					t.Errorf("controller %s=%q, want %s", flag, v, path.Join(dir, file))
				}
			}
			if !canWriteSecrets(r, ns) {
				t.Errorf("the operator may not create and update secrets in %s", ns)
			}
		})
	}
}

// canWriteSecrets says whether some rendered Role in ns, or ClusterRole,
// lets the operator create and update Secrets.
func canWriteSecrets(r rendered, ns string) bool {
	allows := func(rules []rbacv1.PolicyRule) bool {
		for _, rule := range rules {
			if slices.Contains(rule.Resources, "secrets") && slices.Contains(rule.Verbs, "create") && slices.Contains(rule.Verbs, "update") {
				return true
			}
		}
		return false
	}
	for _, role := range r.roles {
		if role.Namespace == ns && strings.Contains(role.Name, "operator") && allows(role.Rules) {
			return true
		}
	}
	for _, role := range r.clusterRoles {
		if strings.Contains(role.Name, "operator") && allows(role.Rules) {
			return true
		}
	}
	return false
}

// canReadSecrets says whether some rendered operator Role or ClusterRole mentions Secrets.
func canReadSecrets(r rendered) bool {
	var rules []rbacv1.PolicyRule
	for _, role := range r.roles {
		if strings.Contains(role.Name, "operator") {
			rules = append(rules, role.Rules...)
		}
	}
	for _, role := range r.clusterRoles {
		if strings.Contains(role.Name, "operator") {
			rules = append(rules, role.Rules...)
		}
	}
	for _, rule := range rules {
		if slices.Contains(rule.Resources, "secrets") {
			return true
		}
	}
	return false
}
