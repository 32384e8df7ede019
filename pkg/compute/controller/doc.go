// Package controller is the compute controller: per cluster it drives a set
// of replicas through the compute protocol, tracks the frontiers and read
// holds of every compute collection, answers peeks and subscribes, and
// replays a reduced command history to replicas that (re)connect.
//
// Invariants:
//   - A collection's since is the meet of its read holds and never
//     regresses; AllowCompaction is sent whenever it advances, and a closed
//     since (no holds left after a drop) drops the collection on replicas.
//   - A collection's write frontier is the furthest any replica reported and
//     never regresses, also across replica reconnects: a reconnected replica
//     starts a new epoch whose reports are tracked separately from the
//     collection's frontier.
//   - A collection holds its inputs at its own since.
//   - Every replica holds, per dataflow, each storage collection the
//     dataflow imports: at the as_of it was sent until it reports progress,
//     then one below its reported input frontier; kept across reconnects,
//     released when the dataflow or the replica is dropped. So a slow
//     replica's first storage read never finds the as_of compacted away.
//   - A replica rollout (RollReplicas) rolls one replica at a time and
//     never gives up waiting for one to come back hydrated; it skips
//     dropped replicas and is superseded by a newer roll.
//   - Every ReadHold handed out is released exactly once (Release is
//     idempotent); a peek's hold is released only after its result has been
//     delivered or the peek was abandoned.
//   - Responses from a replica connection older than the replica's current
//     epoch are ignored.
//   - A multi-process replica answers once every process answered: its
//     frontiers are the meet over its processes, its peek rows the union.
//   - A peek is answered by the first replica that answers; the others are
//     sent CancelPeek. The exception is a peek addressed to one replica
//     (PeekRequest.Replica), which every read of a cluster's introspection
//     indexes is: those hold per-replica data (each replica describes
//     itself), so the peek is sent to, re-sent to, and answered by that
//     replica alone, at a time chosen from its own reported frontiers, and
//     fails if the replica is dropped.
//   - A peek's answer is bounded by max_result_size over all of a
//     replica's processes (54000); a peek pending on replicas that lost
//     their connection MaxPeekRestarts times while it ran fails instead
//     of being re-sent again.
//   - A replica's refusal of a dataflow (a CommandError naming it) is that
//     replica's answer to every peek of the dataflow's exports in the
//     same connection, pending or later, with the refusal's SQLSTATE and
//     message (refusal.go), never the replica's "unknown index".
//   - No create_dataflow reaches a replica of several processes before
//     each of its processes reported its memory on the connection; one
//     near its limit is sent no dataflow it was not sent before, and each
//     held-back dataflow's reads there fail with 53200 (memory.go).
//   - Read admission (admission.go): per cluster, at most the kind's
//     bound of reads (fast-path peeks, one-shot dataflows) run at once and
//     at most max_queued_reads of a kind wait; a read waits before it takes
//     a timestamp, a hold or a dataflow, is refused with 53000 when the
//     queue is full, and leaves the queue holding nothing when its context
//     ends.
//   - Introspection indexes (EnableIntrospection) are sent in every
//     replica's CreateInstance; they take no part in hydration status or
//     rollouts, and go with their cluster.
//   - A materialized view's dataflow (CreateSinkDataflow) starts at or
//     below its storage shard's upper whenever its inputs are readable
//     there; while PauseReadPolicies is in effect (recovery) read policies
//     do not move, so sinces stay where storage has them.
//
// Concurrency: one mutex guards all controller state; replica connections
// run in their own goroutines and deliver responses under that mutex; sends
// to replicas are queued, never blocking under the mutex.
package controller
