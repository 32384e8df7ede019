// Package pprofserver serves Go's runtime profiles (net/http/pprof) for
// the binaries that enable them with a flag, on a listener of their own
// that may only be a loopback address: profiles and execution traces show
// a process's internals (and cost CPU to take), so they are off unless
// asked for, and never reachable from the network even then; an operator
// reaches them with kubectl port-forward or from the host.
//
// Invariants: Listen refuses any address whose host is not a loopback IP
// or "localhost" (an empty host, meaning every interface, included); the
// handler serves nothing but /debug/pprof/. The package imports nothing of
// Tandem.
package pprofserver
