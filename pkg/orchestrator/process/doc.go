// Package process is the embedded default orchestrator: it runs each
// replica process as a child of the controller, on loopback, with ports it
// picks itself.
//
// Invariants:
//   - A replica's ports are chosen when it is ensured and kept across
//     restarts, so its addresses stay stable. The one exception: a port that
//     another program took while the process was down is replaced by a fresh
//     one before the restart (otherwise every restart would fail). Command
//     lines, peer lists included, are rendered at every start from the
//     current ports, and the processes of a replica share fate, so the
//     others restart onto the new peer list.
//   - A process that exits without being asked to is restarted after an
//     exponential backoff (MinBackoff doubling up to MaxBackoff), reset once
//     an incarnation stayed up for StableAfter.
//   - No orphans: each child runs in its own process group and, on Linux,
//     receives SIGKILL when the controller dies (Pdeathsig); RemoveReplica
//     and Close signal the whole group (SIGTERM, then SIGKILL after a grace
//     period) and wait for the exit.
package process
