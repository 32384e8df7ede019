package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/readtrace"
)

// PeekError is a replica's refusal of a peek, carrying a SQLSTATE.
type PeekError struct {
	SQLState string
	Message  string
}

func (e *PeekError) Error() string { return e.Message + " (SQLSTATE " + e.SQLState + ")" }

// PeekRequest describes a read of an index.
type PeekRequest struct {
	Cluster string
	// Target is the index to read.
	Target    plan.GlobalID
	Isolation Isolation
	// LiteralKeys restrict the read to these encoded keys (fast path with
	// key constraints); empty means a full scan.
	LiteralKeys [][]byte
	// MFP is applied on the replica to each row read; nil is the identity.
	MFP *expr.MFP
	// Finishing, when set, is the read's ORDER BY / OFFSET / LIMIT and
	// projection: each replica process cuts its shard to the order and
	// offset+limit, and the controller applies the whole finishing to the
	// merged answer.
	Finishing *plan.Finishing
	// Replica, when not empty, names the only replica to ask, and the read
	// time is chosen from that replica's frontiers alone. Reads of
	// introspection collections always go to one replica: this one, or any
	// connected one when empty.
	Replica string
	// SpillDir, when not empty, lets a large answer bypass memory: the
	// stashed chunks of a replica's answer are appended to a temporary
	// file in this directory as they arrive, and the result is returned
	// as PeekResult.Spilled (read back one row at a time) instead of Rows.
	// A finishing with an order still needs every row at once: it is read
	// back into Rows.
	SpillDir string
	// AsOf, when set, is the read time, held by the caller (a Snapshot):
	// no time is chosen from Isolation or the replica's frontiers.
	AsOf *frontier.Time
}

// PeekResult is a peek's answer: Rows, or (for a request with a SpillDir
// answered in stashed chunks) Spilled, which the caller must Close.
type PeekResult struct {
	Rows      []row.RowCount
	Spilled   *SpilledRows
	Timestamp frontier.Time
	// Replica answered first.
	Replica string
}

// peek is a pending peek. Guarded by the controller's mutex.
type peek struct {
	uuid    string
	target  plan.GlobalID // the index read
	cluster *cluster
	cmd     *computepb.Command
	started time.Time
	result  chan peekResult
	done    bool
	// answers collects each replica's per-process answers of the current
	// epoch.
	answers map[string]*replicaAnswer
	// finishing is re-applied by the controller when a multi-process
	// replica's partial answers are merged.
	finishing *plan.Finishing
	// replica, when not empty, is the only replica asked.
	replica string
	// spillDir, when not empty, receives stashed answers (see
	// PeekRequest.SpillDir).
	spillDir string
	// maxBytes is max_result_size when the peek was issued (0: unbounded).
	maxBytes uint64
	// restarts counts the connections lost by replicas it was pending on
	// (chargePeeksLocked).
	restarts int
}

// sendsTo reports whether the peek is (re)sent to replica name.
func (p *peek) sendsTo(name string) bool { return p.replica == "" || p.replica == name }

type replicaAnswer struct {
	epoch    uint64
	answered []bool
	rows     []row.RowCount
	err      *computepb.PeekError
	// spill holds the stashed chunks received so far, when the peek
	// spills; rows then holds only unstashed process answers.
	spill    *spill
	spillErr error
	// bytes counts the encoded rows received (in memory or spilled), for
	// max_result_size.
	bytes uint64
}

// CodeResultTooLarge is the SQLSTATE of an answer above max_result_size
// (program_limit_exceeded), as replicas report it.
const CodeResultTooLarge = "54000"

// countLocked adds rows to the answer's size and fails the peek when the
// whole answer of the replica exceeds max_result_size; false means the
// peek is over.
func (p *peek) countLocked(a *replicaAnswer, rows []*computepb.RowCount, replica string) bool {
	for _, rc := range rows {
		a.bytes += uint64(len(rc.GetRow()))
	}
	if p.maxBytes == 0 || a.bytes <= p.maxBytes {
		return true
	}
	p.finishLocked(peekResult{err: &PeekError{SQLState: CodeResultTooLarge,
		Message: fmt.Sprintf("result exceeds max_result_size of %d bytes", p.maxBytes)}, replica: replica})
	return false
}

// discard releases what the answer holds.
func (a *replicaAnswer) discard() {
	if a.spill != nil {
		a.spill.close()
		a.spill = nil
	}
	a.rows = nil
}

type peekResult struct {
	rows    []row.RowCount
	spilled *SpilledRows
	err     error
	replica string
}

