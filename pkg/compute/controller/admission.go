package controller

import (
	"context"
	"fmt"
	"strconv"
	"sync"
)

// Read admission (docs/design/controller.md, "Read admission"): every read
// of a cluster (Peek, PeekDataflow) is admitted before it picks a
// timestamp, takes a hold or builds a dataflow. At most the kind's
// concurrency limit run at once per cluster; up to max_queued_reads more
// wait in arrival order; a read beyond that is refused with 53000, and one
// whose context ends while it waits (statement_timeout, a cancel) leaves
// the queue without having held anything.
const (
	// ParamMaxConcurrentPeeks bounds the fast-path index reads (peeks)
	// running at once on a cluster; 0 turns the bound off.
	ParamMaxConcurrentPeeks = "max_concurrent_peeks"
	// ParamMaxConcurrentOneShotReads bounds the slow-path reads (one-shot
	// dataflows) running at once on a cluster; 0 turns the bound off.
	ParamMaxConcurrentOneShotReads = "max_concurrent_one_shot_reads"
	// ParamMaxQueuedReads bounds the reads of one kind waiting for
	// admission on a cluster; 0 refuses every read that cannot run at once.
	ParamMaxQueuedReads = "max_queued_reads"

	DefaultMaxConcurrentPeeks        = 64
	DefaultMaxConcurrentOneShotReads = 8
	DefaultMaxQueuedReads            = 1024

	// CodeInsufficientResources is the SQLSTATE of a read refused because
	// its cluster's admission queue is full (insufficient_resources).
	CodeInsufficientResources = "53000"
)

// readKind is the admission class of a read.
type readKind int

const (
	readPeek    readKind = iota // a fast-path read of an existing index
	readOneShot                 // a read answered by a one-shot dataflow
)

func (k readKind) String() string {
	if k == readOneShot {
		return "one_shot"
	}
	return "peek"
}

// limitParam names the parameter bounding k's concurrency.
func (k readKind) limitParam() string {
	if k == readOneShot {
		return ParamMaxConcurrentOneShotReads
	}
	return ParamMaxConcurrentPeeks
}

// admissionLimits are the bounds in force; 0 concurrency is unbounded.
type admissionLimits struct {
	concurrency [2]int // by readKind
	queue       int
}

// limitsFrom reads the bounds from system parameters (values were
// validated by the environment; an unreadable one keeps its default).
func limitsFrom(params map[string]string) admissionLimits {
	get := func(name string, def int) int {
		v, ok := params[name]
		if !ok {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return def
		}
		return n
	}
	return admissionLimits{
		concurrency: [2]int{
			readPeek:    get(ParamMaxConcurrentPeeks, DefaultMaxConcurrentPeeks),
			readOneShot: get(ParamMaxConcurrentOneShotReads, DefaultMaxConcurrentOneShotReads),
		},
		queue: get(ParamMaxQueuedReads, DefaultMaxQueuedReads),
	}
}

// isAdmissionParam reports whether name is one of the admission bounds.
func isAdmissionParam(name string) bool {
	return name == ParamMaxConcurrentPeeks || name == ParamMaxConcurrentOneShotReads || name == ParamMaxQueuedReads
}

// admission is the per-cluster, per-kind gate. It has its own mutex, taken
// after the controller's (SetParameter) and never while waiting.
type admission struct {
	metrics *Metrics

	mu     sync.Mutex
	limits admissionLimits
	lanes  map[laneKey]*lane
}

type laneKey struct {
	cluster string
	kind    readKind
}

// lane is one cluster's reads of one kind: how many run, and who waits,
// oldest first.
type lane struct {
	running int
	waiting []*waiter
}

// waiter is a queued read; ready is closed when it is admitted.
type waiter struct {
	ready chan struct{}
}

func newAdmission(params map[string]string, m *Metrics) *admission {
	return &admission{metrics: m, limits: limitsFrom(params), lanes: map[laneKey]*lane{}}
}

