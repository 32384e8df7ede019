// Package internaltls authenticates Tandem's internal links (the
// controller to a replica's compute protocol port, a replica to the
// controller's storage service, the mesh between a replica's processes)
// with mutual TLS under a per-deployment certificate authority.
//
// EnsureAuthority creates the authority (an ECDSA P-256 CA) in a directory
// on first use and loads it afterwards; Issue writes a leaf certificate
// signed by it, valid for the name ServerName, which every internal client
// verifies whatever address it dialled, so one certificate serves every
// process of a deployment. On Kubernetes the operator issues the files
// into Secrets instead. ServerConfig and ClientConfig build TLS
// configurations over a certificate's files that read the files again at
// every handshake and switch to their new contents when they change, so a
// renewed certificate or a rotated authority bundle (a Secret update) takes
// effect without a restart. Rotate replaces an authority in a directory
// with a new one while peers keep handshaking: the bundle first trusts the
// new and the previous authority, then the leaves are issued again under
// the new one (RotateIfDue does it within RenewBefore of the expiry).
// Credentials wraps a configuration as gRPC
// transport credentials that count refused handshakes.
//
// Invariants: a server configuration requires a client certificate and
// verifies it against the authorities of the current CA file, a client
// configuration verifies the server's chain and the name ServerName the
// same way, so a peer without a certificate, or with one of another
// authority, is refused during the handshake before any RPC, and counted;
// files that change into something unparsable (a half-written update)
// leave the last good certificate in use; keys are written with mode 0600;
// files are replaced atomically (a rename); after a rotation the bundle
// holds exactly the new and the previous authority.
// The package imports nothing of Tandem.
package internaltls
