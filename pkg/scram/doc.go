// Package scram is SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL uses
// it: the verifier a server stores for a password, in PostgreSQL's text
// form (SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>, what
// pg_authid.rolpassword holds), and the server side of one exchange.
//
// Invariants: a Verifier never holds the password, only the salted keys
// derived from it; Parse(v.String()) == v; an exchange against a Mock
// verifier fails at the client's proof and at no earlier step, and a mock
// salt is the same for a user name at every attempt, so a client cannot
// tell an unknown user from a wrong password by the exchange's shape.
// The package imports nothing of Tandem.
package scram
