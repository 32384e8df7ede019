package reconciler

import (
	"crypto/tls"
	"crypto/x509"
	"path"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/certs"
	"github.com/tandemdb/tandem/operator/render"
)

// leafOf parses a leaf Secret, checks that it chains to its own bundle for
// certs.ServerName (as the replica will verify its peers), and returns the
// leaf.
func leafOf(t *testing.T, s *corev1.Secret, now time.Time) *x509.Certificate {
	t.Helper()
	pair, err := tls.X509KeyPair(s.Data[certs.KeyCert], s.Data[certs.KeyKey])
	if err != nil {
		t.Fatalf("secret %s: %v", s.Name, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.Data[certs.KeyCA]) {
		t.Fatalf("secret %s: no CA bundle", s.Name)
	}
	if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: certs.ServerName, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Fatalf("secret %s: the leaf does not verify against its bundle: %v", s.Name, err)
	}
	return pair.Leaf
}

// checkMounted fails unless the StatefulSet's pods mount secret and pass its
// three files to the replica.
func checkMounted(t *testing.T, sts *appsv1.StatefulSet, secret string) {
	t.Helper()
	spec := sts.Spec.Template.Spec
	volume := ""
	for _, v := range spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == secret {
			volume = v.Name
		}
	}
	if volume == "" {
		t.Fatalf("statefulset %s: no volume of secret %s: %+v", sts.Name, secret, spec.Volumes)
	}
	c := spec.Containers[0]
	dir := ""
	for _, m := range c.VolumeMounts {
		if m.Name == volume && m.SubPath == "" {
			dir = m.MountPath
		}
	}
	if dir == "" {
		t.Fatalf("statefulset %s: volume %s not mounted (or through subPath, which rotation does not reach): %+v", sts.Name, volume, c.VolumeMounts)
	}
	for flag, file := range map[string]string{"--internal-tls-ca": "ca.crt", "--internal-tls-cert": "tls.crt", "--internal-tls-key": "tls.key"} {
		want := flag + "=" + path.Join(dir, file)
		found := false
		for _, a := range c.Args {
			found = found || a == want
		}
		if !found {
			t.Errorf("statefulset %s: no argument %s in %v", sts.Name, want, c.Args)
		}
	}
}

