package pgwire

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// scramIterations is the PBKDF2 iteration count of stored SCRAM secrets
// (Postgres' default).
const scramIterations = 4096

// scramSecret is what the server keeps for a password: never the
// password itself (RFC 5802 section 3).
type scramSecret struct {
	salt      []byte
	iters     int
	storedKey []byte
	serverKey []byte
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// newSCRAMSecret derives the stored secret for a password with a random
// salt.
func newSCRAMSecret(password string) (scramSecret, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return scramSecret{}, fmt.Errorf("scram salt: %w", err)
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, scramIterations, sha256.Size)
	if err != nil {
		return scramSecret{}, fmt.Errorf("scram derive: %w", err)
	}
	clientKey := hmacSHA256(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	return scramSecret{salt: salt, iters: scramIterations, storedKey: stored[:], serverKey: hmacSHA256(salted, "Server Key")}, nil
}

// mockSCRAMSecret is the secret an unknown user is challenged with: its salt
// is derived from the user name (stable across attempts, like a real
// user's) and its keys are random, so the exchange fails at the proof.
func mockSCRAMSecret(key []byte, user string) scramSecret {
	stored, server := make([]byte, sha256.Size), make([]byte, sha256.Size)
	_, _ = rand.Read(stored)
	_, _ = rand.Read(server)
	return scramSecret{salt: hmacSHA256(key, "salt:"+user)[:16], iters: scramIterations, storedKey: stored, serverKey: server}
}

// scramServer runs the server side of one SCRAM-SHA-256 exchange.
type scramServer struct {
	secret          scramSecret
	clientFirstBare string
	serverFirst     string
	nonce           string
}

var errSCRAM = errors.New("malformed SCRAM message")

// first handles client-first-message and returns server-first-message.
func (s *scramServer) first(msg string) (string, error) {
	// gs2 header: "n,," (no channel binding) or "y,,".
	parts := strings.SplitN(msg, ",", 3)
	if len(parts) != 3 || (parts[0] != "n" && parts[0] != "y") {
		if len(parts) == 3 && strings.HasPrefix(parts[0], "p=") {
			return "", errors.New("SCRAM channel binding is not supported")
		}
		return "", errSCRAM
	}
	s.clientFirstBare = parts[2]
	var clientNonce string
	for _, attr := range strings.Split(s.clientFirstBare, ",") {
		if v, ok := strings.CutPrefix(attr, "r="); ok {
			clientNonce = v
		}
	}
	if clientNonce == "" {
		return "", errSCRAM
	}
	nb := make([]byte, 18)
	if _, err := rand.Read(nb); err != nil {
		return "", fmt.Errorf("scram nonce: %w", err)
	}
	s.nonce = clientNonce + base64.StdEncoding.EncodeToString(nb)
	s.serverFirst = fmt.Sprintf("r=%s,s=%s,i=%d", s.nonce, base64.StdEncoding.EncodeToString(s.secret.salt), s.secret.iters)
	return s.serverFirst, nil
}

// final checks client-final-message and returns server-final-message.
func (s *scramServer) final(msg string) (string, error) {
	i := strings.LastIndex(msg, ",p=")
	if i < 0 {
		return "", errSCRAM
	}
	withoutProof := msg[:i]
	proof, err := base64.StdEncoding.DecodeString(msg[i+3:])
	if err != nil || len(proof) != sha256.Size {
		return "", errSCRAM
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
	clientSig := hmacSHA256(s.secret.storedKey, authMessage)
	clientKey := make([]byte, len(proof))
	for k := range proof {
		clientKey[k] = proof[k] ^ clientSig[k]
	}
	stored := sha256.Sum256(clientKey)
	if subtle.ConstantTimeCompare(stored[:], s.secret.storedKey) != 1 {
		return "", errors.New("password authentication failed")
	}
	return "v=" + base64.StdEncoding.EncodeToString(hmacSHA256(s.secret.serverKey, authMessage)), nil
}
