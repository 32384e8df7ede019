// Package sqltest provides Fake, an in-memory implementation of
// sql.Backend for tests of the SQL layer and the wire protocol.
//
// Fake keeps tables as lists of timed updates and computes every read by
// evaluating the plan with the naive reference evaluator
// (pkg/compute/reference) over the tables' contents at the read time:
// materialized views and indexes are recomputed from their plans rather
// than maintained, which makes Fake an independent check of what the
// real engine maintains incrementally. Each table write advances the
// clock by one; subscriptions see every write as one step.
//
// Load-generator sources have the column layout the engine's generators
// use but no rows in Fake.
package sqltest
