package main

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestDiskSpaceMetrics: the storage directory's filesystem is reported at
// each scrape, from the real statfs and from a fake; a failing read is a
// scrape error, not a zero (which would look like a full disk).
func TestDiskSpaceMetrics(t *testing.T) {
	dir := t.TempDir()
	free, size, err := statfsUsage(dir)
	if err != nil || size == 0 || free > size {
		t.Fatalf("statfs of a temporary directory: free %d, size %d, %v", free, size, err)
	}

	reg := prometheus.NewPedanticRegistry()
	var fail error
	registerDiskSpace(reg, dir, func(got string) (uint64, uint64, error) {
		if got != dir {
			t.Errorf("measured %s, want %s", got, dir)
		}
		return 250, 1000, fail
	})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		got[mf.GetName()] = mf.GetMetric()[0].GetGauge().GetValue()
	}
	if got["tandem_storage_disk_free_bytes"] != 250 || got["tandem_storage_disk_size_bytes"] != 1000 || len(got) != 2 {
		t.Fatalf("gathered %v", got)
	}
	fail = errors.New("no disk")
	if _, err := reg.Gather(); err == nil {
		t.Fatal("a failed statfs gathered without error")
	}
}
