package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"time"
)

// Plan decides a leaf Secret at now: the data to write (nil when data is
// up to date) and when to look again (renewal, or a change of the
// authority's signer or bundle). A leaf is issued for name when data holds
// none, one that does not parse or does not chain to the current signer,
// one two thirds through its validity, or a bundle other than the
// authority's.
func Plan(a *Authority, data map[string][]byte, now time.Time, name string, validity time.Duration) (map[string][]byte, time.Time, error) {
	signer, err := a.signer(now)
	if err != nil {
		return nil, time.Time{}, err
	}
	next := a.nextChange(now)
	if leaf := current(data, signer, a.Bundle(), now); leaf != nil {
		return nil, earliest(next, renewAt(leaf)), nil
	}
	out, leaf, err := issue(signer, now, name, validity)
	if err != nil {
		return nil, time.Time{}, err
	}
	out[KeyCA] = a.Bundle()
	return out, earliest(next, renewAt(leaf)), nil
}

// current is data's leaf when it is still good at now, else nil.
func current(data map[string][]byte, signer ca, bundle []byte, now time.Time) *x509.Certificate {
	if !bytes.Equal(data[KeyCA], bundle) {
		return nil
	}
	pair, err := tls.X509KeyPair(data[KeyCert], data[KeyKey])
	if err != nil || pair.Leaf == nil {
		return nil
	}
	leaf := pair.Leaf
	if leaf.CheckSignatureFrom(signer.cert) != nil || !now.Before(renewAt(leaf)) {
		return nil
	}
	return leaf
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

func issue(signer ca, now time.Time, name string, validity time.Duration) (map[string][]byte, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate the %s key: %w", name, err)
	}
	sn, err := serial()
	if err != nil {
		return nil, nil, err
	}
	notAfter := now.Add(validity)
	if notAfter.After(signer.cert.NotAfter) {
		notAfter = signer.cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn, Subject: pkix.Name{CommonName: name}, DNSNames: []string{ServerName},
		NotBefore: now.Add(-skew), NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer.cert, &key.PublicKey, signer.key)
	if err != nil {
		return nil, nil, fmt.Errorf("issue the %s certificate: %w", name, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("parse the %s certificate: %w", name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encode the %s key: %w", name, err)
	}
	return map[string][]byte{
		KeyCert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyKey:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, leaf, nil
}
