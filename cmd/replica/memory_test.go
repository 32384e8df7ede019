package main

import (
	"errors"
	"math"
	"runtime/debug"
	"testing"
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
