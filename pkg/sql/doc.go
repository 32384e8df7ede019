// Package sql executes SQL statements: it parses them (package parse),
// resolves names against the catalog and plans queries to the dataflow
// plan IR (package planner), and carries them out against a Backend.
// Package pgwire serves it to Postgres clients.
//
// # The Backend interface
//
// Backend is everything the SQL layer needs from the rest of the system;
// in production the controller implements it, in tests sqltest.Fake. It is
// defined here, by its consumer, and kept small. It has six parts:
//
//   - Catalog: Items lists every item (user items u<N> in schema public,
//     introspection relations s<N> in schema introspection). CreateItem
//     stores a table, view, materialized view or index; for the last two
//     Item.Plan is the relation to maintain, over Gets of catalog ids (views
//     are always inlined, so a Get never names a view), and the backend
//     builds and installs the maintained dataflow on Item.Cluster: imports
//     for the Gets, a build of Plan, and an index export keyed by Item.Keys
//     or a storage sink. CreateSource creates a load generator and its
//     subsources (the backend knows their columns). DropItems drops items
//     that the SQL layer has ordered dependents-first and checked.
//     AlterTable replaces a table's name, columns and CREATE TABLE text
//     (ALTER TABLE). Generation identifies the state of items, roles and
//     grants: the engine reuses its catalog snapshot while it is unchanged.
//   - Tables: WriteTables appends row diffs to tables at one new timestamp;
//     a strict serializable read issued after it returns sees the write.
//   - Reads: Peek answers a query at one timestamp, either by running
//     PeekRequest.Plan in a one-shot dataflow or, on the fast path, by
//     reading an existing index (IndexPeek: key lookups or a full scan,
//     then an MFP). Subscribe starts a subscription whose Next returns
//     batches of timed updates with the new upper frontier.
//   - SystemParameters: ALTER SYSTEM SET/RESET and SHOW of parameters such
//     as enable_compute_interactive_dataflows; unknown names are 42704.
//   - Clusters: clusters and their replicas.
//   - Roles: roles (SCRAM verifiers, never passwords) and the privileges
//     granted on objects; the SQL layer decides who may do what
//     (privileges.go: PostgreSQL's rules, a view reading with its owner's
//     privileges through planner.Relation.ViewCatalog).
//
// Every Backend method may return errors carrying a SQLSTATE (a
// *sqlerr.Error or any error with a SQLState method); other errors reach
// the client as XX000.
//
// # Responsibilities of the SQL layer
//
// Name resolution, type checking and SQLSTATE errors; table constraints
// (PRIMARY KEY, UNIQUE, NOT NULL, CHECK) and defaults, declared in the
// table's CREATE TABLE text and enforced on every write under the write
// lock (keys.go, constraints.go), with a primary key kept as an index
// (keyindex.go); COPY FROM STDIN parsing (copy.go); dependency checks
// for DROP (2BP01 without CASCADE) and the order of a cascading drop;
// read-modify-write of UPDATE and DELETE, serialised per Engine so two
// sessions cannot interleave between the read and the write (every
// table write, transaction commits included, goes through applyWrites
// under that lock, and counts a version of each table it writes, against
// which a transaction that read and then wrote is validated at COMMIT:
// 40001 when a table it read was written since, tx_conflict.go); evaluation
// of plans that read no collection (SELECT 1, VALUES) without the
// backend; the finishing of results (ORDER BY, LIMIT, OFFSET; ORDER BY
// sorted on disk beyond max_query_memory, results held whole failing
// with 53200 beyond it); session
// variables (cluster, cluster_replica, transaction_isolation and the
// variables Postgres drivers expect); cursors, including cursors over
// SUBSCRIBE.
//
// Invariants: every relation a statement reads is checked for SELECT when
// the planner resolves it (snapshot.Resolve), so no read path (fast path,
// one-shot dataflow, SUBSCRIBE, cursors, COPY TO) can skip the check; an
// unsupported feature fails with 0A000 naming it rather
// than returning a different answer than Postgres would; every error
// returned by Session.Execute is a *sqlerr.Error with a SQLSTATE, or a
// *sqlerr.PanicError (XX000) when the statement panicked.
package sql
