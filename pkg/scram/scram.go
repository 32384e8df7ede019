package scram

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Iterations is the PBKDF2 iteration count of new verifiers (PostgreSQL's
// default scram_iterations).
const Iterations = 4096

// Prefix starts the text form of a verifier.
const Prefix = "SCRAM-SHA-256$"

// Verifier is what a server keeps for a password: never the password
// itself (RFC 5802 section 3).
type Verifier struct {
	Salt      []byte
	Iters     int
	StoredKey []byte
	ServerKey []byte
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// NewVerifier derives the verifier of a password with a random salt.
func NewVerifier(password string) (Verifier, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return Verifier{}, fmt.Errorf("scram salt: %w", err)
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, Iterations, sha256.Size)
	if err != nil {
		return Verifier{}, fmt.Errorf("scram derive: %w", err)
	}
	clientKey := hmacSHA256(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	return Verifier{Salt: salt, Iters: Iterations, StoredKey: stored[:], ServerKey: hmacSHA256(salted, "Server Key")}, nil
}

// String is PostgreSQL's text form of the verifier.
func (v Verifier) String() string {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("%s%d:%s$%s:%s", Prefix, v.Iters, b64(v.Salt), b64(v.StoredKey), b64(v.ServerKey))
}

// IsVerifier reports whether s looks like a verifier's text form (as
// PostgreSQL decides whether CREATE ROLE ... PASSWORD was given a
// password or an already derived verifier).
func IsVerifier(s string) bool { return strings.HasPrefix(s, Prefix) }

// Parse reads a verifier's text form.
func Parse(s string) (Verifier, error) {
	bad := func(what string) (Verifier, error) {
		return Verifier{}, fmt.Errorf("invalid SCRAM-SHA-256 verifier: %s", what)
	}
	rest, ok := strings.CutPrefix(s, Prefix)
	if !ok {
		return bad("missing " + Prefix)
	}
	iterSalt, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return bad("missing keys")
	}
	iterText, saltText, ok := strings.Cut(iterSalt, ":")
	if !ok {
		return bad("missing salt")
	}
	iters, err := strconv.Atoi(iterText)
	if err != nil || iters < 1 {
		return bad("iteration count")
	}
	storedText, serverText, ok := strings.Cut(keys, ":")
	if !ok {
		return bad("missing server key")
	}
	dec := base64.StdEncoding.DecodeString
	salt, err1 := dec(saltText)
	stored, err2 := dec(storedText)
	server, err3 := dec(serverText)
	if err1 != nil || err2 != nil || err3 != nil || len(salt) == 0 || len(stored) != sha256.Size || len(server) != sha256.Size {
		return bad("encoding")
	}
	return Verifier{Salt: salt, Iters: iters, StoredKey: stored, ServerKey: server}, nil
}

// Mock is the verifier an unknown user is challenged with: its salt is
// derived from key and the user name (stable across attempts, like a real
// user's) and its keys are random, so the exchange fails at the proof.
func Mock(key []byte, user string) Verifier {
	stored, server := make([]byte, sha256.Size), make([]byte, sha256.Size)
	_, _ = rand.Read(stored)
	_, _ = rand.Read(server)
	return Verifier{Salt: hmacSHA256(key, "salt:"+user)[:16], Iters: Iterations, StoredKey: stored, ServerKey: server}
}

// Server runs the server side of one SCRAM-SHA-256 exchange.
type Server struct {
	Verifier        Verifier
	clientFirstBare string
	serverFirst     string
	nonce           string
}

// ErrMalformed is a SCRAM message that does not parse.
var ErrMalformed = errors.New("malformed SCRAM message")

// ErrAuthFailed is a proof that does not match the verifier.
var ErrAuthFailed = errors.New("password authentication failed")

// First handles client-first-message and returns server-first-message.
func (s *Server) First(msg string) (string, error) {
	// gs2 header: "n,," (no channel binding) or "y,,".
	parts := strings.SplitN(msg, ",", 3)
	if len(parts) != 3 || (parts[0] != "n" && parts[0] != "y") {
		if len(parts) == 3 && strings.HasPrefix(parts[0], "p=") {
			return "", errors.New("SCRAM channel binding is not supported")
		}
		return "", ErrMalformed
	}
	s.clientFirstBare = parts[2]
	var clientNonce string
	for _, attr := range strings.Split(s.clientFirstBare, ",") {
		if v, ok := strings.CutPrefix(attr, "r="); ok {
			clientNonce = v
		}
	}
	if clientNonce == "" {
		return "", ErrMalformed
	}
	nb := make([]byte, 18)
	if _, err := rand.Read(nb); err != nil {
		return "", fmt.Errorf("scram nonce: %w", err)
	}
	s.nonce = clientNonce + base64.StdEncoding.EncodeToString(nb)
	s.serverFirst = fmt.Sprintf("r=%s,s=%s,i=%d", s.nonce, base64.StdEncoding.EncodeToString(s.Verifier.Salt), s.Verifier.Iters)
	return s.serverFirst, nil
}

// Final checks client-final-message and returns server-final-message.
func (s *Server) Final(msg string) (string, error) {
	i := strings.LastIndex(msg, ",p=")
	if i < 0 {
		return "", ErrMalformed
	}
	withoutProof := msg[:i]
	proof, err := base64.StdEncoding.DecodeString(msg[i+3:])
	if err != nil || len(proof) != sha256.Size {
		return "", ErrMalformed
	}
	var nonce string
	for _, attr := range strings.Split(withoutProof, ",") {
		if v, ok := strings.CutPrefix(attr, "r="); ok {
			nonce = v
		}
	}
	if nonce != s.nonce {
		return "", errors.New("SCRAM nonce mismatch")
	}
	authMessage := s.clientFirstBare + "," + s.serverFirst + "," + withoutProof
	clientSig := hmacSHA256(s.Verifier.StoredKey, authMessage)
	clientKey := make([]byte, len(proof))
	for k := range proof {
		clientKey[k] = proof[k] ^ clientSig[k]
	}
	stored := sha256.Sum256(clientKey)
	if subtle.ConstantTimeCompare(stored[:], s.Verifier.StoredKey) != 1 {
		return "", ErrAuthFailed
	}
	return "v=" + base64.StdEncoding.EncodeToString(hmacSHA256(s.Verifier.ServerKey, authMessage)), nil
}
