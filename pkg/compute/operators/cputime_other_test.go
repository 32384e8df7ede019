//go:build !unix

package operators

import "time"

// processCPU is unavailable here; benchmarks then report only wall-clock
// throughput.
func processCPU() time.Duration { return 0 }