// finishLocked delivers the result once and tells every other replica to
// stop working on the peek.
func (p *peek) finishLocked(res peekResult) {
	if p.done {
		if res.spilled != nil {
			res.spilled.Close()
		}
		return
	}
	p.done = true
	p.discardAnswersLocked()
	p.result <- res
	delete(p.cluster.peeks, p.uuid)
	cancel := &computepb.Command{Kind: &computepb.Command_CancelPeek{CancelPeek: &computepb.CancelPeek{Uuid: p.uuid}}}
	for name, r := range p.cluster.replicas {
		if name != res.replica && p.sendsTo(name) {
			r.sendLocked(cancel)
		}
	}
}

// discardAnswersLocked releases every replica answer still held (the
// winner's spill was handed over before).
func (p *peek) discardAnswersLocked() {
	for _, a := range p.answers {
		a.discard()
	}
}

// Peek reads an existing index at a timestamp chosen by req.Isolation (the
// fast path), once the cluster's read admission lets it run (admission.go). The read hold on the index is released only after the
// result is delivered or the peek abandoned.
func (c *Controller) Peek(ctx context.Context, req PeekRequest) (PeekResult, error) {
	start := time.Now()
	release, err := c.admit.acquire(ctx, req.Cluster, readPeek)
	if err != nil {
		return PeekResult{}, fmt.Errorf("peek %s: %w", req.Target, err)
	}
	defer release()
	readtrace.Observe(ctx, readtrace.Admission, start)
	start = time.Now()
	c.mu.Lock()
	col, ok := c.collections[req.Target]
	if !ok || col.kind != kindCompute || col.cluster != req.Cluster {
		c.mu.Unlock()
		return PeekResult{}, fmt.Errorf("peek %s: not an index of cluster %q: %w", req.Target, req.Cluster, ErrUnknownCollection)
	}
	cl, err := c.clusterLocked(req.Cluster)
	if err != nil {
		c.mu.Unlock()
		return PeekResult{}, err
	}
	target, err := c.targetReplicaLocked(cl, req.Replica, []plan.GlobalID{req.Target})
	if err != nil {
		c.mu.Unlock()
		return PeekResult{}, fmt.Errorf("peek %s: %w", req.Target, err)
	}
	var ts frontier.Time
	if target != nil {
		req.Replica = target.cfg.ID.Replica
	}
	switch {
	case req.AsOf != nil:
		ts = *req.AsOf
	case target != nil:
		ts, err = c.chooseReplicaAsOfLocked(target, []plan.GlobalID{req.Target})
	default:
		ts, err = c.chooseAsOfLocked([]plan.GlobalID{req.Target}, req.Isolation)
	}
	if err != nil {
		c.mu.Unlock()
		return PeekResult{}, fmt.Errorf("peek %s: %w", req.Target, err)
	}
	hold, err := c.acquireHoldLocked(req.Target, ts)
	if err != nil {
		c.mu.Unlock()
		return PeekResult{}, fmt.Errorf("peek %s: %w", req.Target, err)
	}
	// Introspection indexes are built by the replica itself, not by a
	// dataflow of ours: they are maintained.
	class := computepb.DataflowClass_DATAFLOW_CLASS_MAINTAINED
	if col.dataflow != nil {
		class = col.dataflow.class
	}
	// The peek is registered in the same critical section as its hold:
	// one acquisition of the mutex fewer per read.
	p, err := c.registerPeekLocked(cl, req, ts, class)
	if err != nil {
		c.releaseLocked(hold)
		c.mu.Unlock()
		return PeekResult{}, err
	}
	c.mu.Unlock()
	readtrace.Observe(ctx, readtrace.Timestamp, start)
	ctlStart := time.Now()
	return c.awaitHeld(ctx, hold, func() (PeekResult, error) { return c.awaitPeek(ctx, req, p, ts, ctlStart) })
}

// peekHeld issues a peek under an acquired hold and releases the hold
// after the result is delivered (or the peek abandoned), on every path.
// ctlStart is when the read's controller stage began (readtrace).
func (c *Controller) peekHeld(ctx context.Context, req PeekRequest, hold *ReadHold, class computepb.DataflowClass, ctlStart time.Time) (PeekResult, error) {
	return c.awaitHeld(ctx, hold, func() (PeekResult, error) { return c.issuePeek(ctx, req, hold.Since(), class, ctlStart) })
}

// awaitHeld runs read, a peek under hold, and releases the hold after the
// result is delivered (or the peek abandoned), on every path.
func (c *Controller) awaitHeld(ctx context.Context, hold *ReadHold, read func() (PeekResult, error)) (PeekResult, error) {
	start := time.Now()
	res, err := read()
	// The result has been handed to us: only now may the index compact
	// past the peek's time.
	if !c.hooks.skipPeekHoldRelease {
		hold.Release()
	}
	outcome := "rows"
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		outcome = "canceled"
	case err != nil:
		outcome = "error"
	}
	c.cfg.Metrics.peek(outcome, time.Since(start))
	return res, err
}

