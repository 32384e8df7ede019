package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestMetrics(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	ffs := NewFaultFS(nil)
	st, err := Open(dir, Options{FS: ffs, Metrics: m, Now: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateShard("u1"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, "u1", []RowDiff{{Row: []byte("a"), Diff: 1}}); err != nil {
		t.Fatal(err)
	}
	if n := fsyncCount(t, reg); n == 0 {
		t.Fatal("no fsync observed")
	}
	logBytes, _ := st.LogBytes("u1")
	commitBytes := int64(logHeaderSize)
	if got := metricValue(t, reg, "tandem_storage_log_bytes"); got != float64(logBytes+commitBytes) {
		t.Fatalf("log bytes %v, want %d", got, logBytes+commitBytes)
	}
	ffs.LimitSpace(0, false)
	if _, err := st.Append(ctx, "u1", []RowDiff{{Row: []byte("b"), Diff: 1}}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full disk: %v", err)
	}
	if got := metricValue(t, reg, "tandem_storage_append_errors_total"); got != 1 {
		t.Fatalf("append errors %v, want 1", got)
	}
	st.Close()
	if got := metricValue(t, reg, "tandem_storage_log_bytes"); got != 0 {
		t.Fatalf("log bytes %v after close, want 0", got)
	}
	path := filepath.Join(dir, "shards", "u1.log")
	b, _ := os.ReadFile(path)
	b[logHeaderSize+3] ^= 1 // the first of two records
	os.WriteFile(path, append(b, nextRecordOf(t, b, encodeBatch(1<<60, nil))...), 0o644)
	if _, err := Open(dir, Options{Metrics: m}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open of a corrupt log: %v", err)
	}
	if got := metricValue(t, reg, "tandem_storage_corruption_detected_total"); got != 1 {
		t.Fatalf("corruption detected %v, want 1", got)
	}
}

// nextRecordOf frames payload as the second record of the log b (whose
// first record is damaged, so the helpers that replay it cannot be used).
func nextRecordOf(t *testing.T, b []byte, payload []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := writeRecord(&buf, binary.BigEndian.Uint64(b[8:16]), int64(len(b)), 2, payload); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// metricValue is a counter's or gauge's value.
func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			m := mf.GetMetric()[0]
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

func fsyncCount(t *testing.T, reg *prometheus.Registry) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "tandem_storage_fsync_duration_seconds" {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	return 0
}
