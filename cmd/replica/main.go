// Command replica is one process of a compute replica: it serves the compute
// protocol to the controller over gRPC, runs a Solo compute runtime of
// --workers workers, and, for a multi-process replica, joins its peers over
// the compute mesh. See ARCHITECTURE.md sections 4 and 5.
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