// scenarioInternalTLS: with internal TLS on, a replica's first pass issues
// its Secret (owned by the replica, labelled, type kubernetes.io/tls, the
// leaf chaining to the CA Secret's authority) before its StatefulSet, whose
// pods mount it and pass its files; the controller's Secret chains to the
// same authority; passes before renewal write nothing; two thirds into the
// leaf's validity the next pass renews it (requeued for then) without
// touching the pod template, so nothing rolls; a deleted Secret is issued
// again.
func scenarioInternalTLS(t *testing.T, c client.Client) {
	const validity = 90 * time.Hour
	cl := newCluster(t, "sec", c)
	issuer := &certs.Issuer{Client: c, Reader: c, Clock: cl.clock, Namespace: cl.ns, CASecret: "tandem-internal-ca",
		ControllerSecret: "controller-internal-tls", LeafValidity: validity,
		Labels: map[string]string{render.LabelManagedBy: render.ManagerName}}
	cl.r.Render.InternalTLS, cl.r.TLS = true, issuer
	cr := &v1alpha1.ComputeReplica{
		ObjectMeta: metav1.ObjectMeta{Name: "sec-r1"},
		Spec:       v1alpha1.ComputeReplicaSpec{ClusterName: "sec", Image: "img", Processes: 2, Workers: 1},
	}
	cl.create(cr)
	res, err := cl.r.Reconcile(cl.ctx, ClusterRequest(cl.ns, "sec"))
	if err != nil {
		t.Fatal(err)
	}
	getSecret := func(name string) *corev1.Secret {
		t.Helper()
		var s corev1.Secret
		if err := c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: name}, &s); err != nil {
			t.Fatalf("secret %s: %v", name, err)
		}
		return &s
	}
	secretName := render.InternalTLSSecretName(cl.get("sec-r1"))
	leafSecret := getSecret(secretName)
	leaf := leafOf(t, leafSecret, cl.clock.Now())
	if !metav1.IsControlledBy(leafSecret, cl.get("sec-r1")) || leafSecret.Type != corev1.SecretTypeTLS ||
		leafSecret.Labels[render.LabelCluster] != "sec" {
		t.Errorf("secret %s: owners %v, type %s, labels %v", secretName, leafSecret.OwnerReferences, leafSecret.Type, leafSecret.Labels)
	}
	renewal := leaf.NotBefore.Add(leaf.NotAfter.Sub(leaf.NotBefore) * 2 / 3)
	if res.RequeueAfter <= 0 || res.RequeueAfter > renewal.Sub(cl.clock.Now()) {
		t.Errorf("requeue after %s, want at most the %s until renewal", res.RequeueAfter, renewal.Sub(cl.clock.Now()))
	}
	caSecret := getSecret("tandem-internal-ca")
	if !strings.Contains(string(leafSecret.Data[certs.KeyCA]), string(caSecret.Data[certs.KeyCA])) {
		t.Error("the replica's bundle is not the CA secret's")
	}
	if err := issuer.EnsureController(cl.ctx); err != nil {
		t.Fatal(err)
	}
	ctl := getSecret("controller-internal-tls")
	if leafOf(t, ctl, cl.clock.Now()).Issuer.String() != leaf.Issuer.String() {
		t.Error("the controller's certificate and the replica's have different issuers")
	}

	var sts appsv1.StatefulSet
	if err := c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: "sec-r1"}, &sts); err != nil {
		t.Fatal(err)
	}
	checkMounted(t, &sts, secretName)
	hash := sts.Spec.Template.Labels[render.LabelPodTemplateHash]

	// Fresh: passes write nothing.
	for range 3 {
		cl.step(true)
	}
	if got := getSecret(secretName); got.ResourceVersion != leafSecret.ResourceVersion {
		t.Errorf("a pass before renewal rewrote the secret")
	}

	// Two thirds in: renewed, and nothing rolls.
	cl.clock.Advance(renewal.Sub(cl.clock.Now()))
	cl.step(true)
	renewed := getSecret(secretName)
	newLeaf := leafOf(t, renewed, cl.clock.Now())
	if newLeaf.SerialNumber.Cmp(leaf.SerialNumber) == 0 {
		t.Fatal("the certificate was not renewed two thirds into its validity")
	}
	if err := c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: "sec-r1"}, &sts); err != nil {
		t.Fatal(err)
	}
	if got := sts.Spec.Template.Labels[render.LabelPodTemplateHash]; got != hash {
		t.Errorf("renewal changed the pod template (%s -> %s): the replica would roll", hash, got)
	}
	if err := issuer.EnsureController(cl.ctx); err != nil {
		t.Fatal(err)
	}
	if leafOf(t, getSecret("controller-internal-tls"), cl.clock.Now()).SerialNumber.Cmp(leafOf(t, ctl, cl.clock.Now()).SerialNumber) == 0 {
		t.Error("the controller's certificate was not renewed")
	}

	// Deleted: issued again.
	if err := c.Delete(cl.ctx, renewed); err != nil {
		t.Fatal(err)
	}
	cl.reconcile()
	leafOf(t, getSecret(secretName), cl.clock.Now())

	// A Secret of that name the replica does not own is a name conflict.
	other := &v1alpha1.ComputeReplica{
		ObjectMeta: metav1.ObjectMeta{Name: "sec-r2"},
		Spec:       v1alpha1.ComputeReplicaSpec{ClusterName: "sec", Image: "img", Processes: 1, Workers: 1},
	}
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sec-r2-internal-tls", Namespace: cl.ns}}
	if err := c.Create(cl.ctx, foreign); err != nil {
		t.Fatal(err)
	}
	cl.create(other)
	cl.reconcile()
	if d := cl.condition("sec-r2", v1alpha1.ConditionDegraded); d.Reason != ReasonNameConflict {
		t.Errorf("foreign secret: degraded %+v, want NameConflict", d)
	}
	if err := c.Get(cl.ctx, client.ObjectKey{Namespace: cl.ns, Name: "sec-r2"}, &appsv1.StatefulSet{}); !apierrors.IsNotFound(err) {
		t.Errorf("a replica whose secret name is taken got a statefulset: %v", err)
	}
}

func TestFakeInternalTLS(t *testing.T) { scenarioInternalTLS(t, newFakeClient(t)) }
