// Package scripttest runs protocol scripts against a replica: the
// processes of one replica, each serving the compute protocol over gRPC. A
// script plays the controller: it opens connections, sends commands and
// waits for responses, one line at a time. The same script runs unchanged
// against a one-process and a multi-process replica, because a logical
// connection is one stream to every process: commands go to all of them,
// and an expectation holds only when every process satisfied it (peek rows
// are the union of the processes' shards).
//
// While a script runs, every response is also checked against the
// protocol's invariants, whatever the script expects: frontiers never
// regress per stream, exactly one terminal PeekResponse per uuid, stashed
// chunks numbered 0, 1, 2, ..., canceled only after a CancelPeek.
//
// Script lines (# starts a comment; ${NAME} and ${NAME+N} expand to
// variables, START being the replica-independent start time the driver
// chose):
//
//	connect C NONCE                  open connection C (Hello NONCE) to every process
//	disconnect C                     close connection C
//	pause C                          stop reading C's responses (they back up in gRPC flow control)
//	resume C                         read them again
//	send C create_instance [JSON]    CreateInstance in protobuf JSON
//	send C init_complete
//	send C create_dataflow JSON|@FILE   the plan's JSON form, sent as protobuf
//	send C schedule ID
//	send C allow_compaction ID FRONTIER    FRONTIER is [5] or []
//	send C peek P TARGET TIME [keys=1,2] [mfp=JSON] [mfp-proto=JSON] [finishing=JSON]
//	                                 mfp is expr.MFP's JSON form, mfp-proto the
//	                                 MapFilterProject message in protobuf JSON
//	send C cancel_peek P
//	send C update_configuration K=V...
//	send C raw JSON                  any Command in protobuf JSON
//	expect C rows P ROW...           peek P answered with these rows (any order); ROW like (1) or (1)x3
//	expect C rows-ordered P ROW...   the same, in this order (one process only)
//	expect C count P N               peek P answered with N rows counting multiplicity
//	expect C stashed P N             peek P answered as stashed chunks (more than one) with N rows
//	expect C peek-error P SQLSTATE
//	expect C canceled P
//	expect C stash-chunk P           the next response to peek P is a non-final stashed chunk
//	expect C stash-canceled P N      peek P streamed at least N non-final stashed chunks, then canceled
//	expect C error COMMAND SQLSTATE  a CommandError
//	expect C frontier ID write>=T    (or write=[] for closed)
//	expect C hydrated ID
//	expect C subscribe ID rows>=N    subscribe updates with at least N rows in total
//	expect C subscribe ID dropped
//	expect C ended CODE              the stream ended with this gRPC code
//	expect-none C P                  no response for peek P within a short while
//	metric NAME{LABELS} >= N         summed over processes, from /metrics
//	sleep DURATION
//
// Each expectation must hold within the runner's timeout, except that a
// peek answered in several responses (stashed chunks) must only deliver
// each response within it: the stream must make progress, at whatever
// speed a loaded machine allows. With Options.CPU the timeout counts only
// while the replica idles: a wait fails once the replica used less than
// 1/MinCPUShare of the timeout in CPU over the last timeout (a stall),
// not while it works slowly.
package scripttest
