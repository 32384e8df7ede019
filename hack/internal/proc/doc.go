// Package proc runs the system under test for a benchmark: it builds the
// controller and replica binaries, starts the controller with the process
// orchestrator on free loopback ports and a fresh data directory, waits
// until it answers SQL, opens pre-connected clients, and tears it down.
//
// Invariants:
//   - The controller runs in its own process group and Stop signals the
//     whole group (SIGTERM, then SIGKILL after a grace period); its
//     replicas carry a parent-death signal, so nothing outlives a run,
//     whether the benchmark succeeded, failed or was interrupted.
//   - Stop is idempotent and safe to defer right after Start.
//   - The data directory is removed by Stop unless Keep is set; the
//     controller's log stays inside it for post-mortems until then.
package proc
