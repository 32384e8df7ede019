// Package internaltls authenticates Tandem's internal gRPC links (the
// controller to a replica's compute protocol port, a replica to the
// controller's storage service) with mutual TLS under a per-deployment
// certificate authority.
//
// EnsureAuthority creates the authority (an ECDSA P-256 CA) in a directory
// on first use and loads it afterwards; Issue writes a leaf certificate
// signed by it, valid for the name ServerName, which every internal client
// verifies whatever address it dialled, so one certificate serves every
// process of a deployment. Credentials wraps a configuration as gRPC
// transport credentials that count refused handshakes.
//
// Invariants: a server configuration requires and verifies a client
// certificate chaining to the authority, so a peer without one, or with a
// certificate of another authority, is refused during the handshake
// before any RPC, and counted; keys are written with mode 0600. The
// package imports nothing of Tandem.
package internaltls
