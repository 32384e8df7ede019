//go:build k8s

package tests

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

const (
	hostNamespace  = "tandem"
	hostValuesFile = "testdata/host.values.yaml"
	repoRoot       = "../../.."
)

// TestChartOnHost is issue 18's first Must show in one test: what `helm template` renders for
// a chart with a superuser password Secret and SQL TLS (testdata/host.values.yaml) runs on
// the host and is as safe to expose as the chart says.
//
// The simulated cluster runs no containers, so the test plays the kubelet (hostKubelet): the
// operator's Deployment, the controller's StatefulSet and then the replica StatefulSet the
// operator renders for the ComputeReplica the controller creates each run as the real
// binaries, with exactly the rendered arguments, environment and mounted Secrets, except
// that ports are rewritten to free loopback ports (and mounted paths to the directories the
// Secrets are written to). A kube-apiserver and etcd (envtest) hold the objects. What a pod
// has and a host process has not is given in the environment: the API server's credentials
// (a kubeconfig for the service account's token: KUBECONFIG for the operator, the
// controller's --kubeconfig fallback TANDEM_KUBECONFIG), cluster DNS for the controller's
// dials of replica pods (HTTPS_PROXY, a CONNECT proxy resolving pod names), and the pod's
// hostname ordinal (TANDEM_PROCESS, the replica's --process fallback). One operator pod runs
// where the chart asks for two (the second would only wait for the lease). The kubeconfig is
// an administrator's, not the chart's ServiceAccounts' (the simulated cluster's ChartRBAC and
// later steps run under those).
//
// It checks: psql with sslmode=require and the password gets in over TLS and reads a table
// (through the replica, which reads storage over mutual TLS); a wrong password, an unknown
// user and a loopback client without a password are refused alike; a plaintext client is
// refused the same way whoever it claims to be; a process presenting no client certificate,
// or speaking plaintext, is refused by the replica's compute protocol port and by storage,
// while the deployment's certificate gets through. The simulated cluster's HelmInstall step
// (operator/e2e) installs the same values.
func TestChartOnHost(t *testing.T) {
	psql := findPsql(t)
	entrypoint, bins := imageBinaries(t)
	values := readHostValues(t)
	r := render(t, "-f", hostValuesFile)
	if len(r.deployments) != 1 || len(r.statefulSets) != 1 {
		t.Fatalf("rendered %d Deployments and %d StatefulSets, want the operator's and the controller's", len(r.deployments), len(r.statefulSets))
	}
	api := startAPIServer(t, r.crds)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	password := randomText(t)
	createUserSecrets(ctx, t, api.cs, values, password)
	hn := newHostNet(hostNamespace, r.services)
	k := &hostKubelet{t: t, cs: api.cs, namespace: hostNamespace, net: hn, root: t.TempDir(),
		binaries: bins, entrypoint: entrypoint}

	op := r.deployments[0]
	start(ctx, t, k, op.Name+"-0", op.Spec.Template, runOptions{env: []string{"KUBECONFIG=" + api.kubeconfig}})
	ctl := r.statefulSets[0]
	proxy := hn.startProxy(t)
	ctlPod := start(ctx, t, k, ctl.Name+"-0", ctl.Spec.Template, runOptions{dials: true, claims: claimNames(ctl),
		env: []string{"TANDEM_KUBECONFIG=" + api.kubeconfig, "HTTPS_PROXY=" + proxy, "NO_PROXY=127.0.0.1"}})
	replica := startReplicaPods(ctx, t, k, api, r)

	pgwire, err := ctlPod.pod.portNamed("pgwire")
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(pgwire)
	t.Run("PsqlOverTLSWithThePassword", func(t *testing.T) {
		checkPsqlGetsIn(ctx, t, psql, host, port, password, ctlPod)
	})
	t.Run("RefusedAlike", func(t *testing.T) {
		checkRefusals(ctx, t, psql, host, port, password)
	})
	t.Run("InternalLinksNeedAClientCertificate", func(t *testing.T) {
		checkInternalLinks(ctx, t, api, hn, r, replica)
	})
}

