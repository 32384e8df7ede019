// Command chaos runs Tandem's chaos suite: a controller with its local
// replicas (the embedded default) under a load of writes and reads while
// faults are injected at random, checking after every fault and at the end
// that nothing acknowledged was lost and no read broke isolation.
//
//	go run ./hack/chaos --seed 1 --faults 100
//
// The load: writers insert rows with unique keys into acct, update and
// delete rows they inserted, and commit (acct, ledger) pairs in one
// transaction; a clock writer inserts increasing values into clock. A
// materialized view (acct_mv) and an indexed view (acct_buckets) are
// maintained over acct.
//
// Faults, chosen by a seeded generator so a failure replays by its seed:
// SIGKILL of a replica process, SIGKILL of the controller (restarted on its
// data directory; its replicas die with it), SIGSTOP of a replica or of the
// controller for a few seconds, a full disk under the storage directory
// for a few seconds (the controller runs with --storage-fault-injection,
// whose file layer fails writes with ENOSPC), and a drop and re-create of
// the indexed view's index while the system is busy.
//
// What is checked:
//   - after each fault (writers paused, the system answering again) and at
//     the end: every acknowledged write is present exactly once with its
//     acknowledged value; a write whose outcome the client could not learn
//     (an error) is present whole or not at all; a transaction's two rows
//     are both present or both absent;
//   - continuously: the materialized view equals its query over acct read
//     in the same statement (so at the same timestamp), and so does the
//     indexed view; a strict-serializable read of max(clock) is never
//     older than one before it and never misses a clock value acknowledged
//     before the read began;
//   - after each fault: no write frontier in the replica's
//     introspection.frontiers went back while the same replica processes
//     ran (frontiers.go).
//
// The summary line gives faults by kind, writes acknowledged, reads
// checked and violations; the exit status is non-zero on any violation.
package main
