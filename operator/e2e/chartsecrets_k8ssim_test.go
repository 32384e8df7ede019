//go:build k8ssim

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// chartValuesFile holds the values HelmInstall installs: the ones charts/tandem/tests'
// TestChartOnHost renders and runs on the host (a superuser password Secret, SQL TLS with
// plaintext refused, internal mutual TLS).
const chartValuesFile = "charts/tandem/tests/testdata/host.values.yaml"

// createChartSecrets creates, with kubectl as a user would, the namespace and the two
// Secrets the values name: the superuser's password and the SQL endpoint's TLS certificate
// (generated now).
func (s *sim) createChartSecrets(ctx context.Context, t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.root, chartValuesFile))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Controller struct {
			SuperuserPasswordSecret struct{ Name, Key string } `json:"superuserPasswordSecret"`
			TLS                     struct {
				SecretName string `json:"secretName"`
			} `json:"tls"`
		} `json:"controller"`
	}
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", chartValuesFile, err)
	}
	pw, tlsSecret := v.Controller.SuperuserPasswordSecret, v.Controller.TLS.SecretName
	if pw.Name == "" || pw.Key == "" || tlsSecret == "" {
		t.Fatalf("%s names no password Secret and key or no TLS Secret: %+v", chartValuesFile, v)
	}
	certFile, keyFile := writeServingCertificate(t, s.work)
	password := make([]byte, 12)
	if _, err := rand.Read(password); err != nil {
		t.Fatal(err)
	}
	s.must(ctx, t, "kubectl", "create", "namespace", namespace)
	s.must(ctx, t, "kubectl", "--namespace", namespace, "create", "secret", "generic", pw.Name,
		"--from-literal="+pw.Key+"="+hex.EncodeToString(password))
	s.must(ctx, t, "kubectl", "--namespace", namespace, "create", "secret", "tls", tlsSecret,
		"--cert="+certFile, "--key="+keyFile)
}

// writeServingCertificate writes a self-signed certificate and key for the SQL endpoint.
func writeServingCertificate(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tandem-controller"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames: []string{"tandem-controller." + namespace + ".svc"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "sql-tls.crt"), filepath.Join(dir, "sql-tls.key")
	for file, block := range map[string]*pem.Block{certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: kder}} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile
}
