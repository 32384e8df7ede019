package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// writeCert writes a self-signed certificate for 127.0.0.1 named cn.
func writeCert(t *testing.T, dir, cn string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestFrontDoorRenewsItsCertificate: with a password and TLS configured, a
// client connects with sslmode=require and SCRAM, and a renewed certificate
// is served without a restart. What the front door refuses is shown on the
// chart's rendered flags by charts/tandem/tests' TestChartOnHost, and each
// refusal's SQLSTATE by pkg/pgwire's tests.
func TestFrontDoorRenewsItsCertificate(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := writeCert(t, dir, "first")
	fd := frontDoorConfig{TLSCert: certFile, TLSKey: keyFile, RequireTLS: true, Superuser: "tandem", SuperuserPassword: "s3cret"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, _, addr, err := servePgwire(ctx, "127.0.0.1:0", sqltest.New(), fd, 0, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	host, port, _ := net.SplitHostPort(addr)
	dial := func() (*pgx.Conn, error) {
		return pgx.Connect(ctx, fmt.Sprintf("host=%s port=%s user=tandem password=s3cret sslmode=require", host, port))
	}
	peerCN := func(c *pgx.Conn) string {
		return c.PgConn().Conn().(*tls.Conn).ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	c, err := dial()
	if err != nil {
		t.Fatalf("TLS and SCRAM: %v", err)
	}
	if cn := peerCN(c); cn != "first" {
		t.Fatalf("served certificate %q", cn)
	}
	c.Close(ctx)
	// Renew the certificate in place (a later modification time).
	time.Sleep(10 * time.Millisecond)
	writeCert(t, dir, "renewed")
	later := time.Now().Add(time.Second)
	_ = os.Chtimes(certFile, later, later)
	c, err = dial()
	if err != nil {
		t.Fatalf("after renewal: %v", err)
	}
	defer c.Close(ctx)
	if cn := peerCN(c); cn != "renewed" {
		t.Fatalf("after renewal the server still serves %q", cn)
	}
}
