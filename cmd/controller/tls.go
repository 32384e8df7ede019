package main

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// certReloader serves the certificate in certFile and keyFile and loads
// them again when either file changes, so that a renewed certificate (e.g.
// a Kubernetes Secret updated by cert-manager) is picked up without a
// restart. A renewal that does not parse keeps the previous certificate.
type certReloader struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	modTime [2]time.Time
}

func newCertReloader(certFile, keyFile string) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile}
	if err := r.reload(); err != nil {
		return nil, err
	}
	return r, nil
}

// tlsConfig is the server TLS configuration serving r's certificate.
func (r *certReloader) tlsConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.get}
}

func (r *certReloader) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if err := r.reload(); err != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.cert == nil {
			return nil, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cert, nil
}

// reload loads the pair again if either file's modification time changed.
func (r *certReloader) reload() error {
	var mt [2]time.Time
	for i, f := range []string{r.certFile, r.keyFile} {
		st, err := os.Stat(f)
		if err != nil {
			return fmt.Errorf("tls: %w", err)
		}
		mt[i] = st.ModTime()
	}
	r.mu.Lock()
	same := r.cert != nil && mt == r.modTime
	r.mu.Unlock()
	if same {
		return nil
	}
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("tls: load %s and %s: %w", r.certFile, r.keyFile, err)
	}
	r.mu.Lock()
	r.cert, r.modTime = &cert, mt
	r.mu.Unlock()
	return nil
}
