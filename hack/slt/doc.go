// Command slt runs SQLite's sqllogictest scripts against a PostgreSQL-wire
// server and scores the results (parser and formatter: hack/slt/internal/slt).
//
//	go run ./hack/slt [flags] FILE|DIR...
//
// The server is one of: --dsn (a server the caller runs; --fresh-db gives
// each script a database of its own where CREATE DATABASE exists),
// --start-postgres (a throwaway PostgreSQL, as the oracle suite starts one),
// or --controller/--replica (a fresh Tandem controller per script, see
// tandemTarget). The summary goes to stdout, progress to stderr. The exit
// status is 2 when the run broke (a server died or could not be reached, a
// script did not parse) and 1 with --fail-on-wrong when a query returned a
// wrong result; refused statements never fail the run.
package main
