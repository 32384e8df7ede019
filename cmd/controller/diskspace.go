package main

import (
	"github.com/prometheus/client_golang/prometheus"
)

// diskUsage reports the filesystem holding a directory: bytes free to an
// unprivileged writer, and its size.
type diskUsage func(dir string) (free, size uint64, err error)

// registerDiskSpace exports the free space and size of the filesystem of
// the storage directory (tandem_storage_disk_free_bytes, _size_bytes),
// read at each scrape; the disk-filling alert extrapolates the free space.
// A scrape that cannot read it reports no sample for the gauges.
func registerDiskSpace(reg prometheus.Registerer, dir string, usage diskUsage) {
	reg.MustRegister(diskCollector{dir: dir, usage: usage,
		free: prometheus.NewDesc("tandem_storage_disk_free_bytes",
			"Bytes available to the controller on the filesystem of its storage directory (table and materialized-view logs, catalog).", nil, nil),
		size: prometheus.NewDesc("tandem_storage_disk_size_bytes",
			"Size in bytes of the filesystem of the controller's storage directory.", nil, nil),
	})
}

type diskCollector struct {
	dir        string
	usage      diskUsage
	free, size *prometheus.Desc
}

// Describe implements prometheus.Collector.
func (c diskCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.free; ch <- c.size }

// Collect implements prometheus.Collector.
func (c diskCollector) Collect(ch chan<- prometheus.Metric) {
	free, size, err := c.usage(c.dir)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.free, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.free, prometheus.GaugeValue, float64(free))
	ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(size))
}