func (c *Controller) issuePeek(ctx context.Context, req PeekRequest, ts frontier.Time, class computepb.DataflowClass, ctlStart time.Time) (PeekResult, error) {
	c.mu.Lock()
	cl, err := c.clusterLocked(req.Cluster)
	if err != nil {
		c.mu.Unlock()
		return PeekResult{}, err
	}
	p, err := c.registerPeekLocked(cl, req, ts, class)
	c.mu.Unlock()
	if err != nil {
		return PeekResult{}, err
	}
	return c.awaitPeek(ctx, req, p, ts, ctlStart)
}

// registerPeekLocked registers a peek of req at ts on cluster cl and
// queues it to the replicas it asks.
func (c *Controller) registerPeekLocked(cl *cluster, req PeekRequest, ts frontier.Time, class computepb.DataflowClass) (*peek, error) {
	p := &peek{
		uuid: newUUID(), target: req.Target, cluster: cl, started: time.Now(),
		result:    make(chan peekResult, 1),
		answers:   map[string]*replicaAnswer{},
		finishing: req.Finishing,
		replica:   req.Replica,
		spillDir:  req.SpillDir,
		maxBytes:  c.maxResultSizeLocked(),
	}
	p.cmd = &computepb.Command{Kind: &computepb.Command_Peek{Peek: &computepb.Peek{
		Uuid: p.uuid, Target: protocol.GlobalIDToProto(req.Target), Timestamp: uint64(ts),
		LiteralKeys: req.LiteralKeys, Mfp: mfpToProto(req.MFP),
		Finishing: protocol.FinishingToProto(replicaFinishing(req.Finishing)), TargetClass: class,
	}}}
	if p.replica != "" {
		if _, ok := cl.replicas[p.replica]; !ok {
			return nil, fmt.Errorf("peek %s: cluster %q has no replica %q: %w", req.Target, cl.name, p.replica, ErrUnknownReplica)
		}
	}
	cl.peeks[p.uuid] = p
	for name, r := range cl.replicas {
		if p.sendsTo(name) {
			r.sendLocked(p.cmd)
		}
	}
	return p, nil
}

// awaitPeek waits for a registered peek's result, cancelling it when ctx
// ends first.
func (c *Controller) awaitPeek(ctx context.Context, req PeekRequest, p *peek, ts frontier.Time, ctlStart time.Time) (PeekResult, error) {
	cl := p.cluster
	readtrace.Observe(ctx, readtrace.Controller, ctlStart)
	sent := time.Now()

	select {
	case res := <-p.result:
		readtrace.Observe(ctx, readtrace.Replica, sent)
		if res.err != nil {
			return PeekResult{}, res.err
		}
		return PeekResult{Rows: res.rows, Spilled: res.spilled, Timestamp: ts, Replica: res.replica}, nil
	case <-ctx.Done():
		c.mu.Lock()
		if !p.done {
			p.done = true
			p.discardAnswersLocked()
			delete(cl.peeks, p.uuid)
			cancel := &computepb.Command{Kind: &computepb.Command_CancelPeek{CancelPeek: &computepb.CancelPeek{Uuid: p.uuid}}}
			for name, r := range cl.replicas {
				if p.sendsTo(name) {
					r.sendLocked(cancel)
				}
			}
			c.mu.Unlock()
			return PeekResult{}, fmt.Errorf("peek %s: %w", req.Target, ctx.Err())
		}
		c.mu.Unlock()
		// The answer raced with the cancellation: it was delivered, use it.
		res := <-p.result
		readtrace.Observe(ctx, readtrace.Replica, sent)
		if res.err != nil {
			return PeekResult{}, res.err
		}
		return PeekResult{Rows: res.rows, Spilled: res.spilled, Timestamp: ts, Replica: res.replica}, nil
	}
}

func (c *Controller) handlePeekResponseLocked(r *replica, proc int, resp *computepb.PeekResponse) {
	p, ok := r.cluster.peeks[resp.GetUuid()]
	if !ok {
		return // answered already, or abandoned
	}
	switch k := resp.GetResult().(type) {
	case *computepb.PeekResponse_Rows:
		c.peekAnsweredLocked(r, proc, p, k.Rows.GetRows(), nil, true)
	case *computepb.PeekResponse_Stashed:
		c.peekStashedLocked(r, proc, p, k.Stashed.GetRows(), k.Stashed.GetFinal())
	case *computepb.PeekResponse_Error:
		c.peekAnsweredLocked(r, proc, p, nil, r.refusalOr(p, k.Error), true)
	case *computepb.PeekResponse_Canceled:
		// Only sent after our CancelPeek; the peek is no longer pending.
	}
}

