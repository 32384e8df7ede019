// Package storage keeps the controller's tables: each table is a shard of
// timestamped updates (row, time, diff) in the data directory, read by
// replicas through a gRPC service (snapshot at an as_of, then a live stream
// of updates and upper advances).
//
// Durability and time:
//   - A shard is an append-only log file. Append writes and fsyncs the
//     record before it returns, so an acknowledged write survives a crash.
//   - On-disk format (logfile.go, record.go, oracle.go): every log starts
//     with a header (magic "TNDLOG", format version, random file id); a
//     record of any size is written as frames of at most 1 MiB, each with
//     the record's seq and length and two CRC-32C checksums, the header's
//     covering the file id and the frame's offset. A record is applied only
//     once its final frame verifies, so a record split over frames is all
//     or nothing. The oracle lease file has its own magic and version.
//   - Torn tail or corruption: appends are fsynced one at a time, so a
//     crash can damage only the last record. A frame that does not verify
//     with no verifying frame header of another record after it is that
//     torn last record (never acknowledged): it is cut on open. One with a
//     later record after it was acknowledged and then damaged: open fails
//     with a *CorruptionError (ErrCorrupt) naming the file and offset, and
//     the file is left untouched, because guessing would drop acknowledged
//     writes silently.
//   - Versions: a data directory of the release before the header (format
//     0, no header) opens, and its shard logs are rewritten in the current
//     format; a newer version is refused (ErrUnsupportedVersion) with what
//     to do. Files are replaced only through a temporary file, fsync,
//     rename and directory fsync (replaceFile), so creating a shard and
//     rewriting one leave the old file or the whole new one.
//   - AppendMany writes several table shards at one timestamp through the
//     store's commit log (commit.go): the commit record is durable before
//     any shard log is touched and is replayed at open into the shards that
//     lack it, so a crash at any point leaves all of it or none. Table
//     writes, shard creation and drops hold one write lock. RequireShard
//     (ErrShardMissing) lets recovery tell a catalogued table whose log is
//     gone from one that exists, instead of recreating it empty.
//   - All file I/O goes through Options.FS (the OS by default; FaultFS
//     injects ENOSPC and crashes for tests and the chaos suite), and
//     Options.Metrics records fsync latency, log bytes, failed appends,
//     corruption and torn tails.
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
