// Package pgwire serves the PostgreSQL wire protocol (version 3) over a
// sql.Engine, so that psql, pgx, pgbench and other Postgres clients work.
//
// It supports TLS (offered on SSLRequest, optionally required), SCRAM-
// SHA-256 password authentication when passwords are configured, against
// the configured password or else the SCRAM verifier of the user's role in
// the engine's catalog (and only loopback clients otherwise, unless
// configured to trust the network; a catalog role without LOGIN is
// refused in every mode), the
// simple and the extended query protocol (Parse/Bind/Describe/Execute/
// Sync with parameters in text or binary format, portals with row limits),
// results in text or binary format, ErrorResponse with SQLSTATE, COPY TO
// STDOUT for SUBSCRIBE, CancelRequest, ParameterStatus for reported
// session variables, and TCP keepalive on accepted connections
// (Config.KeepAlive). The database is always "tandem".
//
// Robustness: the backend's max_connections bounds concurrent
// connections (FATAL 53300 at startup, before authentication); a panic
// while a statement is parsed, planned, executed or its rows sent fails
// that statement with XX000 and is logged with its stack, the connection
// going on; temporary Accept errors (EMFILE, ENFILE, ECONNABORTED, ...)
// are retried with backoff, and Health reports a listener stopped by any
// other error (cmd/controller's /healthz).
//
// Once a connection is authenticated, a goroutine reads the client's
// bytes ahead into a bounded buffer (clientReader) from which the
// message loop decodes them, so that the end of the client's input (a
// close, a reset, a TCP keepalive timeout) cancels the running statement
// even while the loop is busy streaming results and reads nothing; this
// is what drops a SUBSCRIBE over COPY on a quiet relation when its
// client dies.
//
// Invariants: every connection goroutine, the read-ahead included, is
// owned by Serve and ends when its context is cancelled; a statement's
// context is cancelled by a CancelRequest carrying the connection's key
// and by the end of the client's input; reading ahead neither loses nor
// reorders client bytes, and the loop sees the end of input only after
// every message sent before it, so pipelined messages (pgx's Sync after
// Execute) are processed once each, in order; after an error in the
// extended protocol, messages are skipped until Sync, as Postgres does.
package pgwire
