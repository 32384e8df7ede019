package main

import (
	"errors"
	"math"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strconv"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/batch"
)

// memoryUnits are the suffixes --memory-limit accepts, as GOMEMLIMIT does.
var memoryUnits = []struct {
	suffix string
	mult   uint64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// parseMemory parses a byte count with an optional unit (B, KiB, MiB,
// GiB, TiB), as GOMEMLIMIT does; 0 means none.
func parseMemory(v string) (uint64, error) {
	v = strings.TrimSpace(v)
	mult := uint64(1)
	for _, u := range memoryUnits {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = num, u.mult
			break
		}
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, errors.New("want a number of bytes, optionally with a unit (B, KiB, MiB, GiB, TiB)")
	}
	return n * mult, nil
}

// cgroupMemoryMax is the cgroup v2 file holding the container's memory
// limit ("max" when there is none); in Kubernetes, the pod's limit.
const cgroupMemoryMax = "/sys/fs/cgroup/memory.max"

// memoryLimit resolves the replica's memory limit: --memory-limit when
// given (then also the Go runtime's soft limit, so the collector works
// harder before it is reached), else GOMEMLIMIT, else the container's
// cgroup limit; 0 when there is none. readFile is os.ReadFile but for
// tests.
func memoryLimit(flag uint64, readFile func(string) ([]byte, error)) uint64 {
	if flag > 0 {
		debug.SetMemoryLimit(int64(flag))
		return flag
	}
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		return uint64(l)
	}
	b, err := readFile(cgroupMemoryMax)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0 // "max": no limit
	}
	return n
}

// memoryInUse is what the memory guard compares with the limit: the Go
// runtime's memory minus heap returned to the operating system, plus the
// arrangements' columns kept outside the Go heap (package batch's arenas),
// which the runtime does not count.
func memoryInUse() uint64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	rtmetrics.Read(s)
	total, released := s[0].Value.Uint64(), s[1].Value.Uint64()
	goMem := uint64(0)
	if released < total {
		goMem = total - released
	}
	return goMem + uint64(max(batch.OffHeapInUse(), 0))
}
