package internaltls

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func issue(t *testing.T, dir, name string) Files {
	t.Helper()
	a, err := EnsureAuthority(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := a.Issue(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMutualTLS: a server under the authority answers a client with a
// certificate of the same authority and refuses, counting each, a
// plaintext client, a TLS client without a certificate and one whose
// certificate another authority signed.
func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	server := issue(t, dir, "controller")
	client := issue(t, dir, "replica")
	stranger := issue(t, t.TempDir(), "replica")
	if fi, err := os.Stat(filepath.Join(dir, "ca.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("CA key mode: %v, %v", fi, err)
	}
	scfg, err := ServerConfig(server)
	if err != nil {
		t.Fatal(err)
	}
	var refused atomic.Int64
	gs := grpc.NewServer(grpc.Creds(Credentials(scfg, func(error) { refused.Add(1) })))
	healthpb.RegisterHealthServer(gs, health.NewServer())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	defer gs.Stop()

	clientTLS := func(f Files, withCert bool) credentials.TransportCredentials {
		cfg, err := ClientConfig(f)
		if err != nil {
			t.Fatal(err)
		}
		if !withCert {
			cfg.GetClientCertificate = nil
		}
		return credentials.NewTLS(cfg)
	}
	// A client trusting the right CA but presenting another authority's
	// certificate.
	strangerCfg, _ := ClientConfig(Files{CA: client.CA, Cert: stranger.Cert, Key: stranger.Key})
	for _, tc := range []struct {
		name  string
		creds credentials.TransportCredentials
		ok    bool
	}{
		{"right certificate", clientTLS(client, true), true},
		{"plaintext", insecure.NewCredentials(), false},
		{"no certificate", clientTLS(client, false), false},
		{"other authority", credentials.NewTLS(strangerCfg), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := refused.Load()
			conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(tc.creds))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
			if (err == nil) != tc.ok {
				t.Fatalf("check: %v, want ok %v", err, tc.ok)
			}
			if !tc.ok {
				// The server counts the refusal when its handshake ends,
				// which may be just after the client gave up.
				for refused.Load() == before && ctx.Err() == nil {
					time.Sleep(10 * time.Millisecond)
				}
				if refused.Load() == before {
					t.Fatal("refusal not counted")
				}
			}
		})
	}
}

// TestAuthorityReloaded: the authority is created once and loaded after,
// so certificates issued by two incarnations verify each other.
func TestAuthorityReloaded(t *testing.T) {
	dir := t.TempDir()
	first := issue(t, dir, "a")
	second := issue(t, dir, "b")
	src, err := newSource(first)
	if err != nil {
		t.Fatal(err)
	}
	pool := src.current().pool
	pair, err := tls.LoadX509KeyPair(second.Cert, second.Key)
	if err != nil {
		t.Fatal(err)
	}
	leaf := pair.Leaf
	if _, err := leaf.Verify(x509VerifyOptions(pool)); err != nil {
		t.Fatalf("a certificate of the reloaded authority does not verify: %v", err)
	}
}

func x509VerifyOptions(pool *x509.CertPool) x509.VerifyOptions {
	return x509.VerifyOptions{Roots: pool, DNSName: ServerName, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}
}
