package readtrace

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Stage is one stage of a read, in the order a read passes them.
type Stage int

const (
	// PgWire: from the client's message to the statement's execution
	// (reading and parsing the message and the SQL text).
	PgWire Stage = iota
	// Planning: the catalog snapshot and the query plan.
	Planning
	// Admission: waiting for the cluster's read admission.
	Admission
	// Timestamp: choosing the read time and taking the read holds.
	Timestamp
	// Controller: from the time chosen to the peek queued for the
	// replicas (a one-shot read's dataflow is installed here).
	Controller
	// Replica: from the peek queued to its answer in the controller: the
	// gRPC stream both ways and the replica's command handling, routing
	// and runtime (whose own stages the replica exports as
	// tandem_compute_read_stage_seconds).
	Replica
	// Response: from the answer in the controller to the last row handed
	// to the client connection.
	Response
	numStages
)

var stageNames = [numStages]string{"pgwire", "planning", "admission", "timestamp", "controller", "replica", "response"}

func (s Stage) String() string {
	if s < 0 || s >= numStages {
		return "unknown"
	}
	return stageNames[s]
}

// Stages lists every stage in order.
func Stages() []Stage {
	out := make([]Stage, numStages)
	for i := range out {
		out[i] = Stage(i)
	}
	return out
}

// Trace collects the stage times of one statement.
type Trace struct {
	mu       sync.Mutex
	d        [numStages]time.Duration
	n        [numStages]int
	answered time.Time // when the Replica stage last ended
}

// New returns an empty trace.
func New() *Trace { return &Trace{} }

// Add adds d to stage s; on a nil trace it does nothing.
func (t *Trace) Add(s Stage, d time.Duration) {
	if t == nil || s < 0 || s >= numStages {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.d[s] += d
	t.n[s]++
	if s == Replica {
		t.answered = time.Now()
	}
}

// Count returns how many times stage s was added.
func (t *Trace) Count(s Stage) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n[s]
}

// Duration returns the time added to stage s.
func (t *Trace) Duration(s Stage) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.d[s]
}

// IsRead reports whether the statement reached a replica.
func (t *Trace) IsRead() bool { return t != nil && t.Count(Replica) > 0 }

// Answered returns when the replica's answer reached the controller.
func (t *Trace) Answered() (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.answered, !t.answered.IsZero()
}

type traceKey struct{}

// With returns ctx carrying t.
func With(ctx context.Context, t *Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// From returns the trace ctx carries, or nil.
func From(ctx context.Context) *Trace {
	t, _ := ctx.Value(traceKey{}).(*Trace)
	return t
}

// Observe adds the time since start to stage s of ctx's trace, if any.
func Observe(ctx context.Context, s Stage, start time.Time) {
	if t := From(ctx); t != nil {
		t.Add(s, time.Since(start))
	}
}

// Histogram is tandem_read_stage_seconds{stage}: per read, the time of
// each stage it passed.
type Histogram struct{ h *prometheus.HistogramVec }

// NewHistogram registers the histogram with reg.
func NewHistogram(reg prometheus.Registerer) *Histogram {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "tandem_read_stage_seconds",
		Help:    "Time one read spent in each stage of the controller process (pgwire, planning, admission, timestamp, controller, replica, response).",
		Buckets: prometheus.ExponentialBuckets(10e-6, 2.5, 16),
	}, []string{"stage"})
	reg.MustRegister(h)
	for _, s := range Stages() {
		h.WithLabelValues(s.String())
	}
	return &Histogram{h: h}
}

// Record observes each stage t saw once, with its summed time.
func (h *Histogram) Record(t *Trace) {
	if h == nil || t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for s := range numStages {
		if t.n[s] > 0 {
			h.h.WithLabelValues(s.String()).Observe(t.d[s].Seconds())
		}
	}
}
