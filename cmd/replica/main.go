// Command replica is one process of a compute replica: it serves the compute
// protocol to the controller over gRPC, runs one compute runtime (Solo) of
// --workers workers or, with --interactive-peers, a maintenance and an
// interactive runtime side by side (docs/design/two-runtimes.md), and, for a
// multi-process replica, joins its peers over the compute mesh.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		os.Exit(1)
	}
}
