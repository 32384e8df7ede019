package main

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/sink"
)

// metrics implements server.Metrics, runtime.Metrics and sink.Metrics with
// Prometheus.
// Every series carries the runtime role label, added by the registerer.
type metrics struct {
	commands        *prometheus.CounterVec
	runtimeCommands *prometheus.CounterVec
	workerStep      prometheus.Histogram
	maxStep         *maxStep
	maintenance     prometheus.Counter
	peeks           *prometheus.HistogramVec
	runtimePeeks    *prometheus.HistogramVec
	collections     *prometheus.GaugeVec
	reconciliations *prometheus.CounterVec
	readStages      *prometheus.HistogramVec
	laneCommands    *prometheus.CounterVec

	// Materialized-view sinks (pkg/compute/sink); only the Solo or
	// maintenance runtime writes them.
	sinkAppends    *prometheus.CounterVec
	sinkUpdates    prometheus.Counter
	sinkAppendTime prometheus.Histogram
	sinkReads      *prometheus.CounterVec
	sinkLag        *prometheus.GaugeVec
	sinkPersisted  *prometheus.GaugeVec
}

// newMetrics registers the replica's metrics of one runtime under role.
// The Go and process collectors are registered once per process, by
// registerProcessCollectors.
func newMetrics(reg prometheus.Registerer, role string) *metrics {
	// A Solo replica's series carry no role label, so a single-runtime
	// deployment looks as it did before the second runtime existed.
	r := reg
	if role != "solo" {
		r = prometheus.WrapRegistererWith(prometheus.Labels{"role": role}, reg)
	}
	latency := prometheus.ExponentialBuckets(10e-6, 2.5, 16) // 10µs .. ~10min
	m := &metrics{
		maxStep: &maxStep{role: role},
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tandem_compute_commands_total", Help: "Compute protocol commands received, by command.",
		}, []string{"command"}),
		runtimeCommands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tandem_compute_runtime_commands_total", Help: "Commands applied by the compute runtime, by command.",
		}, []string{"command"}),
		workerStep: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "tandem_compute_worker_step_duration_seconds", Help: "Duration of one worker run-loop step.",
			Buckets: latency,
		}),
		maintenance: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tandem_compute_arrangement_maintenance_seconds_total",
			Help: "Time workers spent maintaining arrangements (sealing batches, merging spines).",
		}),
		peeks: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tandem_compute_peek_duration_seconds", Help: "Peek duration from command to terminal response, by result.",
			Buckets: latency,
		}, []string{"result"}),
		runtimePeeks: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tandem_compute_runtime_peek_duration_seconds", Help: "Peek duration inside the runtime, by result.",
			Buckets: latency,
		}, []string{"result"}),
		collections: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tandem_compute_collections", Help: "Live collections, by hydration.",
		}, []string{"hydration"}),
		reconciliations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tandem_compute_reconciliation_dataflows_total", Help: "Dataflows at reconciliation, by outcome (reused, replaced, dropped).",
		}, []string{"outcome"}),
		laneCommands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tandem_compute_peek_lane_commands_total", Help: "Compute protocol commands received over the peek lane (also in tandem_compute_commands_total), by command.",
		}, []string{"command"}),
		readStages: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tandem_compute_read_stage_seconds", Help: "Time one peek spent in each stage on the replica: command (off the gRPC stream to the runtime), runtime (to the runtime's answer).",
			Buckets: latency,
		}, []string{"stage"}),
		sinkAppends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tandem_compute_sink_appends_total",
			Help: "Compare-and-append calls by materialized-view sink writers, by result: appended, lost_race (another writer moved the shard's upper first), error (storage failed; retried with backoff). Their sum is the appends attempted.",
		}, []string{"result"}),
		sinkUpdates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tandem_compute_sink_appended_updates_total",
			Help: "Updates (rows with diffs) written to sink shards by successful appends.",
		}),
		sinkAppendTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "tandem_compute_sink_append_duration_seconds", Help: "Duration of one sink compare-and-append call, any result (includes the storage fsync).",
			Buckets: latency,
		}),
		sinkReads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tandem_compute_sink_shard_reads_total",
			Help: "Sink shard reads by reason: start (a writer's full read of the shard) or lost_race (re-reading what another writer appended).",
		}, []string{"reason"}),
		sinkLag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tandem_compute_sink_write_lag_ms",
			Help: "How far a live sink's shard upper trails its dataflow's output frontier (timestamp ms), by sink GlobalId; the series is deleted when the sink's writer stops.",
		}, []string{"sink"}),
		sinkPersisted: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tandem_compute_sink_persisted_rows",
			Help: "Distinct rows a live sink's writer keeps in memory (the shard's contents it corrects against), by sink GlobalId; deleted when the writer stops.",
		}, []string{"sink"}),
	}
	maxStepGauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "tandem_compute_worker_max_step_seconds",
		Help: "Longest worker run-loop step of the runtime since the process started or POST /api/reset-max-step on this port.",
	}, m.maxStep.seconds)
	r.MustRegister(maxStepGauge, m.commands, m.runtimeCommands, m.workerStep, m.maintenance, m.peeks, m.runtimePeeks, m.collections, m.reconciliations, m.readStages, m.laneCommands,
		m.sinkAppends, m.sinkUpdates, m.sinkAppendTime, m.sinkReads, m.sinkLag, m.sinkPersisted)
	m.collections.WithLabelValues("hydrated")
	m.collections.WithLabelValues("hydrating")
	for _, o := range []string{"reused", "replaced", "dropped"} {
		m.reconciliations.WithLabelValues(o)
	}
	for _, r := range sink.AppendResults() {
		m.sinkAppends.WithLabelValues(string(r))
	}
	for _, r := range sink.ReadReasons() {
		m.sinkReads.WithLabelValues(string(r))
	}
	return m
}

