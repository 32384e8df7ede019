// Package server is the replica side of the compute protocol: the gRPC
// service a replica process exposes to its controller.
//
// One goroutine (the loop started by Run) owns all replica state and
// serializes every input: commands from the current connection and events
// from the runtime. It hands commands to the Backend in order and turns
// runtime events into protocol responses. The server enforces the
// protocol's guarantees itself, whatever the runtime does:
//
//   - one controller connection at a time: a Hello with a new nonce replaces
//     the current connection, whose stream ends with ABORTED and whose
//     pending peeks are discarded;
//   - frontiers reported on a connection never regress and are never below
//     the collection's as_of;
//   - exactly one terminal PeekResponse per peek uuid, canceled only after a
//     CancelPeek;
//   - bad input (malformed command, unknown id, invalid plan, duplicate
//     export, peek outside [since, until)) is refused with an error
//     response; the stream and every other collection keep going. A
//     refused CreateDataflow names the dataflow whenever its description
//     does (a Codec's InvalidDataflowError);
//   - a peek lane (pkg/compute/peeklane, AttachLane) is attached to the
//     connection whose Hello nonce it presents, and ends with it; its
//     Peeks and CancelPeeks are that connection's commands, checked and run
//     as the stream's. Their single-message answers take the lane while it
//     is up, the stream otherwise; a peek sent again on the stream while
//     pending from a lane is answered once, on the stream
//     (TestLanePeekSentAgainOnTheStreamIsAnsweredOnce; sabotage: answer it
//     on the lane it came from and the test waits in vain);
//   - after InitializationComplete the replica reconciles: compatible
//     running dataflows are kept, the rest dropped, desired ones built, and
//     every frontier reported afresh.
//
// Large peek results leave as bounded stashed chunks, cut lazily by the
// connection's sender so a result is never held twice. A result the engine
// streams (PeekResult.Stream, fed by the runtime's walks with backpressure)
// is pulled by the sender only as fast as the connection drains. The
// sender interleaves: every ordinary response queued is written before the
// next stashed chunk, and concurrent stash jobs take turns chunk by chunk,
// so a large result never holds the stream for the answers behind it. A
// stash sequence ends with the final chunk, canceled, or an error (a
// result above max_result_size found mid-stream).
//
// With Config.Memory a peek is refused (53200) before any work while the
// process uses more than its MemoryGuard's share of its memory limit, so
// a replica near the limit answers an error instead of being killed; with
// MemoryGuard.Dataflows (one-process replicas) a create_dataflow is
// refused the same way, before the runtime sees it. With
// MemoryGuard.Report (replicas of several processes, which must agree on
// every dataflow) the process never refuses one itself: it sends a
// MemoryStatus on every connection and whenever it crosses the
// threshold, and the controller holds back new dataflows.
package server
