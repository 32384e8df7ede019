package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// Memory admission of new dataflows on replicas of several processes.
//
// Every process of a replica must build the same dataflows (they number
// them alike and exchange data between them), so none may refuse a
// create_dataflow on its own when it is near its memory limit, as a
// one-process replica does. Instead each process reports its memory
// (MemoryStatus: first on every connection, limit 0 when it has none,
// then whenever it crosses its threshold), and the controller, which
// sends every command to all the processes, sends no new dataflow to a
// replica one of whose processes last reported near_limit. It records
// the refusal as a replica's own (refusal.go): the dataflow's reads on
// that replica fail with 53200 naming the process, for the rest of the
// connection.
//
// No dataflow is sent before the memory is known: a connection to a
// replica of several processes sends Hello alone, waits for every
// process's first report (at most Config.MemoryReportTimeout, after which
// the connection fails and is retried), and only then replays the
// history. In the replay, a dataflow already sent to the replica, in an
// earlier connection or this one, is sent again whatever the reports say:
// a replica that kept running reconciles it at no cost, and dropping it
// would take away an index the replica serves. A dataflow the replica
// was never sent (created while it was away, or held back before) is new
// work to it and is held back, as at creation, when a process reports
// being near its limit: its reads there fail with 53200. A report is at
// most one sampling interval old.

// codeOutOfMemory is the SQLSTATE of a dataflow held back because its
// replica is near its memory limit (out_of_memory).
const codeOutOfMemory = "53200"

// handleMemoryStatusLocked records process proc's memory report.
func (c *Controller) handleMemoryStatusLocked(r *replica, proc int, m *computepb.MemoryStatus) {
	prev := r.memory[proc]
	if r.memory == nil {
		r.memory = map[int]*computepb.MemoryStatus{}
	}
	r.memory[proc] = m
	if w := r.memoryWait; w != nil && len(r.memory) >= w.processes {
		close(w.done)
		r.memoryWait = nil
	}
	if prev.GetNearLimit() != m.GetNearLimit() {
		r.log.Info("Replica process reported its memory", "process", proc, "used", m.GetUsedBytes(), "limit", m.GetLimitBytes(), "nearLimit", m.GetNearLimit())
	}
}

// memoryRefusalLocked returns the refusal of a new dataflow on r when one
// of its processes last reported being near its memory limit, else nil.
func (r *replica) memoryRefusalLocked() *computepb.PeekError {
	for _, proc := range r.nearLimitLocked() {
		if m := r.memory[proc]; m != nil {
			return &computepb.PeekError{Sqlstate: codeOutOfMemory, Message: fmt.Sprintf(
				"replica is near its memory limit (process %d: %d of %d bytes in use); refusing a new dataflow: retry later or use a larger replica",
				proc, m.GetUsedBytes(), m.GetLimitBytes())}
		}
	}
	return nil
}

// nearLimitLocked lists the processes of r that last reported being near
// their memory limit (Status).
func (r *replica) nearLimitLocked() []int {
	var out []int
	for proc := range r.conns {
		if r.memory[proc].GetNearLimit() {
			out = append(out, proc)
		}
	}
	return out
}

// holdBackDataflowLocked refuses d on r on the replica's behalf when r is
// near its memory limit, and reports whether it did; d is then not sent
// to r. d is new, so no read of it is pending yet: each later one is
// answered by every process with an error, which the refusal replaces
// (replica.refusalOr).
func (c *Controller) holdBackDataflowLocked(r *replica, d *dataflow) bool {
	perr := r.memoryRefusalLocked()
	if perr == nil {
		return false
	}
	c.dataflowRefusedLocked(r, 0, d, perr)
	return true
}

// memoryWait is a connection's wait for the first memory report of each
// of its processes.
type memoryWait struct {
	processes int
	done      chan struct{}
}

// awaitMemoryLocked starts a connection of n processes: it forgets the
// last connection's reports and returns a channel closed once every
// process reported, already closed for a replica of one process (which
// judges its own memory and does not report).
func (r *replica) awaitMemoryLocked(n int) <-chan struct{} {
	r.memory = map[int]*computepb.MemoryStatus{}
	w := &memoryWait{processes: n, done: make(chan struct{})}
	r.memoryWait = nil
	if n < 2 {
		close(w.done)
	} else {
		r.memoryWait = w
	}
	return w.done
}

// awaitsMemoryReportLocked reports whether resp is a memory report the
// connection waits for before its history is replayed.
func (r *replica) awaitsMemoryReportLocked(resp *computepb.Response) bool {
	_, ok := resp.GetKind().(*computepb.Response_MemoryStatus)
	return ok && r.memoryWait != nil
}

// waitMemory waits until reported is closed; it fails when the
// connection fails, ctx ends, or Config.MemoryReportTimeout passes.
func (r *replica) waitMemory(ctx context.Context, reported <-chan struct{}, errc <-chan error) error {
	timer := time.NewTimer(r.ctl.cfg.MemoryReportTimeout)
	defer timer.Stop()
	select {
	case <-reported:
		return nil
	case err := <-errc:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		r.ctl.mu.Lock()
		defer r.ctl.mu.Unlock()
		var silent []int
		for i := range r.cfg.Processes {
			if _, ok := r.memory[i]; !ok {
				silent = append(silent, i)
			}
		}
		return fmt.Errorf("processes %v did not report their memory within %s; no dataflow is sent before they do", silent, r.ctl.cfg.MemoryReportTimeout)
	}
}

// admitReplayLocked reports whether the history replayed to r sends d: a
// dataflow r was sent before is, and one it was not is held back when r
// is near its memory limit (holdBackDataflowLocked).
func (c *Controller) admitReplayLocked(r *replica, d *dataflow) bool {
	if r.admitted[d.desc.ID] {
		return true
	}
	if c.holdBackDataflowLocked(r, d) {
		return false
	}
	r.admitted[d.desc.ID] = true
	return true
}
