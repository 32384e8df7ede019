// Package storage keeps the controller's tables: each table is a shard of
// timestamped updates (row, time, diff) in the data directory, read by
// replicas through a gRPC service (snapshot at an as_of, then a live stream
// of updates and upper advances).
//
// Durability and time:
//   - A shard is an append-only log file of length-prefixed, checksummed
//     records. Append writes and fsyncs the record before it returns, so an
//     acknowledged write survives a crash; a torn tail record is discarded on
//     open.
//   - Writes are timestamped by the Oracle: strictly increasing, at least
//     the wall clock in milliseconds. The oracle durably reserves a lease of
//     future times (one fsync per lease, not per tick); after a restart it
//     starts at the reserved bound, so no time is ever handed out twice.
//   - The oracle's read timestamp (ReadTS) is the largest time of a
//     completed write or strict serializable read: what such a read must
//     include. Ticks do not move it.
//   - A table's upper (times below it are complete) advances with every
//     write to any table (before the write is acknowledged) and, without
//     writes, with a ticker that draws a fresh timestamp.
//     Every time below an upper that was ever exposed is below the oracle's
//     durable lease, so an exposed upper never regresses across restarts.
//   - since (times below it are indistinguishable) follows AllowCompaction:
//     updates before since are advanced to since and consolidated in memory,
//     and the log is rewritten (write temp file, fsync, rename) once it has
//     grown past twice its compacted size.
//
// Sink shards (materialized views, sink.go) are written only with
// CompareAndAppend: updates at times the writer chooses in [expected upper,
// new upper), applied with the new upper in one checksummed record, and only
// if the shard's upper still is the expected one, so of several racing
// writers exactly one wins each step. A sink's upper is durable in its log
// (never derived from the oracle, never moved by ticks) and never regresses;
// ReadFrom lets a losing writer learn what the winner wrote. Compaction
// (since) works as for tables.
//
// Scale limit: every shard's consolidated contents live in memory and every
// listener rescans from its position, so this design suits tables of up to a
// few million rows on one controller; see docs/design/controller.md.
package storage
