// Package certs issues the certificates of Tandem's internal links on
// Kubernetes: a deployment certificate authority kept in a Secret of the
// operator's namespace, and leaf certificates (one Secret per
// ComputeReplica, one for the controller) that the pods mount and the
// processes reload when the Secret changes (pkg/internaltls reads the
// files at every handshake).
//
// A leaf Secret holds ca.crt (the trust bundle: every authority not yet
// expired, newest first), tls.crt and tls.key. Leaves are valid for the
// name ServerName, as client and server, and are re-issued when two thirds
// of their validity have passed, when another authority should sign them,
// or when the bundle changes. The authority is renewed the same way: the
// new one joins the bundle at once but signs leaves only after
// Propagation, so that every pod trusts it before it meets a certificate
// it signed; the old one stays in the bundle until it expires.
//
// Invariants: a leaf Secret's tls.crt always chains to an authority in
// its own ca.crt; Plan is a pure function of the authority, the Secret's
// data and the time, and asks for no write when nothing is due (a pass
// that changes nothing writes nothing); keys never leave Secrets.
package certs
