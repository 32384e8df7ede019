// Package mesh connects the processes of one multi-process replica over TCP
// and implements runtime.Fabric on top of the connections.
//
// Every process listens on its own `compute` address and holds exactly one
// connection to every other process: process i dials each process j < i
// and accepts from each j > i. A connection starts with a symmetric
// handshake (magic, version, process count, process index, workers per
// process); a mismatch of count or workers, or an unexpected index, fails
// Connect on both sides with an error saying what differs. With
// Config.ServerTLS and ClientTLS the connection is TLS before the
// handshake (the replica passes its internal certificate, so peers
// authenticate each other under the deployment's CA); a peer that fails
// TLS fails Connect like a bad handshake and is reported to OnRefused.
//
// After the handshake, messages are length-framed. Each connection has one
// writer goroutine draining an unbounded queue, so Send never blocks a
// worker, and one reader goroutine calling the handler in arrival order, so
// delivery is FIFO per (sender, receiver) pair. Readers start when Receive
// registers the handler; until then messages wait in the socket.
//
// Shared fate: once established, losing any connection (a read or write
// error, or the peer closing) is reported once through Config.OnLost; the
// replica then exits. Only Close ends connections without reporting a loss.
package mesh
