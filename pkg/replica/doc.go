// Package replica assembles one process of a compute replica: the compute
// protocol's server, its engine, and either one Solo runtime or a
// maintenance and an interactive runtime behind the placement multiplexer
// (docs/design/two-runtimes.md). New returns the process fully wired; the
// binary (cmd/replica) only parses flags, supplies the process's
// surroundings (mesh, storage, metrics) through Config, and serves.
//
// Invariants:
//   - The wiring cycles (a runtime's Respond and Publisher or SharedImports
//     exist before the runtime; the engine delivers to the server that
//     drives it) are closed inside New, before it returns: no caller sets
//     anything on a returned Process.
//   - A two-runtime process gives the maintenance runtime every dataflow
//     but one-shot reads and the interactive runtime the one-shot reads;
//     the engine drives the multiplexer, never a runtime directly.
//   - New releases everything it acquired when it fails; Close releases
//     everything after Stop.
//
// It imports the engine, the replica endpoint (pkg/compute/server),
// placement and sharing; never SQL, the coordinator, catalog, storage,
// the compute controller or the protocol.
package replica
