package internaltls

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// RenewBefore is how long before its expiry an authority is rotated by
// RotateIfDue (a fifth of its validity).
const RenewBefore = validity / 5

// Expiry is when the authority's signing certificate expires.
func (a *Authority) Expiry() time.Time { return a.cert.NotAfter }

// Due reports whether the authority should be rotated at now: it expires
// within RenewBefore.
func (a *Authority) Due(now time.Time) bool { return !now.Add(RenewBefore).Before(a.cert.NotAfter) }

// Rotate replaces the signing authority with a new one without breaking a
// handshake, in an order every peer can follow because peers read their
// files again at each handshake:
//
//  1. the CA bundle becomes the new authority followed by the previous
//     one, so every peer trusts certificates of either;
//  2. the new key replaces the previous one, and the certificates names
//     (the leaves Issue wrote: "controller", "replica") are issued again
//     under the new authority.
//
// The previous authority stays in the bundle until the next rotation
// (authorities older than it are dropped then), so a peer still
// presenting a leaf of the previous authority (one whose files could not
// be read at its last handshake) is still accepted. Every file is
// replaced atomically (a rename). Rotate is not safe for concurrent use
// with itself or Issue on the same directory.
func (a *Authority) Rotate(names ...string) error {
	der, key, err := newAuthority(time.Now())
	if err != nil {
		return err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return fmt.Errorf("parse the new internal CA: %w", err)
	}
	bundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if time.Now().Before(a.cert.NotAfter) {
		bundle = append(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.cert.Raw})...)
	}
	certPath, keyPath := filepath.Join(a.dir, CAFile), filepath.Join(a.dir, caKeyFile)
	if err := writeAtomic(certPath, bundle, 0o644); err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writeAtomic(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	a.cert, a.key = cert, key
	for _, n := range names {
		if _, err := a.Issue(n); err != nil {
			return fmt.Errorf("rotate the internal CA: %w", err)
		}
	}
	return nil
}

// RotateIfDue rotates the authority (re-issuing names) when it is Due at
// now, and reports whether it did.
func (a *Authority) RotateIfDue(now time.Time, names ...string) (bool, error) {
	if !a.Due(now) {
		return false, nil
	}
	return true, a.Rotate(names...)
}

// writeAtomic replaces path with data: a reader sees the old contents or
// the new, never a part.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
