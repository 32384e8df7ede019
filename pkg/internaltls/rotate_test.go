package internaltls

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// exchange runs a handshake and a one-byte exchange between a client and
// a server config, so that a refusal by either side is seen (in TLS 1.3
// the client's handshake ends before the server has checked its
// certificate). It returns the serial of the server's leaf.
func exchange(t *testing.T, server, client *tls.Config) (string, error) {
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
		defer srv.Close()
		if srv.HandshakeContext(ctx) == nil {
			_, _ = srv.Write([]byte{1})
		}
	}()
	b, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := tls.Client(b, client)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if err := c.HandshakeContext(ctx); err != nil {
		return "", err
	}
	if _, err := c.Read(make([]byte, 1)); err != nil {
		return "", err
	}
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String(), nil
}

// bundleSize counts the certificates of a CA bundle file.
func bundleSize(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		var blk *pem.Block
		if blk, b = pem.Decode(b); blk == nil {
			return n
		}
		if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
			t.Fatal(err)
		}
		n++
	}
}

// TestRotateKeepsHandshakes: a controller and a replica configured once
// over the data directory's files keep completing handshakes across two
// rotations; after one, the server presents a leaf of the new authority
// and a peer still holding a leaf of the previous authority is accepted
// (both are in the bundle); after the second, the first authority is
// dropped from the bundle and that leaf is refused. A peer of another
// authority is refused throughout.
func TestRotateKeepsHandshakes(t *testing.T) {
	dir := t.TempDir()
	a, err := EnsureAuthority(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := a.Issue("controller")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := a.Issue("replica")
	if err != nil {
		t.Fatal(err)
	}
	scfg, err := ServerConfig(rep)
	if err != nil {
		t.Fatal(err)
	}
	ccfg, err := ClientConfig(ctl)
	if err != nil {
		t.Fatal(err)
	}
	before, err := exchange(t, scfg, ccfg)
	if err != nil {
		t.Fatalf("before rotation: %v", err)
	}
	// A peer that keeps the first authority's leaf but reads the shared
	// bundle, and a peer of another authority.
	old := copyFiles(t, ctl, t.TempDir())
	old.CA = ctl.CA
	stale, err := ClientConfig(old)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := ClientConfig(issue(t, t.TempDir(), "intruder"))
	if err != nil {
		t.Fatal(err)
	}

	if err := a.Rotate("controller", "replica"); err != nil {
		t.Fatal(err)
	}
	if n := bundleSize(t, ctl.CA); n != 2 {
		t.Fatalf("bundle after the first rotation holds %d authorities, want 2", n)
	}
	after, err := exchange(t, scfg, ccfg)
	if err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	if after == before {
		t.Fatal("the server still presents the leaf of the previous authority")
	}
	if _, err := exchange(t, scfg, stale); err != nil {
		t.Fatalf("a leaf of the previous authority is refused right after rotation: %v", err)
	}
	if _, err := exchange(t, scfg, foreign); err == nil {
		t.Fatal("a peer of another authority was accepted")
	}
	// The authority on disk is the new one: a restart loads it.
	b, err := EnsureAuthority(dir)
	if err != nil || !b.cert.Equal(a.cert) {
		t.Fatalf("reloaded authority differs from the rotated one (%v)", err)
	}

	if err := a.Rotate("controller", "replica"); err != nil {
		t.Fatal(err)
	}
	if n := bundleSize(t, ctl.CA); n != 2 {
		t.Fatalf("bundle after the second rotation holds %d authorities, want 2", n)
	}
	if _, err := exchange(t, scfg, ccfg); err != nil {
		t.Fatalf("after the second rotation: %v", err)
	}
	if _, err := exchange(t, scfg, stale); err == nil {
		t.Fatal("a leaf of an authority two rotations old is still accepted")
	}
}

// TestRotateIfDue: an authority is rotated only within RenewBefore of its
// expiry.
func TestRotateIfDue(t *testing.T) {
	a, err := EnsureAuthority(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exp := a.Expiry()
	for _, tc := range []struct {
		now  time.Time
		want bool
	}{
		{time.Now(), false},
		{exp.Add(-RenewBefore - time.Hour), false},
		{exp.Add(-RenewBefore), true},
		{exp.Add(time.Hour), true},
	} {
		if got := a.Due(tc.now); got != tc.want {
			t.Errorf("Due(%v) = %v, want %v (expiry %v)", tc.now, got, tc.want, exp)
		}
	}
	if rotated, err := a.RotateIfDue(time.Now()); rotated || err != nil {
		t.Fatalf("rotated a fresh authority: %v, %v", rotated, err)
	}
	first := a.cert.SerialNumber
	if rotated, err := a.RotateIfDue(exp); !rotated || err != nil || a.cert.SerialNumber.Cmp(first) == 0 {
		t.Fatalf("RotateIfDue at expiry: %v, %v", rotated, err)
	}
}

// TestAuthorityOpensBetweenRotationWrites: Rotate writes the bundle (new
// authority first) and then the key; a directory left between the two (a
// crash, or a reader racing the rotation) still opens, with the previous
// authority, whose key it holds and which the bundle still trusts; once
// the key is written it opens with the new one.
func TestAuthorityOpensBetweenRotationWrites(t *testing.T) {
	dir := t.TempDir()
	a, err := EnsureAuthority(dir)
	if err != nil {
		t.Fatal(err)
	}
	keyPath := filepath.Join(dir, caKeyFile)
	oldKey, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	previous := a.cert.SerialNumber
	if err := a.Rotate(); err != nil {
		t.Fatal(err)
	}
	rotated := a.cert.SerialNumber
	newKey, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		key  []byte
		want *big.Int
	}{
		{"bundle written, key not yet", oldKey, previous},
		{"both written", newKey, rotated},
	} {
		if err := os.WriteFile(keyPath, tc.key, 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := EnsureAuthority(dir)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if b.cert.SerialNumber.Cmp(tc.want) != 0 {
			t.Errorf("%s: opened the authority %s, want %s", tc.name, b.cert.SerialNumber, tc.want)
		}
	}
}
