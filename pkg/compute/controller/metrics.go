package controller

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the controller's Prometheus metrics (tandem_controller_*).
// A nil *Metrics records nothing.
type Metrics struct {
	commands     *prometheus.CounterVec
	responses    *prometheus.CounterVec
	peeks        *prometheus.CounterVec
	peekDuration prometheus.Histogram
	replicaCount prometheus.Gauge
	connected    prometheus.Gauge
	collections  prometheus.Gauge
	history      prometheus.Gauge
	hydrated     *prometheus.GaugeVec
	holds        prometheus.Gauge
	admRunning   *prometheus.GaugeVec
	admQueued    *prometheus.GaugeVec
	admRefused   *prometheus.CounterVec
	admAbandoned *prometheus.CounterVec
	laneCommands *prometheus.CounterVec
	lanesUp      prometheus.Gauge
	laneResends  prometheus.Counter
}

// NewMetrics registers the controller's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tandem_controller_commands_total", Help: "Compute commands sent to replica processes, by command type.",
		}, []string{"type"}),
		responses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tandem_controller_responses_total", Help: "Compute responses received, by type and whether they were applied or ignored as stale.",
		}, []string{"type", "outcome"}),
		peeks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tandem_controller_peeks_total", Help: "Peeks finished, by result (rows, error, canceled).",
		}, []string{"result"}),
		peekDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "tandem_controller_peek_duration_seconds", Help: "Time from issuing a peek to delivering its result.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
		replicaCount: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tandem_controller_replicas", Help: "Replicas configured, over all clusters.",
		}),
		connected: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tandem_controller_connected_replicas", Help: "Replicas with every process connected.",
		}),
		collections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tandem_controller_collections", Help: "Collections tracked (compute and storage).",
		}),
		history: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tandem_controller_history_commands", Help: "Commands in the reduced history last replayed to a replica.",
		}),
		hydrated: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tandem_controller_replica_hydrated_collections", Help: "Compute collections hydrated on each replica (output frontier past as_of).",
		}, []string{"cluster", "replica"}),
		holds: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tandem_controller_read_holds", Help: "Read holds outstanding, including the controller's own.",
		}),
		admRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tandem_controller_read_admission_running", Help: "Reads admitted and running, per cluster and kind (peek, one_shot).",
		}, []string{"cluster", "kind"}),
		admQueued: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tandem_controller_read_admission_queued", Help: "Reads waiting for admission, per cluster and kind (peek, one_shot).",
		}, []string{"cluster", "kind"}),
		admRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tandem_controller_read_admission_refused_total", Help: "Reads refused with 53000 because the admission queue was full.",
		}, []string{"cluster", "kind"}),
		admAbandoned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tandem_controller_read_admission_abandoned_total", Help: "Reads whose context ended (statement_timeout, cancel) while they waited for admission.",
		}, []string{"cluster", "kind"}),
		laneCommands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tandem_controller_peek_lane_commands_total", Help: "Peeks and cancels sent on peek lanes instead of the command stream (also counted in tandem_controller_commands_total), by type.",
		}, []string{"type"}),
		lanesUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tandem_controller_peek_lanes_up", Help: "Peek lanes open to replica processes.",
		}),
		laneResends: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tandem_controller_peek_lane_resent_total", Help: "Peeks pending on a peek lane that went down, sent again on the command stream.",
		}),
	}
	reg.MustRegister(m.laneCommands, m.lanesUp, m.laneResends, m.commands, m.responses, m.peeks, m.peekDuration, m.replicaCount, m.connected,
		m.collections, m.history, m.hydrated, m.holds, m.admRunning, m.admQueued, m.admRefused, m.admAbandoned)
	return m
}

func (m *Metrics) command(kind string, n int) {
	if m != nil {
		m.commands.WithLabelValues(kind).Add(float64(n))
	}
}

func (m *Metrics) laneCommand(kind string) {
	if m != nil {
		m.laneCommands.WithLabelValues(kind).Inc()
	}
}

func (m *Metrics) laneUp(delta float64) {
	if m != nil {
		m.lanesUp.Add(delta)
	}
}

func (m *Metrics) laneResent() {
	if m != nil {
		m.laneResends.Inc()
	}
}

func (m *Metrics) response(kind, outcome string) {
	if m != nil {
		m.responses.WithLabelValues(kind, outcome).Inc()
	}
}

func (m *Metrics) peek(result string, d time.Duration) {
	if m != nil {
		m.peeks.WithLabelValues(result).Inc()
		m.peekDuration.Observe(d.Seconds())
	}
}

func (m *Metrics) admission(cluster, kind string, running, queued int) {
	if m != nil {
		m.admRunning.WithLabelValues(cluster, kind).Set(float64(running))
		m.admQueued.WithLabelValues(cluster, kind).Set(float64(queued))
	}
}

func (m *Metrics) admissionRefused(cluster, kind string) {
	if m != nil {
		m.admRefused.WithLabelValues(cluster, kind).Inc()
	}
}

func (m *Metrics) admissionAbandoned(cluster, kind string) {
	if m != nil {
		m.admAbandoned.WithLabelValues(cluster, kind).Inc()
	}
}

func (m *Metrics) historySize(n int) {
	if m != nil {
		m.history.Set(float64(n))
	}
}

func (m *Metrics) replicas(clusters map[string]*cluster) {
	if m == nil {
		return
	}
	n := 0
	for _, cl := range clusters {
		n += len(cl.replicas)
	}
	m.replicaCount.Set(float64(n))
}

// refreshLocked recomputes the gauges derived from state; called by
// Status (and so on every /metrics scrape through the HTTP server).
func (c *Controller) refreshMetricsLocked() {
	m := c.cfg.Metrics
	if m == nil {
		return
	}
	m.collections.Set(float64(len(c.collections)))
	m.holds.Set(float64(c.outstanding))
	connected := 0
	m.hydrated.Reset()
	for _, cl := range c.clusters {
		for _, r := range cl.replicas {
			if r.conns != nil {
				connected++
			}
			n := 0
			for _, col := range c.collections {
				if col.kind == kindCompute && !col.introspection && col.cluster == cl.name && r.hydratedLocked(col) {
					n++
				}
			}
			m.hydrated.WithLabelValues(cl.name, r.cfg.ID.Replica).Set(float64(n))
		}
	}
	m.connected.Set(float64(connected))
}