// peekAnsweredLocked records part of one process's answer; once every
// process of the replica answered, the replica's merged answer wins.
func (c *Controller) peekAnsweredLocked(r *replica, proc int, p *peek, rows []*computepb.RowCount, perr *computepb.PeekError, final bool) {
	a := p.answerLocked(r)
	if proc >= len(a.answered) || a.answered[proc] {
		return
	}
	if !p.countLocked(a, rows, r.cfg.ID.Replica) {
		return
	}
	for _, pr := range rows {
		rc, err := protocol.RowCountFromProto(pr)
		if err != nil {
			p.finishLocked(peekResult{err: fmt.Errorf("peek %s: replica %s: %w", p.target, r.cfg.ID.Replica, err), replica: r.cfg.ID.Replica})
			return
		}
		a.rows = append(a.rows, rc)
	}
	c.peekPartDoneLocked(r, proc, p, a, perr, final)
}

// answerLocked returns r's answer of its current epoch, replacing (and
// releasing) one of an earlier connection.
func (p *peek) answerLocked(r *replica) *replicaAnswer {
	name := r.cfg.ID.Replica
	a, ok := p.answers[name]
	if !ok || a.epoch != r.epoch {
		if ok {
			a.discard()
		}
		a = &replicaAnswer{epoch: r.epoch, answered: make([]bool, len(r.conns))}
		p.answers[name] = a
	}
	return a
}

// peekStashedLocked records one stashed chunk of one process's answer:
// spilled to disk when the peek spills, otherwise kept in memory.
func (c *Controller) peekStashedLocked(r *replica, proc int, p *peek, rows []*computepb.RowCount, final bool) {
	if p.spillDir == "" {
		c.peekAnsweredLocked(r, proc, p, rows, nil, final)
		return
	}
	a := p.answerLocked(r)
	if proc >= len(a.answered) || a.answered[proc] {
		return
	}
	if !p.countLocked(a, rows, r.cfg.ID.Replica) {
		return
	}
	if a.spill == nil && a.spillErr == nil {
		a.spill, a.spillErr = newSpill(p.spillDir)
	}
	if a.spill != nil {
		a.spill.append(rows)
	}
	c.peekPartDoneLocked(r, proc, p, a, nil, final)
}

// peekPartDoneLocked completes a process's part when final; once every
// process of the replica answered, the replica's merged answer wins.
func (c *Controller) peekPartDoneLocked(r *replica, proc int, p *peek, a *replicaAnswer, perr *computepb.PeekError, final bool) {
	name := r.cfg.ID.Replica
	if perr != nil && a.err == nil {
		a.err = perr
	}
	if !final {
		return
	}
	a.answered[proc] = true
	for _, done := range a.answered {
		if !done {
			return
		}
	}
	if a.err != nil {
		p.finishLocked(peekResult{err: &PeekError{SQLState: a.err.GetSqlstate(), Message: a.err.GetMessage()}, replica: name})
		return
	}
	if a.spillErr != nil {
		p.finishLocked(peekResult{err: a.spillErr, replica: name})
		return
	}
	if sp := a.spill; sp != nil {
		// Unstashed parts (small shards of other processes) join the
		// spill, so the answer is read back in one pass.
		sp.append(rowCountsProto(a.rows))
		a.rows, a.spill = nil, nil
		if p.finishing != nil && len(p.finishing.Order) > 0 {
			all, err := sp.readAll()
			sp.close()
			if err == nil {
				all, err = applyFinishing(all, p.finishing)
			}
			p.finishLocked(peekResult{rows: all, err: err, replica: name})
			return
		}
		spilled, err := sp.finish(newFinishingStream(p.finishing))
		p.finishLocked(peekResult{spilled: spilled, err: err, replica: name})
		return
	}
	// Replicas applied only ordering and offset+limit per process; the
	// exact finishing applies to the union.
	rowsOut, err := applyFinishing(a.rows, p.finishing)
	if err != nil {
		p.finishLocked(peekResult{err: err, replica: name})
		return
	}
	p.finishLocked(peekResult{rows: rowsOut, replica: name})
}

// mfpToProto encodes a peek's MFP; nil (the identity) is absent.
func mfpToProto(m *expr.MFP) *computepb.MapFilterProject {
	if m == nil {
		return nil
	}
	return protocol.MFPToProto(m)
}

func rowCountsProto(rows []row.RowCount) []*computepb.RowCount {
	out := make([]*computepb.RowCount, len(rows))
	for i, r := range rows {
		out[i] = protocol.RowCountToProto(r)
	}
	return out
}
