// Package peek reads one worker's shard of an arrangement as of a time and
// turns it into a peek result: rows with positive counts.
//
// A Walk captures an immutable batch list (a trace.Read, so since <= t <
// upper was checked when it was taken) and walks it with a cursor: either
// every key, or only the literal keys the peek constrains (sorted and
// deduplicated, found by seeking). For each (key, val) it accumulates the
// diffs at times <= t; a zero sum is skipped, a negative sum is an error
// (the arrangement claims a row was retracted more often than inserted,
// which only corrupt input can cause), and a positive sum runs the peek's
// transform (its map/filter/project) over the value row and adds the count
// to the output row.
//
// The walk is resumable: Step does at most `budget` (key, val) visits and
// returns, keeping its cursor. Batches are immutable, so a walk may be
// continued later or on another goroutine (peek offload), one goroutine at a
// time. Results are consolidated (equal output rows summed) and returned in
// row order; their accounted size (row bytes plus 8 per distinct row) may not
// exceed the configured maximum.
//
// A chunked walk (Options.ChunkBytes) hands its result over in pieces
// instead: Step pauses once the rows buffered since the last TakeChunk reach
// the chunk size, and TakeChunk returns them consolidated and in row order.
// A row may then appear in several chunks (consolidation is per chunk); the
// size bound still covers the whole walk. Merge combines parts that are in
// row order by a k-way merge, without hashing.
//
// A top-k walk (Options.TopK, for an ordered peek with a limit) keeps only
// the first Limit rows in the order, counting multiplicities, in a heap with
// the worst kept row on top: a row behind the kept ones once they make up
// the limit is dropped, so the walk holds at most Limit distinct rows.
package peek
