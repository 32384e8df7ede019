// Package placement decides which runtime of a replica process does what.
//
//   - DataflowClass (on plan.DataflowDescription) is the controller's choice
//     (pkg/compute/controller tags the dataflow answering one read
//     OneShotRead and a SUBSCRIBE's dataflow LiveRead while
//     enable_compute_interactive_dataflows is on, every other dataflow
//     Maintained); this package only obeys it.
//   - Renders says which role renders which class: Solo renders every
//     class, Maintenance renders Maintained, Interactive renders OneShotRead
//     and LiveRead (whose imports of peer indexes are live: they follow the
//     published index through a registry follower, render.ImportLive).
//   - Multiplexer presents the two runtimes of a process as one endpoint. It
//     is passive: every command goes to both runtimes, maintenance first,
//     except a peek, which goes to the one runtime the routing policy picks.
//     It merges responses so that a collection's frontiers and subscribe
//     updates come only from the runtime that renders it, and exactly one
//     PeekResponse leaves per peek uuid.
//   - The interactive runtime keeps no logging: the multiplexer logs the
//     start and the answer of every peek it routes there into the
//     maintenance runtime (PeekLog), so introspection's active peeks and
//     peek durations cover the whole process.
//   - Route is the read-routing policy for fast-path peeks on maintained
//     indexes (docs/design/read-routing.md).
//   - Everything here speaks runtime.Commands, the one command interface
//     of a runtime's driver: the multiplexer drives the two role wrappers
//     and the wrappers drive a runtime each. Each constructor takes a
//     factory of what it drives (NewMultiplexer the two runtimes,
//     NewMaintenance and NewInteractive their runtime) and returns the piece
//     fully wired; nothing is attached afterwards (pkg/replica/doc.go).
//
// Invariants, each tested with a sabotage variant: frontiers only from the
// owner (multiplexer_test.go); exactly one PeekResponse per uuid, and only
// from the runtime the peek was routed to (peekonce_test.go; the frontier
// sabotage fails on a frontier first, so the peek check has its own).
// Commands reach maintenance before interactive (TestCommandsReachMaintenanceFirst).
// Peer peeks on the interactive runtime each wait on their own goroutine;
// a canceled one answers canceled once and leaves nothing running
// (leak_test.go). A streamable peer peek whose result outgrows one chunk
// (peek_stash_threshold) is answered with a runtime.PeekStream and never
// materialises: its walk hands chunks over through a two-chunk buffer and
// blocks while it is full; a cancel or an error after that ends the stream
// rather than sending a second response, and releases the reader holds
// (peerstream_test.go, with a backpressure sabotage). The standing hold on
// a peer index advances when the interactive runtime's workers apply the
// compaction, not at dispatch (holdgap_test.go, with a sabotage).
package placement
