//go:build unix

package operators

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) the process has used. On
// a shared machine a benchmark's wall time includes waiting for a core;
// its CPU time does not, so throughput per CPU second is the steadier
// number.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
