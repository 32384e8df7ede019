package certs

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"
)

// verifyLeaf checks that data's leaf chains to its own bundle for
// ServerName, as pkg/internaltls verifies a peer, and returns its issuer.
func verifyLeaf(t *testing.T, data map[string][]byte, now time.Time) string {
	t.Helper()
	pair, err := tls.X509KeyPair(data[KeyCert], data[KeyKey])
	if err != nil {
		t.Fatalf("leaf pair: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data[KeyCA]) {
		t.Fatal("no bundle")
	}
	if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: ServerName, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("leaf does not verify against its bundle: %v", err)
	}
	return pair.Leaf.Issuer.CommonName
}

// TestPlan walks a leaf Secret through its life: issued, left alone while
// fresh, renewed at two thirds of its validity, re-issued when its data is
// damaged, and carried across a rotation of the authority (new authority
// trusted first, signing only after Propagation, old one dropped when it
// expires), always chaining to its own bundle.
func TestPlan(t *testing.T) {
	const leafValidity, caValidity = 90 * time.Hour, 900 * time.Hour
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, changed, err := (&Authority{}).Renew(t0, caValidity)
	if err != nil || !changed {
		t.Fatalf("first authority: %v, changed %v", err, changed)
	}
	firstCA := a.cas[0].cert.Subject.CommonName
	data, next, err := Plan(a, nil, t0, "r1", leafValidity)
	if err != nil || data == nil {
		t.Fatalf("first leaf: %v", err)
	}
	verifyLeaf(t, data, t0)
	if want := t0.Add(-skew).Add((leafValidity + skew) * 2 / 3); !next.Equal(want) {
		t.Fatalf("next check %v, want the leaf's renewal %v", next, want)
	}

	step := func(name string, now time.Time, wantWrite bool) {
		t.Helper()
		if d, _, err := a.Renew(now, caValidity); err == nil {
			a = d
		}
		fresh, _, err := Plan(a, data, now, "r1", leafValidity)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if (fresh != nil) != wantWrite {
			t.Fatalf("%s: write %v, want %v", name, fresh != nil, wantWrite)
		}
		if fresh != nil {
			data = fresh
			verifyLeaf(t, data, now)
		}
	}
	step("fresh", t0.Add(time.Hour), false)
	step("due for renewal", next, true)
	step("renewed, fresh again", next.Add(time.Minute), false)

	damaged := map[string][]byte{KeyCA: data[KeyCA], KeyCert: []byte("garbage"), KeyKey: data[KeyKey]}
	data = damaged
	step("damaged", next.Add(2*time.Minute), true)

	// A leaf issued shortly before the authority's renewal is looked at again
	// at that renewal, not at its own: its bundle must gain the new authority
	// before the new authority signs a peer's certificate.
	caRenew := renewAt(a.cas[0].cert)
	fresh, nextLook, err := Plan(a, nil, caRenew.Add(-time.Hour), "r1", leafValidity)
	if err != nil || fresh == nil || !nextLook.Equal(caRenew) {
		t.Fatalf("leaf issued an hour before the authority's renewal: look again at %v, want %v (%v)", nextLook, caRenew, err)
	}

	// The authority reaches two thirds of its validity: a new one joins
	// the bundle (leaves get it) but the old one still signs.
	step("authority renewed", caRenew, true)
	if len(a.cas) != 2 {
		t.Fatalf("authorities after renewal: %d", len(a.cas))
	}
	if issuer := verifyLeaf(t, data, caRenew); issuer != firstCA {
		t.Fatalf("signed by %s before the new authority propagated, want %s", issuer, firstCA)
	}
	step("new authority propagating", caRenew.Add(Propagation/2), false)
	step("new authority signs", caRenew.Add(Propagation), true)
	if issuer := verifyLeaf(t, data, caRenew.Add(Propagation)); issuer == firstCA {
		t.Fatal("still signed by the old authority after Propagation")
	}
	// The old authority expires: dropped from the bundle, leaves follow.
	oldExpiry := a.cas[1].cert.NotAfter
	step("old authority expired", oldExpiry, true)
	if len(a.cas) != 1 || len(mustParse(t, data[KeyCA])) != 1 {
		t.Fatalf("bundle after expiry: %d authorities", len(a.cas))
	}
}

func mustParse(t *testing.T, b []byte) []*x509.Certificate {
	t.Helper()
	c, err := parseCerts(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAuthorityRoundTrip: an authority survives its Secret, and a Secret
// whose keys do not match its certificates is refused.
func TestAuthorityRoundTrip(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, _, err := (&Authority{}).Renew(now, DefaultCAValidity)
	if err != nil {
		t.Fatal(err)
	}
	data, err := a.Data()
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseAuthority(data)
	if err != nil || len(b.cas) != 1 || !b.cas[0].cert.Equal(a.cas[0].cert) {
		t.Fatalf("parsed %v, %v", b, err)
	}
	other, _, _ := (&Authority{}).Renew(now, DefaultCAValidity)
	otherData, _ := other.Data()
	for name, bad := range map[string]map[string][]byte{
		"key of another authority": {KeyCA: data[KeyCA], KeyCAKey: otherData[KeyCAKey]},
		"no key":                   {KeyCA: data[KeyCA]},
		"garbage certificate":      {KeyCA: []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), KeyCAKey: data[KeyCAKey]},
	} {
		if _, err := ParseAuthority(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, changed, _ := b.Renew(now.Add(time.Hour), DefaultCAValidity); changed {
		t.Error("a fresh authority was renewed")
	}
}
