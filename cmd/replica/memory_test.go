package main

import (
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

func TestParseMemory(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		err  bool
	}{
		{"0", 0, false},
		{"1048576", 1 << 20, false},
		{"512MiB", 512 << 20, false},
		{"4GiB", 4 << 30, false},
		{"100B", 100, false},
		{"4GB", 0, true},
		{"-1", 0, true},
		{"lots", 0, true},
		{"99999999999TiB", 0, true},
	} {
		got, err := parseMemory(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("parseMemory(%q) = %d, %v; want %d (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestMemoryLimitResolution(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	cgroup := func(v string) func(string) ([]byte, error) {
		return func(path string) ([]byte, error) {
			if path != cgroupMemoryMax {
				t.Fatalf("read %s", path)
			}
			if v == "" {
				return nil, errors.New("no cgroup")
			}
			return []byte(v + "\n"), nil
		}
	}
	debug.SetMemoryLimit(math.MaxInt64)
	if got := memoryLimit(0, cgroup("max")); got != 0 {
		t.Errorf("no limit anywhere: %d", got)
	}
	if got := memoryLimit(0, cgroup("")); got != 0 {
		t.Errorf("no cgroup: %d", got)
	}
	if got := memoryLimit(0, cgroup("2147483648")); got != 2<<30 {
		t.Errorf("cgroup limit: %d", got)
	}
	if got := memoryLimit(1<<30, cgroup("2147483648")); got != 1<<30 || debug.SetMemoryLimit(-1) != 1<<30 {
		t.Errorf("flag: %d, runtime limit %d", got, debug.SetMemoryLimit(-1))
	}
	// GOMEMLIMIT (the runtime's limit) wins over the cgroup.
	if got := memoryLimit(0, cgroup("2147483648")); got != 1<<30 {
		t.Errorf("runtime limit: %d", got)
	}
}

// TestMemoryInUseCountsArenas: the guard's measure includes arrangement
// memory kept outside the Go heap. With a 24 MiB arena held and the Go
// heap's garbage returned to the system, the Go runtime alone accounts for
// far less than the arena.
func TestMemoryInUseCountsArenas(t *testing.T) {
	was := batch.OffHeapEnabled()
	batch.SetOffHeap(true)
	t.Cleanup(func() { batch.SetOffHeap(was) })
	const keys, valueSize = 96 << 10, 248
	var bl batch.Builder
	val := make([]byte, valueSize)
	for i := range keys {
		var key [8]byte
		binary.BigEndian.PutUint64(key[:], uint64(i))
		bl.Push(key[:], val, 0, 1)
	}
	b, err := bl.Build(batch.Description{Lower: frontier.At(0), Upper: frontier.At(1), Since: frontier.At(0)})
	if err != nil {
		t.Fatal(err)
	}
	arena := uint64(b.OffHeapBytes())
	if arena < 24<<20 {
		t.Fatalf("batch keeps %d bytes off the heap, want at least 24 MiB", arena)
	}
	debug.FreeOSMemory()
	if got := memoryInUse(); got < arena {
		t.Fatalf("memoryInUse() = %d with an arena of %d bytes held", got, arena)
	}
	runtime.KeepAlive(b)
}
