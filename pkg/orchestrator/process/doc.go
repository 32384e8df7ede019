// Package process is the embedded default orchestrator: it runs each
// replica process as a child of the controller, on loopback, with ports it
// picks itself.
//
// Invariants:
//   - A replica's ports are chosen once, when it is ensured, and kept across
//     restarts, so the processes of a multi-process replica keep finding each
//     other (their peer lists are fixed at start).
//   - A process that exits without being asked to is restarted after an
//     exponential backoff (MinBackoff doubling up to MaxBackoff), reset once
//     an incarnation stayed up for StableAfter.
//   - No orphans: each child runs in its own process group and, on Linux,
//     receives SIGKILL when the controller dies (Pdeathsig); RemoveReplica
//     and Close signal the whole group (SIGTERM, then SIGKILL after a grace
//     period) and wait for the exit.
package process
