package internaltls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// ServerName is the name every internal certificate is valid for and every
// internal client verifies.
const ServerName = "tandem-internal"

// File names inside an authority's directory.
const (
	CAFile    = "ca.crt"
	caKeyFile = "ca.key"
)

// validity of generated certificates.
const validity = 10 * 365 * 24 * time.Hour

// Authority is a certificate authority that issues internal certificates.
type Authority struct {
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// EnsureAuthority loads the authority in dir, creating it on first use.
func EnsureAuthority(dir string) (*Authority, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("internal TLS directory: %w", err)
	}
	certPath, keyPath := filepath.Join(dir, CAFile), filepath.Join(dir, caKeyFile)
	if _, err := os.Stat(certPath); errors.Is(err, os.ErrNotExist) {
		if err := createAuthority(certPath, keyPath); err != nil {
			return nil, err
		}
	}
	cert, key, err := loadAuthority(certPath, keyPath)
	if err != nil {
		return nil, err
	}
	return &Authority{dir: dir, cert: cert, key: key}, nil
}

// loadAuthority loads the signing key and, of the bundle's certificates,
// the one of that key. Rotate writes the bundle (new authority first)
// before the key, so between the two writes, or after a crash there, the
// bundle's first certificate is not the key's: the previous authority,
// still in the bundle, is the one to sign with.
func loadAuthority(certPath, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, fmt.Errorf("load the internal CA: %w", err)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, fmt.Errorf("load the internal CA: %w", err)
	}
	var lastErr error
	for rest := certPEM; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		pair, err := tls.X509KeyPair(pem.EncodeToMemory(block), keyPEM)
		if err != nil {
			lastErr = err
			continue
		}
		cert, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			return nil, nil, fmt.Errorf("parse the internal CA: %w", err)
		}
		key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
		if !ok {
			return nil, nil, errors.New("the internal CA's key is not ECDSA")
		}
		return cert, key, nil
	}
	if lastErr == nil {
		lastErr = errors.New("no certificate in " + certPath)
	}
	return nil, nil, fmt.Errorf("load the internal CA: no certificate of %s matches its key: %w", keyPath, lastErr)
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

func createAuthority(certPath, keyPath string) error {
	der, key, err := newAuthority(time.Now())
	if err != nil {
		return err
	}
	return writePair(certPath, keyPath, der, key)
}

// newAuthority makes a new self-signed authority valid from now.
func newAuthority(now time.Time) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate the internal CA key: %w", err)
	}
	sn, err := serial()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn, Subject: pkix.Name{CommonName: "Tandem internal CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validity),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("create the internal CA: %w", err)
	}
	return der, key, nil
}

// writePair writes a key and its certificate, each replaced atomically
// (a reader between the two sees a mismatched pair, which the
// configurations refuse to load, keeping the last good one).
func writePair(certPath, keyPath string, der []byte, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writeAtomic(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	return writeAtomic(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

// Files names a certificate, its key and the authority that signed it.
type Files struct {
	CA, Cert, Key string
}

// Issue writes a certificate for name (a file name prefix: "controller",
// "replica"), valid as client and server for ServerName, and returns its
// files.
func (a *Authority) Issue(name string) (Files, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Files{}, fmt.Errorf("generate the %s key: %w", name, err)
	}
	sn, err := serial()
	if err != nil {
		return Files{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: sn, Subject: pkix.Name{CommonName: name}, DNSNames: []string{ServerName},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return Files{}, fmt.Errorf("issue the %s certificate: %w", name, err)
	}
	f := Files{CA: filepath.Join(a.dir, CAFile), Cert: filepath.Join(a.dir, name+".crt"), Key: filepath.Join(a.dir, name+".key")}
	return f, writePair(f.Cert, f.Key, der, key)
}