// startReplicaPods waits for the replica StatefulSet the operator renders for the
// controller's first ComputeReplica and runs its pods; it returns the StatefulSet.
func startReplicaPods(ctx context.Context, t *testing.T, k *hostKubelet, api *apiServer, r rendered) appsv1.StatefulSet {
	t.Helper()
	var sts appsv1.StatefulSet
	eventually(ctx, t, "the operator renders a replica's StatefulSet", func() error {
		list, err := api.cs.AppsV1().StatefulSets(hostNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, s := range list.Items {
			if !slices.ContainsFunc(r.statefulSets, func(c appsv1.StatefulSet) bool { return c.Name == s.Name }) {
				sts = s
				return nil
			}
		}
		return fmt.Errorf("only the chart's %d StatefulSets", len(list.Items))
	})
	n := 1
	if sts.Spec.Replicas != nil {
		n = int(*sts.Spec.Replicas)
	}
	pods := make([]*hostPod, n)
	for i := range n {
		// Every pod is on the network before any starts: each one's peers name the others.
		p, err := k.net.addPod(fmt.Sprintf("%s-%d", sts.Name, i), sts.Spec.Template.Labels, sts.Spec.Template.Spec)
		if err != nil {
			t.Fatal(err)
		}
		pods[i] = p
	}
	for i, p := range pods {
		o := runOptions{dials: true, claims: claimNames(sts), env: []string{"TANDEM_PROCESS=" + strconv.Itoa(i)}}
		if _, err := k.run(ctx, p, sts.Spec.Template.Spec, o); err != nil {
			t.Fatal(err)
		}
	}
	return sts
}

// start places a pod of template on the host network and runs it.
func start(ctx context.Context, t *testing.T, k *hostKubelet, name string, tmpl corev1.PodTemplateSpec, o runOptions) *hostContainer {
	t.Helper()
	p, err := k.net.addPod(name, tmpl.Labels, tmpl.Spec)
	if err != nil {
		t.Fatal(err)
	}
	c, err := k.run(ctx, p, tmpl.Spec, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func claimNames(sts appsv1.StatefulSet) []string {
	var out []string
	for _, c := range sts.Spec.VolumeClaimTemplates {
		out = append(out, c.Name)
	}
	return out
}

// checkPsqlGetsIn: psql over TLS with the superuser's password connects (\conninfo names the
// TLS connection), writes a table and reads it back through the replica.
func checkPsqlGetsIn(ctx context.Context, t *testing.T, psql, host, port, password string, ctl *hostContainer) {
	conninfo := fmt.Sprintf("host=%s port=%s user=tandem dbname=tandem sslmode=require", host, port)
	eventually(ctx, t, "psql connects", func() error {
		if ctl.exited() {
			t.Fatalf("the controller exited:\n%s", tail(ctl.log, 30))
		}
		out, err := runPsql(ctx, psql, conninfo, password, `\conninfo`)
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		if !strings.Contains(out, "SSL connection") {
			t.Fatalf("psql with sslmode=require is not on TLS:\n%s", out)
		}
		return nil
	})
	if out, err := runPsql(ctx, psql, conninfo, password, "CREATE TABLE hosted (a int)", "INSERT INTO hosted VALUES (1), (2)"); err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	eventually(ctx, t, "a read through the replica", func() error {
		out, err := runPsql(ctx, psql, conninfo, password, "SELECT sum(a) FROM hosted")
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		if strings.TrimSpace(out) != "3" {
			t.Fatalf("SELECT sum(a) FROM hosted: %q, want 3", out)
		}
		return nil
	})
}

// checkRefusals: a wrong password, an unknown user and a loopback client without a password
// get the same SQLSTATE and the same message (up to the user name it repeats); a plaintext
// client is refused before authentication with one answer, whether or not its user exists
// (so no refusal tells a user name from a wrong password); and psql without a password is
// asked for one on loopback. A plaintext client's answer is not the wrong password's: as in
// PostgreSQL it is 28000 and says that TLS is required, which tells the client nothing about
// users or passwords. psql prints no SQLSTATE for a refused connection, so the SQLSTATEs
// are read with pgconn.
func checkRefusals(ctx context.Context, t *testing.T, psql, host, port, password string) {
	refusal := func(user, password, sslmode string) *pgconn.PgError {
		t.Helper()
		c, err := pgconn.Connect(ctx, fmt.Sprintf("host=%s port=%s user=%s password='%s' dbname=tandem sslmode=%s connect_timeout=10",
			host, port, user, password, sslmode))
		if err == nil {
			c.Close(ctx)
			t.Fatalf("%s with password %q over sslmode=%s got in", user, password, sslmode)
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) {
			t.Fatalf("%s over sslmode=%s: %v, want a server's refusal", user, sslmode, err)
		}
		return pgErr
	}
	same := func(what string, a, b *pgconn.PgError, userA, userB string) {
		t.Helper()
		ma := strings.ReplaceAll(a.Message, `"`+userA+`"`, `"<user>"`)
		mb := strings.ReplaceAll(b.Message, `"`+userB+`"`, `"<user>"`)
		if a.Code != b.Code || ma != mb || a.Severity != b.Severity {
			t.Errorf("%s: %s %s %q and %s %s %q differ", what, a.Severity, a.Code, a.Message, b.Severity, b.Code, b.Message)
		}
	}
	wrong := refusal("tandem", "wrong-"+password, "require")
	unknown := refusal("nobody", password, "require")
	empty := refusal("tandem", "", "require")
	// PostgreSQL's answers: 28P01 after a failed password exchange, 28000 for a client its
	// pg_hba.conf admits only over TLS ("no encryption").
	if wrong.Code != "28P01" {
		t.Errorf("wrong password: SQLSTATE %s, want 28P01", wrong.Code)
	}
	same("wrong password / unknown user", wrong, unknown, "tandem", "nobody")
	same("wrong password / loopback without a password", wrong, empty, "tandem", "tandem")

	plain := refusal("tandem", password, "disable")
	plainUnknown := refusal("nobody", password, "disable")
	if plain.Code != "28000" {
		t.Errorf("plaintext client: SQLSTATE %s, want 28000", plain.Code)
	}
	same("plaintext, the superuser / plaintext, an unknown user", plain, plainUnknown, "tandem", "nobody")
	for _, e := range []*pgconn.PgError{wrong, unknown, empty, plain, plainUnknown} {
		t.Logf("refused: %s %s %s", e.Severity, e.Code, e.Message)
	}

	// psql on loopback with no password: the server asks for one (loopback is not trusted).
	out, err := runPsql(ctx, psql, fmt.Sprintf("host=%s port=%s user=tandem dbname=tandem sslmode=require", host, port), "", "SELECT 1")
	if err == nil || !strings.Contains(out, "no password supplied") {
		t.Errorf("psql on loopback without a password: %v\n%s\nwant a refusal for want of a password", err, out)
	}
}

// checkInternalLinks: the replica's compute protocol port and the controller's storage
// service refuse plaintext and TLS without a client certificate, and accept the deployment's
// certificate (the replica's own, from the Secret the operator issued and its pod mounts).
func checkInternalLinks(ctx context.Context, t *testing.T, api *apiServer, hn *hostNet, r rendered, replica appsv1.StatefulSet) {
	computectl := replicaComputectl(ctx, t, api, hn, r.crds)
	storage := ""
	for _, svc := range r.services {
		for _, p := range svc.Spec.Ports {
			if p.Name == "storage" {
				a, err := hn.resolve(fmt.Sprintf("%s.%s.svc:%d", svc.Name, hostNamespace, p.Port))
				if err != nil {
					t.Fatal(err)
				}
				storage = a
			}
		}
	}
	if storage == "" {
		t.Fatal("no Service has a port named storage")
	}
	deployment := replicaCertificate(ctx, t, api, replica)
	for _, ep := range []struct{ name, addr string }{{"computectl", computectl}, {"storage", storage}} {
		for _, c := range []struct {
			name  string
			creds credentials.TransportCredentials
			want  codes.Code
		}{
			{"plaintext", insecure.NewCredentials(), codes.Unavailable},
			{"TLS without a client certificate", credentials.NewTLS(&tls.Config{InsecureSkipVerify: true}), codes.Unavailable},
			{"the deployment's certificate", credentials.NewTLS(&tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{deployment}}), codes.Unimplemented},
		} {
			if got := callCode(ctx, t, ep.addr, c.creds); got != c.want {
				t.Errorf("%s (%s), %s: %v, want %v (Unavailable: refused in the handshake; Unimplemented: let in)", ep.name, ep.addr, c.name, got, c.want)
			}
		}
	}
}

// replicaComputectl is the host address of the first compute protocol address the operator
// published in a ComputeReplica's status.
func replicaComputectl(ctx context.Context, t *testing.T, api *apiServer, hn *hostNet, crds []*apiextensionsv1.CustomResourceDefinition) string {
	t.Helper()
	if len(crds) != 1 {
		t.Fatalf("%d CRDs rendered, want the ComputeReplica's", len(crds))
	}
	crd := crds[0]
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: crd.Spec.Versions[0].Name, Resource: crd.Spec.Names.Plural}
	dc, err := dynamic.NewForConfig(api.cfg)
	if err != nil {
		t.Fatal(err)
	}
	var addr string
	eventually(ctx, t, "a ComputeReplica with computectl addresses", func() error {
		list, err := dc.Resource(gvr).Namespace(hostNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, cr := range list.Items {
			addrs, _, _ := unstructured.NestedStringSlice(cr.Object, "status", "computectlAddresses")
			if len(addrs) > 0 {
				addr, err = hn.resolve(addrs[0])
				return err
			}
		}
		return fmt.Errorf("%d replicas, none with addresses", len(list.Items))
	})
	return addr
}

// replicaCertificate is the certificate in the Secret the replica's pod mounts.
func replicaCertificate(ctx context.Context, t *testing.T, api *apiServer, sts appsv1.StatefulSet) tls.Certificate {
	t.Helper()
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Secret == nil {
			continue
		}
		s, err := api.cs.CoreV1().Secrets(hostNamespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cert, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
		if err != nil {
			t.Fatalf("Secret %s: %v", s.Name, err)
		}
		return cert
	}
	t.Fatalf("the replica's pod mounts no Secret: %+v", sts.Spec.Template.Spec.Volumes)
	return tls.Certificate{}
}

// callCode makes one call of a method no server has: Unimplemented means the connection was
// let in, Unavailable that the handshake was refused.
func callCode(ctx context.Context, t *testing.T, addr string, creds credentials.TransportCredentials) codes.Code {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return status.Code(conn.Invoke(ctx, "/tandem.Probe/Nothing", &emptypb.Empty{}, &emptypb.Empty{}))
}

// runPsql runs psql's commands with the password (none if empty), never prompting.
func runPsql(ctx context.Context, psql, conninfo, password string, commands ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	args := []string{"-X", "-A", "-t", "-w", "-v", "ON_ERROR_STOP=1", "-d", conninfo}
	for _, c := range commands {
		args = append(args, "-c", c)
	}
	cmd := exec.CommandContext(ctx, psql, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "PGPASSFILE=/dev/null", "PGCONNECT_TIMEOUT=10"}
	if password != "" {
		cmd.Env = append(cmd.Env, "PGPASSWORD="+password)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// findPsql is Debian's psql (hack/postgres.sh installs it).
func findPsql(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("psql"); err == nil {
		return p
	}
	if ps, _ := filepath.Glob("/usr/lib/postgresql/*/bin/psql"); len(ps) > 0 {
		return ps[0]
	}
	t.Fatal("psql is not installed: run bash hack/postgres.sh (make test-k8s does)")
	return ""
}

// imageBinaries reads the image the chart and the operator run (hack/kube-images/Dockerfile):
// its ENTRYPOINT, what a container without a command runs, and the path of each binary it
// installs, mapped to the host's build of that binary. `make test-k8s` builds them into
// TANDEM_TEST_BIN_DIR (a missing one fails the test); run by hand, the test builds them.
func imageBinaries(t *testing.T) (entrypoint string, binaries map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "hack", "kube-images", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	entry := regexp.MustCompile(`(?m)^ENTRYPOINT \["([^"]+)"\]`).FindSubmatch(b)
	install := regexp.MustCompile(`(?m)^COPY --from=\S+ (.+) (/\S+/)$`).FindSubmatch(b)
	if entry == nil || install == nil {
		t.Fatal(`hack/kube-images/Dockerfile has no ENTRYPOINT ["..."] or no COPY --from of the binaries into a directory`)
	}
	binaries = map[string]string{}
	var pkgs []string
	for _, src := range strings.Fields(string(install[1])) {
		name := filepath.Base(src)
		binaries[string(install[2])+name] = name
		pkgs = append(pkgs, "./cmd/"+name)
	}
	dir := os.Getenv("TANDEM_TEST_BIN_DIR")
	if dir != "" {
		for _, name := range binaries {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Fatalf("TANDEM_TEST_BIN_DIR: %v (make build-operator builds all three)", err)
			}
		}
	} else {
		dir = t.TempDir()
		cmd := exec.Command("go", append([]string{"build", "-o", dir + "/"}, pkgs...)...)
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", pkgs, err, out)
		}
	}
	for path, name := range binaries {
		binaries[path] = filepath.Join(dir, name)
	}
	return string(entry[1]), binaries
}

// hostValues are the Secret names testdata/host.values.yaml refers to.
type hostValues struct {
	Controller struct {
		SuperuserPasswordSecret struct{ Name, Key string } `json:"superuserPasswordSecret"`
		TLS                     struct {
			SecretName string `json:"secretName"`
		} `json:"tls"`
	} `json:"controller"`
}

func readHostValues(t *testing.T) hostValues {
	t.Helper()
	b, err := os.ReadFile(hostValuesFile)
	if err != nil {
		t.Fatal(err)
	}
	var v hostValues
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", hostValuesFile, err)
	}
	if v.Controller.SuperuserPasswordSecret.Name == "" || v.Controller.TLS.SecretName == "" {
		t.Fatalf("%s names no password Secret or no TLS Secret: %+v", hostValuesFile, v)
	}
	return v
}

// createUserSecrets creates what the values expect the user to have created: the password
// Secret and the SQL TLS Secret, with a certificate generated now.
func createUserSecrets(ctx context.Context, t *testing.T, cs kubernetes.Interface, v hostValues, password string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pw := v.Controller.SuperuserPasswordSecret
	certPEM, keyPEM := servingCertificate(t)
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: pw.Name}, Data: map[string][]byte{pw.Key: []byte(password)}},
		{ObjectMeta: metav1.ObjectMeta{Name: v.Controller.TLS.SecretName}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM}},
	} {
		if _, err := cs.CoreV1().Secrets(hostNamespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// servingCertificate is a self-signed certificate for the SQL endpoint.
func servingCertificate(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tandem-controller"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func randomText(t *testing.T) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// apiServer is a kube-apiserver and etcd (envtest) with the chart's CRDs, and an admin's
// kubeconfig for the processes.
type apiServer struct {
	cfg        *rest.Config
	cs         kubernetes.Interface
	kubeconfig string
}

func startAPIServer(t *testing.T, crds []*apiextensionsv1.CustomResourceDefinition) *apiServer {
	t.Helper()
	bin := os.Getenv("TANDEM_KUBE_BIN")
	if bin == "" {
		t.Fatal("TANDEM_KUBE_BIN is not set: run these tests with `make test-k8s`")
	}
	// A loaded machine starts kube-apiserver slowly; envtest's default is 20 s per attempt.
	env := &envtest.Environment{BinaryAssetsDirectory: bin, CRDs: crds, ControlPlaneStartTimeout: 2 * time.Minute}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start kube-apiserver and etcd: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	user, err := env.AddUser(envtest.User{Name: "tandem-host", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &apiServer{cfg: cfg, cs: cs, kubeconfig: path}
}

// eventually retries f every 100ms until it succeeds, for up to two minutes.
func eventually(ctx context.Context, t *testing.T, what string, f func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		err := f()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
