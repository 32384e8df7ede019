package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// ServerName is the name every internal certificate is valid for and every
// internal client verifies (pkg/internaltls.ServerName; the operator
// imports nothing of the database, so the value is repeated here).
const ServerName = "tandem-internal"

// Keys of the Secrets.
const (
	KeyCA    = "ca.crt"  // the trust bundle (leaf Secrets) or the authorities (CA Secret)
	KeyCAKey = "ca.key"  // the authorities' keys, in the order of ca.crt (CA Secret only)
	KeyCert  = "tls.crt" // a leaf certificate
	KeyKey   = "tls.key" // its key
)

// skew backdates every certificate, for clocks a little behind the
// operator's.
const skew = time.Hour

// Propagation is how long a new authority is only trusted before it signs:
// long enough for the kubelet to update every mounted Secret (about a
// minute) with a wide margin.
const Propagation = 10 * time.Minute

// ca is one authority.
type ca struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// Authority is the deployment's authorities, newest first.
type Authority struct {
	cas []ca
}

// renewAt is when two thirds of a certificate's validity have passed.
func renewAt(c *x509.Certificate) time.Time {
	return c.NotBefore.Add(c.NotAfter.Sub(c.NotBefore) * 2 / 3)
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

func newCA(now time.Time, validity time.Duration) (ca, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return ca{}, fmt.Errorf("generate the internal CA key: %w", err)
	}
	sn, err := serial()
	if err != nil {
		return ca{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn, Subject: pkix.Name{CommonName: fmt.Sprintf("Tandem internal CA %d", now.Unix())},
		NotBefore: now.Add(-skew), NotAfter: now.Add(validity),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return ca{}, fmt.Errorf("create the internal CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return ca{}, fmt.Errorf("parse the internal CA: %w", err)
	}
	return ca{cert: cert, key: key}, nil
}

// ParseAuthority reads a CA Secret's data; empty data is no authority.
func ParseAuthority(data map[string][]byte) (*Authority, error) {
	certs, err := parseCerts(data[KeyCA])
	if err != nil {
		return nil, fmt.Errorf("CA secret %s: %w", KeyCA, err)
	}
	var keys []*ecdsa.PrivateKey
	rest := data[KeyCAKey]
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		k, err := x509.ParseECPrivateKey(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("CA secret %s: %w", KeyCAKey, err)
		}
		keys = append(keys, k)
	}
	if len(keys) != len(certs) {
		return nil, fmt.Errorf("CA secret: %d certificates but %d keys", len(certs), len(keys))
	}
	a := &Authority{}
	for i := range certs {
		if !certs[i].IsCA || !keys[i].PublicKey.Equal(certs[i].PublicKey) {
			return nil, fmt.Errorf("CA secret: certificate %d is not a CA or does not match its key", i)
		}
		a.cas = append(a.cas, ca{cert: certs[i], key: keys[i]})
	}
	return a, nil
}

func parseCerts(b []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var blk *pem.Block
		if blk, b = pem.Decode(b); blk == nil {
			return out, nil
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
}

// Data is the CA Secret's data.
func (a *Authority) Data() (map[string][]byte, error) {
	var keys bytes.Buffer
	for _, c := range a.cas {
		der, err := x509.MarshalECPrivateKey(c.key)
		if err != nil {
			return nil, fmt.Errorf("encode the internal CA key: %w", err)
		}
		_ = pem.Encode(&keys, &pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	}
	return map[string][]byte{KeyCA: a.Bundle(), KeyCAKey: keys.Bytes()}, nil
}

// Bundle is the trust bundle: every authority's certificate, newest first.
func (a *Authority) Bundle() []byte {
	var b bytes.Buffer
	for _, c := range a.cas {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.cert.Raw})
	}
	return b.Bytes()
}

// Renew returns the authority as it should be at now, and whether it
// changed: a first authority when there is none, a new one first when the
// newest is two thirds through its validity, without those expired.
func (a *Authority) Renew(now time.Time, validity time.Duration) (*Authority, bool, error) {
	out := &Authority{}
	changed := false
	for _, c := range a.cas {
		if now.Before(c.cert.NotAfter) {
			out.cas = append(out.cas, c)
		} else {
			changed = true
		}
	}
	if len(out.cas) == 0 || !now.Before(renewAt(out.cas[0].cert)) {
		n, err := newCA(now, validity)
		if err != nil {
			return nil, false, err
		}
		out.cas = append([]ca{n}, out.cas...)
		changed = true
	}
	return out, changed, nil
}

// signer is the authority that signs at now: the newest one older than
// Propagation, or the newest when none is (a first authority).
func (a *Authority) signer(now time.Time) (ca, error) {
	if len(a.cas) == 0 {
		return ca{}, errors.New("no internal CA")
	}
	for _, c := range a.cas {
		if !now.Before(c.cert.NotBefore.Add(skew + Propagation)) {
			return c, nil
		}
	}
	return a.cas[len(a.cas)-1], nil
}

// nextChange is when the authority's signer or bundle may next change: its
// renewal, a new authority starting to sign, or an old one expiring.
func (a *Authority) nextChange(now time.Time) time.Time {
	var next time.Time
	consider := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if len(a.cas) > 0 {
		// The authority's own renewal: every leaf's bundle must follow it then, well
		// before the new authority signs anything.
		consider(renewAt(a.cas[0].cert))
	}
	if len(a.cas) > 1 {
		// A renewed authority that does not sign yet.
		consider(a.cas[0].cert.NotBefore.Add(skew + Propagation))
	}
	for _, c := range a.cas {
		consider(c.cert.NotAfter)
	}
	return next
}
