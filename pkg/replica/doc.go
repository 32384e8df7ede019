// Package replica assembles one process of a compute replica: the compute
// protocol's server, its engine, and either one Solo runtime or a
// maintenance and an interactive runtime behind the placement multiplexer
// (docs/design/two-runtimes.md). New returns the process fully wired; the
// binary (cmd/replica) only parses flags, supplies the process's
// surroundings (mesh, storage, metrics) through Config, and serves.
//
// Assembly order: every piece is built after what it calls back into (its
// responses go up) and hands a factory of the pieces below it, so each
// constructor returns its piece fully wired and nothing is set afterwards:
//
//  1. server.NewWithBackend creates the server, whose Deliver takes events,
//     and calls its backend factory with Deliver;
//  2. server.NewEngine creates the engine over Deliver and calls its
//     commands factory with the engine's Respond;
//  3. Solo: runtime.New with that Respond. Two runtimes:
//     placement.NewMultiplexer over Respond calls its factory with each
//     role's responder; placement.NewMaintenance creates the maintenance
//     wrapper, the runtime's Publisher, and builds the maintenance runtime
//     with it; placement.NewInteractive creates the interactive wrapper,
//     the runtime's SharedImports, and builds the interactive runtime with
//     it; the multiplexer routes to both wrappers and takes the
//     interactive wrapper's Sealed as its routing hint.
//
// A callback may be called as soon as its piece exists, but no runtime
// answers before Start, which only follows New.
//
// Invariants:
//   - No caller sets anything on a returned Process or on any piece of it
//     (there are no late-binding setters).
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
