// Package oracle checks Tandem's SQL answers against a real PostgreSQL
// server.
//
// A script (pkg/sql/testdata/*.slt) is a sequence of records separated by
// blank lines, in the spirit of sqllogictest:
//
//	statement ok            run on both; both must succeed
//	statement error [CODE]  run on both; both must fail (with CODE, or
//	                        with the same SQLSTATE when CODE is absent)
//	tandem ok               run on Tandem only (CREATE INDEX, CREATE
//	                        MATERIALIZED VIEW, ...)
//	tandem error CODE       run on Tandem only, which must fail with
//	                        CODE (a refusal such as 0A000 of something
//	                        Postgres supports)
//	postgres ok             run on Postgres only (the stand-in for a
//	                        Tandem-only statement, e.g. a plain VIEW for a
//	                        materialized view)
//	query [ordered]         run on both and compare the rows as text,
//	                        as multisets unless "ordered"
//
// followed by the SQL text (one statement, possibly over several lines).
// Lines starting with # are comments. Because queries run again after
// every write, scripts that create indexes and materialized views before
// writing check that those are kept up to date, at several times.
//
// Postgres is started by StartPostgres from the binaries that
// hack/postgres.sh installs; the Tandem side is any database reachable
// with the wire protocol: by default the wire protocol server over the
// fake backend (pkg/sql/sqltest), or a running Tandem named by
// TANDEM_ORACLE_ADDR (host:port).
package oracle
