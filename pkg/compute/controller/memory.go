package controller

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// Memory admission of new dataflows on replicas of several processes.
//
// Every process of a replica must build the same dataflows (they number
// them alike and exchange data between them), so none may refuse a
// create_dataflow on its own when it is near its memory limit, as a
// one-process replica does. Instead each process reports its memory
// (MemoryStatus: first on every connection, then whenever it crosses its
// threshold), and the controller, which sends every command to all the
// processes, sends no new dataflow to a replica one of whose processes
// last reported near_limit. It records the refusal as a replica's own
// (refusal.go): the dataflow's reads on that replica fail with 53200
// naming the process, for the rest of the connection; a reconnection
// replays the dataflow, judged afresh. A report is at most one sampling
// interval old, and a replica that has not yet reported on a connection
// is admitted.

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
