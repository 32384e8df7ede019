// Command replica is one process of a compute replica: it serves the compute
// protocol to the controller over gRPC, runs one compute runtime (Solo) of
// --workers workers or, with --interactive-peers, a maintenance and an
// interactive runtime side by side (docs/design/two-runtimes.md), and, for a
// multi-process replica, joins its peers over the compute mesh. The binary
// parses flags, builds the process's surroundings (mesh connections, the
// storage client, metrics, the internal HTTP endpoint, TLS) and serves;
// pkg/replica assembles the server and the runtimes.
package main
