package internaltls

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
)

// material is one loaded generation of a Files: the pair, the pool of
// authorities it trusts, and the bytes they were parsed from.
type material struct {
	pair tls.Certificate
	pool *x509.CertPool
	raw  [3][]byte // CA, certificate, key
}

// source serves the current material of a Files, reloading it whenever
// the files' contents change (a rotated Kubernetes Secret, a renewed
// certificate). A change that does not parse (a half-written update)
// keeps the last good material.
type source struct {
	files Files
	mu    sync.Mutex
	cur   *material
}

func newSource(f Files) (*source, error) {
	s := &source{files: f}
	raw, err := s.read()
	if err != nil {
		return nil, err
	}
	m, err := parse(f, raw)
	if err != nil {
		return nil, err
	}
	s.cur = m
	return s, nil
}

func (s *source) read() ([3][]byte, error) {
	var raw [3][]byte
	for i, p := range []string{s.files.CA, s.files.Cert, s.files.Key} {
		b, err := os.ReadFile(p)
		if err != nil {
			return raw, fmt.Errorf("internal TLS: %w", err)
		}
		raw[i] = b
	}
	return raw, nil
}

func parse(f Files, raw [3][]byte) (*material, error) {
	pool, err := parsePool(f, raw[0])
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(raw[1], raw[2])
	if err != nil {
		return nil, fmt.Errorf("internal TLS certificate %s: %w", f.Cert, err)
	}
	return &material{pair: pair, pool: pool, raw: raw}, nil
}

func parsePool(f Files, ca []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("internal TLS CA %s: no certificate", f.CA)
	}
	return pool, nil
}

// current returns the material of the files as they are now, or the last
// good one when they cannot be read or parsed. The authorities and the
// pair are taken apart: a rotation rewrites the bundle and then each
// leaf's certificate and key, so a reader may see a new certificate
// beside the previous key for a moment; that keeps the previous pair but
// must not keep the previous authorities, or a peer already holding a
// leaf of the new authority would be refused.
func (s *source) current() *material {
	raw, err := s.read()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || sameRaw(raw, s.cur.raw) {
		return s.cur
	}
	if m, err := parse(s.files, raw); err == nil {
		s.cur = m
		return s.cur
	}
	if !bytes.Equal(raw[0], s.cur.raw[0]) {
		if pool, err := parsePool(s.files, raw[0]); err == nil {
			next := *s.cur
			next.pool, next.raw[0] = pool, raw[0]
			s.cur = &next
		}
	}
	return s.cur
}

func sameRaw(a, b [3][]byte) bool {
	return bytes.Equal(a[0], b[0]) && bytes.Equal(a[1], b[1]) && bytes.Equal(a[2], b[2])
}

// verify checks a peer's chain against the current authorities, for
// usage; a client additionally checks the name ServerName.
func (s *source) verify(cs tls.ConnectionState, usage x509.ExtKeyUsage, name string) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("internal TLS: the peer presented no certificate")
	}
	opts := x509.VerifyOptions{Roots: s.current().pool, DNSName: name,
		Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{usage}}
	for _, c := range cs.PeerCertificates[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := cs.PeerCertificates[0].Verify(opts); err != nil {
		return fmt.Errorf("internal TLS: %w", err)
	}
	return nil
}

// ServerConfig is a server's configuration: it presents f's certificate
// and requires a client certificate signed by f's authority. Both are
// read again whenever the files change, so a rotated certificate or
// authority takes effect at the next handshake without a restart.
func ServerConfig(f Files) (*tls.Config, error) {
	s, err := newSource(f)
	if err != nil {
		return nil, err
	}
	// The client's chain is verified by VerifyConnection against the
	// authorities of the moment, which ClientCAs could not follow.
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		ClientAuth: tls.RequireAnyClientCert,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return &s.current().pair, nil
		},
		VerifyConnection: func(cs tls.ConnectionState) error {
			return s.verify(cs, x509.ExtKeyUsageClientAuth, "")
		},
	}, nil
}

// ClientConfig is a client's configuration: it presents f's certificate
// and verifies the server's against f's authority, for ServerName. Like
// ServerConfig's, both follow the files.
func ClientConfig(f Files) (*tls.Config, error) {
	s, err := newSource(f)
	if err != nil {
		return nil, err
	}
	// InsecureSkipVerify only turns off the fixed RootCAs check:
	// VerifyConnection verifies the chain and the name against the
	// current authorities and fails the handshake otherwise.
	return &tls.Config{
		MinVersion:         tls.VersionTLS13,
		ServerName:         ServerName,
		InsecureSkipVerify: true, //nolint:gosec // verified in VerifyConnection
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &s.current().pair, nil
		},
		VerifyConnection: func(cs tls.ConnectionState) error {
			return s.verify(cs, x509.ExtKeyUsageServerAuth, ServerName)
		},
	}, nil
}
