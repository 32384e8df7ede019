package internaltls

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"testing"
	"time"
)

// copyFiles copies f's three files to names in dir (as a Secret update
// replaces a mounted volume's contents) and returns the copies.
func copyFiles(t *testing.T, f Files, dir string) Files {
	t.Helper()
	out := Files{CA: dir + "/ca.crt", Cert: dir + "/tls.crt", Key: dir + "/tls.key"}
	for src, dst := range map[string]string{f.CA: out.CA, f.Cert: out.Cert, f.Key: out.Key} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// handshake runs one TLS handshake between a client and a server config
// and returns the client's error and the serial of the server's leaf.
func handshake(t *testing.T, server, client *tls.Config) (string, error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() {
		a, err := ln.Accept()
		if err != nil {
			return
		}
		srv := tls.Server(a, server)
		_ = srv.HandshakeContext(ctx)
		srv.Close()
	}()
	b, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := tls.Client(b, client)
	defer c.Close()
	if err := c.HandshakeContext(ctx); err != nil {
		return "", err
	}
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
}

// TestReload: configurations follow their files. A renewed server
// certificate is presented at the next handshake; an authority rotated on
// one side is refused by a peer that does not trust it yet, and accepted
// once the peer's files trust it, all without new configurations.
func TestReload(t *testing.T) {
	ca1, ca2 := t.TempDir(), t.TempDir()
	serverDir, clientDir := t.TempDir(), t.TempDir()
	serverFiles := copyFiles(t, issue(t, ca1, "server"), serverDir)
	clientFiles := copyFiles(t, issue(t, ca1, "client"), clientDir)
	scfg, err := ServerConfig(serverFiles)
	if err != nil {
		t.Fatal(err)
	}
	ccfg, err := ClientConfig(clientFiles)
	if err != nil {
		t.Fatal(err)
	}
	first, err := handshake(t, scfg, ccfg)
	if err != nil {
		t.Fatalf("first handshake: %v", err)
	}

	// Renewed under the same authority: the new leaf is served.
	copyFiles(t, issue(t, ca1, "server-renewed"), serverDir)
	renewed, err := handshake(t, scfg, ccfg)
	if err != nil || renewed == first {
		t.Fatalf("after renewal: serial %s (first %s), %v", renewed, first, err)
	}

	// A half-written update keeps the last good certificate.
	if err := os.WriteFile(serverFiles.Cert, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := handshake(t, scfg, ccfg); err != nil || got != renewed {
		t.Fatalf("after a bad update: serial %s (want %s), %v", got, renewed, err)
	}

	// The server moves to another authority: the client, trusting only
	// the first, refuses it.
	copyFiles(t, issue(t, ca2, "server"), serverDir)
	if _, err := handshake(t, scfg, ccfg); err == nil {
		t.Fatal("a server of another authority was accepted")
	}
	// The client moves too: accepted again.
	copyFiles(t, issue(t, ca2, "client"), clientDir)
	if _, err := handshake(t, scfg, ccfg); err != nil {
		t.Fatalf("both on the new authority: %v", err)
	}
}

// TestTrustFollowsTheBundleMidRotation: a rotation writes the new bundle
// first and then each leaf's certificate and key; a server reading its
// files between the two sees a certificate that does not match its key.
// It keeps its previous pair, but it must trust the new bundle already,
// or a client holding a leaf of the new authority is refused.
func TestTrustFollowsTheBundleMidRotation(t *testing.T) {
	ca1, ca2 := t.TempDir(), t.TempDir()
	serverDir := t.TempDir()
	serverFiles := copyFiles(t, issue(t, ca1, "server"), serverDir)
	scfg, err := ServerConfig(serverFiles)
	if err != nil {
		t.Fatal(err)
	}
	first, err := handshake(t, scfg, mustClient(t, issue(t, ca1, "client")))
	if err != nil {
		t.Fatalf("first handshake: %v", err)
	}

	newClient := issue(t, ca2, "client")
	bundle := append(readFile(t, newClient.CA), readFile(t, serverFiles.CA)...)
	if err := os.WriteFile(serverFiles.CA, bundle, 0o600); err != nil {
		t.Fatal(err)
	}
	// The re-issued certificate is written, its key not yet.
	if err := os.WriteFile(serverFiles.Cert, readFile(t, issue(t, ca2, "server").Cert), 0o600); err != nil {
		t.Fatal(err)
	}
	clientCfg := mustClient(t, newClient)
	// The client of the new authority must trust the server's previous
	// leaf as well, as every peer's bundle does during a rotation.
	if err := os.WriteFile(newClient.CA, bundle, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := handshake(t, scfg, clientCfg)
	if err != nil {
		t.Fatalf("a client of the new authority mid-rotation: %v", err)
	}
	if got != first {
		t.Fatalf("served serial %s, want the previous pair's %s", got, first)
	}
	// In TLS 1.3 the client finishes before the server has checked its
	// certificate: ask the server.
	if err := serverHandshake(t, scfg, clientCfg); err != nil {
		t.Fatalf("the server refused a client of the new authority mid-rotation: %v", err)
	}
}

// serverHandshake runs one handshake and returns the server's error.
func serverHandshake(t *testing.T, server, client *tls.Config) error {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go func() {
		c := tls.Client(b, client)
		if c.HandshakeContext(ctx) == nil {
			_, _ = c.Read(make([]byte, 1)) // takes the server's alert, if any
		}
	}()
	return tls.Server(a, server).HandshakeContext(ctx)
}

func mustClient(t *testing.T, f Files) *tls.Config {
	t.Helper()
	cfg, err := ClientConfig(f)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