// serverMetrics adapts metrics to server.Metrics.
type serverMetrics struct{ m *metrics }

func (s serverMetrics) CommandReceived(kind string) { s.m.commands.WithLabelValues(kind).Inc() }
func (s serverMetrics) LaneCommand(kind string)     { s.m.laneCommands.WithLabelValues(kind).Inc() }
func (s serverMetrics) PeekFinished(result string, d time.Duration) {
	s.m.peeks.WithLabelValues(result).Observe(d.Seconds())
}
func (s serverMetrics) ReadStage(stage string, d time.Duration) {
	s.m.readStages.WithLabelValues(stage).Observe(d.Seconds())
}
func (s serverMetrics) Reconciled(reused, replaced, dropped int) {
	s.m.reconciliations.WithLabelValues("reused").Add(float64(reused))
	s.m.reconciliations.WithLabelValues("replaced").Add(float64(replaced))
	s.m.reconciliations.WithLabelValues("dropped").Add(float64(dropped))
}
func (s serverMetrics) Collections(hydrated, hydrating int) {
	s.m.collections.WithLabelValues("hydrated").Set(float64(hydrated))
	s.m.collections.WithLabelValues("hydrating").Set(float64(hydrating))
}

// runtimeMetrics adapts metrics to runtime.Metrics.
type runtimeMetrics struct{ m *metrics }

func (r runtimeMetrics) WorkerStep(_ int, d time.Duration) {
	r.m.workerStep.Observe(d.Seconds())
	r.m.maxStep.observe(d)
}
func (r runtimeMetrics) StepProfile(p runtime.StepProfile) { r.m.maxStep.observeProfile(p) }
func (r runtimeMetrics) Command(kind string)               { r.m.runtimeCommands.WithLabelValues(kind).Inc() }
func (r runtimeMetrics) ArrangementMaintenance(_ int, d time.Duration) {
	r.m.maintenance.Add(d.Seconds())
}
func (r runtimeMetrics) PeekFinished(result string, d time.Duration) {
	r.m.runtimePeeks.WithLabelValues(result).Observe(d.Seconds())
}

// sinkMetrics adapts metrics to sink.Metrics.
type sinkMetrics struct{ m *metrics }

func (s sinkMetrics) AppendFinished(result sink.AppendResult, updates int, d time.Duration) {
	s.m.sinkAppends.WithLabelValues(string(result)).Inc()
	s.m.sinkAppendTime.Observe(d.Seconds())
	if result == sink.AppendSucceeded {
		s.m.sinkUpdates.Add(float64(updates))
	}
}
func (s sinkMetrics) ShardRead(reason sink.ReadReason) {
	s.m.sinkReads.WithLabelValues(string(reason)).Inc()
}
func (s sinkMetrics) SinkState(id string, lag time.Duration, persistedRows int) {
	s.m.sinkLag.WithLabelValues(id).Set(float64(lag.Milliseconds()))
	s.m.sinkPersisted.WithLabelValues(id).Set(float64(persistedRows))
}
func (s sinkMetrics) SinkClosed(id string) {
	s.m.sinkLag.DeleteLabelValues(id)
	s.m.sinkPersisted.DeleteLabelValues(id)
}

// registerProcessCollectors registers the Go runtime and process collectors
// (unlabelled: they describe the process, not a runtime). Besides the
// memstats, the GC's own metrics are exported (go_gc_heap_live_bytes, the
// heap the last collection found live, is what readers of an index would
// grow if they copied it; heap in use also counts garbage awaiting the next
// collection).
func registerProcessCollectors(reg prometheus.Registerer) {
	reg.MustRegister(
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsGC)),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "process_arena_bytes",
			Help: "Bytes of arrangement columns kept outside the Go heap (anonymous mappings of large batches), which the go_* memory metrics do not count.",
		}, func() float64 { return float64(batch.OffHeapInUse()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "process_arena_merging_bytes",
			Help: "Of process_arena_bytes: the output written so far by merges in progress, mapped beside their inputs.",
		}, func() float64 { return float64(batch.OffHeapUsage().Merging) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "process_arena_retired_bytes",
			Help: "Of process_arena_bytes: batches an arrangement merged away that are still mapped (a reader holds them, or the collector has not yet found them unreachable).",
		}, func() float64 { return float64(batch.OffHeapUsage().Retired) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "process_arena_pooled_bytes",
			Help: "Of process_arena_bytes: mappings of released arenas kept for reuse by later ones (resident, at most the pool's limit).",
		}, func() float64 { return float64(batch.OffHeapUsage().Pooled) }))
}

