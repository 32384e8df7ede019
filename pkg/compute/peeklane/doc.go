// Package peeklane is a dedicated connection for point reads between the
// compute controller and one replica process, beside the command stream.
//
// A lane carries only Peek and CancelPeek commands one way and
// PeekResponses the other, as computepb messages framed by a 4-byte
// big-endian length: no HTTP/2, no per-message stream state. Each side runs
// one reader goroutine and one writer goroutine; the writer takes every
// message queued since its last write and writes them in one call, so
// concurrent peeks share system calls and TLS records.
//
// Invariants:
//   - a lane is attached to one command-stream connection: its first frame
//     is a Hello carrying that connection's nonce, and the replica refuses a
//     lane whose nonce is not its current connection's
//     (TestLaneRefusesAStaleNonce);
//   - authentication is at least the command stream's: mutual TLS under
//     the deployment's CA over TCP, or, for a replica on the controller's
//     own machine, a unix socket in a directory only the replica's user can
//     enter, whose peer must run as that same user (TestUnixLaneRefusesOtherUsers,
//     TestTLSLaneRefusesAClientWithoutACertificate);
//   - a lane never decides a read's fate: a peek whose lane breaks is sent
//     again on the command stream, and the replica answers each peek once per
//     process and epoch as the controller counts it (the controller and the
//     replica server hold the bookkeeping; see docs/design/read-path.md).
package peeklane
