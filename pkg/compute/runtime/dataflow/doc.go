// Package dataflow runs acyclic dataflow graphs on a fixed set of workers: W
// worker goroutines in each of P processes, worker index w + W*p. It is the
// scheduling and communication core of the compute runtime; it knows nothing
// of rows, plans or arrangements beyond opaque payloads and Update triples.
//
// Model. Every worker builds every dataflow, in the same order, so operator
// and input indices agree across workers and processes. Each worker is one
// goroutine (on a locked OS thread) with a run loop: drain its inbox
// (commands, exchanged data, frontier messages, activations), schedule
// activated operators in topological order (each runs to completion on what
// it has and may re-activate itself for more), run the step hook (peeks and
// frontier reports live above this package), and park on its inbox when there
// is nothing to do. An idle runtime uses no CPU: parking blocks on a channel.
//
// Edges are pipelines (same worker, any payload) or exchanges (payloads are
// []Update, partitioned by a hash of each update to worker hash % (W*P)).
// In-process exchange goes through the target worker's inbox; cross-process
// exchange through a Fabric, which must deliver FIFO per (sender, receiver)
// process pair. Messages for a dataflow the receiving worker has not built yet
// are buffered and replayed when it is built; messages for a dropped dataflow
// are discarded.
//
// Drops. Drop queues the drop on every worker's inbox, so it takes effect
// between steps; it also sets the dataflow's dropping flag at once, which an
// operator inside a long Schedule polls through Operator.Dropping to return
// early instead of finishing work nobody will read.
//
// Frontiers. Each input tracks the latest frontier of each of its senders (one
// for a pipeline, W*P for an exchange); its frontier is their meet. A sender
// always sends its data before the frontier that covers it, on the same FIFO
// path, so a receiver never sees data at a time its frontier has passed. An
// operator's output frontier is the meet of its input frontiers and its own
// hold (sources hold their upper; operators without a hold inherit their
// inputs'). Output frontiers never regress: an attempt to move one backwards
// is ignored and counted in Stats.
package dataflow
