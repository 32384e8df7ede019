// Package parse turns SQL text into statements.
//
// PostgreSQL statements are parsed by PostgreSQL's own grammar (libpg_query
// through pg_query_go), so anything Postgres accepts parses exactly as it
// would in Postgres. Tandem's own statements, which Postgres does not know
// (CREATE SOURCE ... FROM LOAD GENERATOR, SUBSCRIBE, DECLARE ... CURSOR FOR
// SUBSCRIBE, CREATE/DROP CLUSTER [REPLICA], CREATE [DEFAULT] INDEX ... IN
// CLUSTER, CREATE MATERIALIZED VIEW ... IN CLUSTER, SHOW SOURCES|TABLES|...),
// are recognised by a small hand-written pre-parser that looks at the first
// keywords of each statement. Embedded queries and expressions inside those
// statements (the query of a SUBSCRIBE, the key expressions of an index) are
// again parsed by the Postgres grammar.
//
// Invariants: Parse never panics on any input; every error it returns is a
// *sqlerr.Error with code 42601 (syntax_error) or 0A000.
package parse
