// Package pgwire serves the PostgreSQL wire protocol (version 3) over a
// sql.Engine, so that psql, pgx, pgbench and other Postgres clients work.
//
// It supports TLS (offered on SSLRequest, optionally required), SCRAM-
// SHA-256 password authentication when passwords are configured (and only
// loopback clients otherwise, unless configured to trust the network), the
// simple and the extended query protocol (Parse/Bind/Describe/Execute/
// Sync with parameters in text or binary format, portals with row limits),
// results in text or binary format, ErrorResponse with SQLSTATE, COPY TO
// STDOUT for SUBSCRIBE, CancelRequest, and ParameterStatus for reported
// session variables. The database is always "tandem".
//
// Invariants: every connection goroutine is owned by Serve and ends when
// its context is cancelled; a statement's context is cancelled by a
// CancelRequest carrying the connection's key; after an error in the
// extended protocol, messages are skipped until Sync, as Postgres does.
package pgwire
