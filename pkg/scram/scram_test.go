package scram

import (
	"bytes"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// pgVerifier is what PostgreSQL 15 stored in pg_authid.rolpassword for
// CREATE ROLE v LOGIN PASSWORD 'secret' (password_encryption scram-sha-256).
const pgVerifier = "SCRAM-SHA-256$4096:/nJbSqTSBR9bN5u6A/i0GQ==$YQTOV0UUEjBAA7io/7e7rVsZKrJ4Gz+kpv4s+hScM4A=:7TjgoZ3MpVzMyJJNul3ZvgKTiP2f4VtMgSdyUnp8W3o="

// exchange runs a whole exchange for password against srv as a client
// would, returning the server's error at the proof.
func exchange(t *testing.T, srv *Server, password string) error {
	t.Helper()
	first, err := srv.First("n,,n=,r=clientnonce")
	if err != nil {
		t.Fatalf("first: %v", err)
	}
	var nonce string
	var salt []byte
	iters := 0
	for _, attr := range strings.Split(first, ",") {
		switch {
		case strings.HasPrefix(attr, "r="):
			nonce = attr[2:]
		case strings.HasPrefix(attr, "s="):
			salt, _ = base64.StdEncoding.DecodeString(attr[2:])
		case strings.HasPrefix(attr, "i="):
			for _, c := range attr[2:] {
				iters = iters*10 + int(c-'0')
			}
		}
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, iters, sha256.Size)
	if err != nil {
		t.Fatal(err)
	}
	clientKey := hmacSHA256(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	withoutProof := "c=biws,r=" + nonce
	sig := hmacSHA256(stored[:], "n=,r=clientnonce,"+first+","+withoutProof)
	proof := make([]byte, len(clientKey))
	for i := range proof {
		proof[i] = clientKey[i] ^ sig[i]
	}
	final, err := srv.Final(withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof))
	if err != nil {
		return err
	}
	wantSig := hmacSHA256(hmacSHA256(salted, "Server Key"), "n=,r=clientnonce,"+first+","+withoutProof)
	if final != "v="+base64.StdEncoding.EncodeToString(wantSig) {
		t.Fatalf("server signature %q does not prove the server knows the verifier", final)
	}
	return nil
}

func TestExchange(t *testing.T) {
	ours, err := NewVerifier("secret")
	if err != nil {
		t.Fatal(err)
	}
	pg, err := Parse(pgVerifier)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		verifier Verifier
		password string
		ok       bool
	}{
		{"ours right", ours, "secret", true},
		{"ours wrong", ours, "Secret", false},
		{"postgres' verifier right", pg, "secret", true},
		{"postgres' verifier wrong", pg, "", false},
		{"mock", Mock([]byte("k"), "v"), "secret", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := exchange(t, &Server{Verifier: tc.verifier}, tc.password)
			if tc.ok && err != nil {
				t.Fatalf("right password refused: %v", err)
			}
			if !tc.ok && !errors.Is(err, ErrAuthFailed) {
				t.Fatalf("got %v, want ErrAuthFailed", err)
			}
		})
	}
}

func TestTextForm(t *testing.T) {
	// The password holds characters base64 never writes, so finding it in
	// the text form means it leaked (a short one like "pw" turns up in the
	// random salt's and keys' base64 about one run in thirty).
	const password = "pass word!"
	v, err := NewVerifier(password)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(v.String(), password) || !IsVerifier(v.String()) {
		t.Fatalf("text form %q", v.String())
	}
	back, err := Parse(v.String())
	if err != nil || back.String() != v.String() || !bytes.Equal(back.StoredKey, v.StoredKey) {
		t.Fatalf("round trip %q -> %q, %v", v.String(), back.String(), err)
	}
	for _, bad := range []string{"", "md5abc", "SCRAM-SHA-256$", "SCRAM-SHA-256$x:AA==$AA==:AA==",
		"SCRAM-SHA-256$4096:AA==$AA==:AA==", "SCRAM-SHA-256$4096:!!$" + strings.Repeat("A", 44) + ":" + strings.Repeat("A", 44)} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestMockSaltStable(t *testing.T) {
	a, b := Mock([]byte("k"), "eve"), Mock([]byte("k"), "eve")
	if !bytes.Equal(a.Salt, b.Salt) || bytes.Equal(a.StoredKey, b.StoredKey) {
		t.Fatal("a mock's salt must be stable per user and its keys fresh")
	}
	if bytes.Equal(a.Salt, Mock([]byte("k"), "mallory").Salt) {
		t.Fatal("two users share a mock salt")
	}
}