// setLimits applies new bounds: a raised limit admits waiting reads at
// once; a lowered one lets running reads finish.
func (a *admission) setLimits(l admissionLimits) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.limits = l
	for key, ln := range a.lanes {
		a.grantLocked(key, ln)
	}
}

// acquire admits one read of kind on cluster, waiting in line if the lane
// is full. It returns a release func to call exactly once when the read is
// over, or a *PeekError (53000) when the queue is full, or ctx's error when
// ctx ends first.
func (a *admission) acquire(ctx context.Context, cluster string, kind readKind) (func(), error) {
	key := laneKey{cluster, kind}
	a.mu.Lock()
	ln := a.lanes[key]
	if ln == nil {
		ln = &lane{}
		a.lanes[key] = ln
	}
	limit := a.limits.concurrency[kind]
	if len(ln.waiting) == 0 && (limit == 0 || ln.running < limit) {
		ln.running++
		a.observeLocked(key, ln)
		a.mu.Unlock()
		return a.releaser(key), nil
	}
	if len(ln.waiting) >= a.limits.queue {
		err := &PeekError{SQLState: CodeInsufficientResources, Message: fmt.Sprintf(
			"too many concurrent reads on cluster %q: %d %s reads running (%s) and %d queued (%s)",
			cluster, ln.running, kind, kind.limitParam(), len(ln.waiting), ParamMaxQueuedReads)}
		a.forgetLocked(key, ln)
		a.mu.Unlock()
		a.metrics.admissionRefused(cluster, kind.String())
		return nil, err
	}
	w := &waiter{ready: make(chan struct{})}
	ln.waiting = append(ln.waiting, w)
	a.observeLocked(key, ln)
	a.mu.Unlock()

	select {
	case <-w.ready:
		return a.releaser(key), nil
	case <-ctx.Done():
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-w.ready:
		// Admitted while ctx ended: hand the slot on.
		ln.running--
		a.grantLocked(key, ln)
	default:
		for i, x := range ln.waiting {
			if x == w {
				ln.waiting = append(ln.waiting[:i], ln.waiting[i+1:]...)
				break
			}
		}
		a.observeLocked(key, ln)
		a.forgetLocked(key, ln)
	}
	a.metrics.admissionAbandoned(cluster, kind.String())
	return nil, fmt.Errorf("waiting for read admission on cluster %q: %w", cluster, ctx.Err())
}

// releaser returns the release func of an admitted read; calling it more
// than once releases once.
func (a *admission) releaser(key laneKey) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			ln := a.lanes[key]
			ln.running--
			a.grantLocked(key, ln)
		})
	}
}

// grantLocked admits waiting reads while the lane has room, oldest first.
func (a *admission) grantLocked(key laneKey, ln *lane) {
	limit := a.limits.concurrency[key.kind]
	for len(ln.waiting) > 0 && (limit == 0 || ln.running < limit) {
		w := ln.waiting[0]
		ln.waiting = ln.waiting[1:]
		ln.running++
		close(w.ready)
	}
	a.observeLocked(key, ln)
	a.forgetLocked(key, ln)
}

// forgetLocked drops an idle lane, so dropped clusters leave nothing.
func (a *admission) forgetLocked(key laneKey, ln *lane) {
	if ln.running == 0 && len(ln.waiting) == 0 {
		delete(a.lanes, key)
	}
}

func (a *admission) observeLocked(key laneKey, ln *lane) {
	a.metrics.admission(key.cluster, key.kind.String(), ln.running, len(ln.waiting))
}

// AdmissionState is one lane's state, for tests and status.
type AdmissionState struct {
	Running, Queued int
}

// Admission returns how many reads of each kind ("peek", "one_shot") run
// and wait on cluster.
func (c *Controller) Admission(cluster string) map[string]AdmissionState {
	a := c.admit
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]AdmissionState{}
	for _, k := range []readKind{readPeek, readOneShot} {
		if ln := a.lanes[laneKey{cluster, k}]; ln != nil {
			out[k.String()] = AdmissionState{Running: ln.running, Queued: len(ln.waiting)}
		} else {
			out[k.String()] = AdmissionState{}
		}
	}
	return out
}
