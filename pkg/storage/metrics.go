package storage

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the store's Prometheus metrics (tandem_storage_*). A nil
// *Metrics records nothing.
type Metrics struct {
	fsync      prometheus.Histogram
	logBytes   prometheus.Gauge
	appendErrs prometheus.Counter
	corrupt    prometheus.Counter
	torn       prometheus.Counter
}

// NewMetrics registers the store's metrics with reg; pass the result as
// Options.Metrics.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		fsync: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "tandem_storage_fsync_duration_seconds", Help: "Duration of one fsync of a storage log, lease or directory.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16), // 50µs .. ~1.6s
		}),
		logBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tandem_storage_log_bytes", Help: "Bytes in the shard logs of the open store, over all shards.",
		}),
		appendErrs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tandem_storage_append_errors_total", Help: "Log writes that failed (write, fsync or rollback) and were not acknowledged.",
		}),
		corrupt: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tandem_storage_corruption_detected_total", Help: "Logs that failed to open because a bad record is followed by valid data (see pkg/storage doc).",
		}),
		torn: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tandem_storage_torn_tails_total", Help: "Unacknowledged torn last records discarded when a log was opened.",
		}),
	}
	reg.MustRegister(m.fsync, m.logBytes, m.appendErrs, m.corrupt, m.torn)
	return m
}

// timeSync runs sync and records its duration.
func (m *Metrics) timeSync(sync func() error) error {
	start := time.Now()
	err := sync()
	if m != nil {
		m.fsync.Observe(time.Since(start).Seconds())
	}
	return err
}

func (m *Metrics) addLogBytes(n int64) {
	if m != nil {
		m.logBytes.Add(float64(n))
	}
}

func (m *Metrics) appendFailed() {
	if m != nil {
		m.appendErrs.Inc()
	}
}

func (m *Metrics) corruptionDetected() {
	if m != nil {
		m.corrupt.Inc()
	}
}

func (m *Metrics) tornTail() {
	if m != nil {
		m.torn.Inc()
	}
}