// sharingMetrics are the two-runtime gauges: the hold gap of what each role
// publishes and how many peeks the multiplexer routed to each runtime.
type sharingMetrics struct {
	holdGap *prometheus.GaugeVec
	held    *prometheus.GaugeVec
}

func newSharingMetrics(reg prometheus.Registerer, routed func() (maintenance, interactive uint64)) *sharingMetrics {
	m := &sharingMetrics{
		holdGap: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tandem_compute_shared_arrangement_hold_gap_ms",
			Help: "Largest gap, over the arrangements this runtime publishes, between the since its own handles ask for and the since the readers' holds let it apply (ms). Only logical compaction is measured; merges stalled by physical holds and chains pinned by readers are not.",
		}, []string{"role"}),
		held: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "tandem_compute_shared_arrangement_held_count",
			Help: "Number of arrangements this runtime publishes whose compaction a reader holds back.",
		}, []string{"role"}),
	}
	reg.MustRegister(m.holdGap, m.held)
	for _, rt := range []runtime.Role{runtime.Maintenance, runtime.Interactive} {
		m.holdGap.WithLabelValues(rt.String())
		m.held.WithLabelValues(rt.String())
	}
	maint := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "tandem_compute_peeks_routed_total", Help: "Peeks the multiplexer sent to each runtime.",
		ConstLabels: prometheus.Labels{"role": runtime.Maintenance.String()},
	}, func() float64 { m, _ := routed(); return float64(m) })
	inter := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "tandem_compute_peeks_routed_total", Help: "Peeks the multiplexer sent to each runtime.",
		ConstLabels: prometheus.Labels{"role": runtime.Interactive.String()},
	}, func() float64 { _, i := routed(); return float64(i) })
	reg.MustRegister(maint, inter)
	return m
}

// registerWalkCounters exports how many index peek walks of a runtime
// finished on their worker and how many moved to the offload pool.
func registerWalkCounters(reg prometheus.Registerer, role string, counts func() (inline, offloaded uint64)) {
	labels := prometheus.Labels{}
	if role != "solo" {
		labels["role"] = role
	}
	for _, where := range []string{"inline", "offloaded"} {
		l := prometheus.Labels{"placement": where}
		for k, v := range labels {
			l[k] = v
		}
		offloaded := where == "offloaded"
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "tandem_compute_peek_walks_total", Help: "Index peek walks by where they ran: inline (finished on the worker within its budget) or offloaded (continued on the offload pool).",
			ConstLabels: l,
		}, func() float64 {
			i, o := counts()
			if offloaded {
				return float64(o)
			}
			return float64(i)
		}))
	}
}

// registerSealedPeeks exports how many point reads a runtime served off its
// workers because their time was already sealed in every local shard.
func registerSealedPeeks(reg prometheus.Registerer, role string, count func() uint64) {
	labels := prometheus.Labels{}
	if role != "solo" {
		labels["role"] = role
	}
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "tandem_compute_sealed_peeks_total", Help: "Point-read peeks served off the workers because their time was already sealed in every local shard of the index.",
		ConstLabels: labels,
	}, func() float64 { return float64(count()) }))
}

// registerImportCounters exports how the index imports of a runtime's
// dataflows were read: through cursors only (one-shot reductions) or
// flattened into row updates.
func registerImportCounters(reg prometheus.Registerer, role string, counts func() (cursor, flattened uint64)) {
	for _, how := range []string{"cursor", "flattened"} {
		l := prometheus.Labels{"read": how}
		if role != "solo" {
			l["role"] = role
		}
		flattened := how == "flattened"
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "tandem_compute_index_imports_total", Help: "Index imports of built dataflows, per worker, by how they were read: cursor (only through cursors, by one-shot reductions), flattened (into row updates) or live (following a peer index as it changes).",
			ConstLabels: l,
		}, func() float64 {
			c, f := counts()
			if flattened {
				return float64(f)
			}
			return float64(c)
		}))
	}
}

// registerLiveImports exports how many index imports of a runtime's
// dataflows follow a peer index live (a SUBSCRIBE on the interactive
// runtime), as tandem_compute_index_imports_total{read="live"}.
func registerLiveImports(reg prometheus.Registerer, role string, live func() uint64) {
	l := prometheus.Labels{"read": "live"}
	if role != "solo" {
		l["role"] = role
	}
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "tandem_compute_index_imports_total", Help: "Index imports of built dataflows, per worker, by how they were read: cursor (only through cursors, by one-shot reductions), flattened (into row updates) or live (following a peer index as it changes).",
		ConstLabels: l,
	}, func() float64 { return float64(live()) }))
}
