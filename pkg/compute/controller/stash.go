package controller

// Peek stash settings every replica gets in CreateInstance. A result above
// the threshold leaves the replica as stashed chunks instead of one
// message; the replica interleaves the chunks with its other responses on
// the one stream, so a point lookup answered while a large scan streams
// waits for at most one chunk, not for the whole scan result (the
// response-path stall measured in docs/benchmarks-replica.md).
const (
	peekStashThreshold = 1 << 20
	peekStashChunkSize = 256 << 10
)
