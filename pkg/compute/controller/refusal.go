package controller

import (
	"errors"
	"slices"

	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// A replica that refuses a dataflow's create_dataflow (its description
// does not validate there, an export already exists, its runtime failed)
// never builds the dataflow's exports, and answers every later peek of
// them with "unknown index". The refusal, not that echo, is what the
// reader must see: the refusal's CommandError names the dataflow (its id),
// and the controller then answers, on that replica's behalf and once per
// process as any answer, every peek of one of its exports with the
// refusal's SQLSTATE and message, whether the peek was pending when the
// refusal arrived or was sent after it. The refusal lasts for the
// replica's connection: a reconnection replays create_dataflow, which the
// replica judges afresh.
//
// Every dataflow class is treated alike: the slow path's transient
// dataflows are tagged maintained when interactive dataflows are off, and
// a peek of a refused maintained index fails either way. A maintained
// dataflow's refusal is also logged at error level: it leaves an index the
// replica does not maintain.

// handleCommandErrorLocked applies a replica process's refusal of a
// command.
func (c *Controller) handleCommandErrorLocked(r *replica, proc int, e *computepb.CommandError) {
	perr := &computepb.PeekError{Sqlstate: e.GetSqlstate(), Message: e.GetMessage()}
	id, _ := protocol.GlobalIDFromProto(e.GetCollection())
	if e.GetCommand() == protocol.KindCreateDataflow {
		if d, ok := r.cluster.dataflows[id]; ok {
			c.dataflowRefusedLocked(r, proc, d, perr)
			return
		}
	}
	log := r.log
	if _, ok := r.refused[id]; ok && !id.IsZero() {
		// The echo of a refused dataflow (its Schedule, its compaction):
		// the refusal itself was logged.
		log = log.V(1)
	}
	kv := []any{"command", e.GetCommand(), "peek", e.GetPeekUuid(), "sqlstate", e.GetSqlstate(), "message", e.GetMessage()}
	if !id.IsZero() {
		kv = append(kv, "collection", id)
	}
	log.Info("Replica refused a command", kv...)
	if p, ok := r.cluster.peeks[e.GetPeekUuid()]; ok {
		c.peekAnsweredLocked(r, proc, p, nil, perr, true)
	}
}

// dataflowRefusedLocked records process proc's refusal of d and fails
// every pending peek of d's exports that r was asked to answer.
func (c *Controller) dataflowRefusedLocked(r *replica, proc int, d *dataflow, perr *computepb.PeekError) {
	kv := []any{"dataflow", d.desc.ID, "class", d.class.String(), "process", proc, "sqlstate", perr.GetSqlstate(), "message", perr.GetMessage()}
	if d.class == computepb.DataflowClass_DATAFLOW_CLASS_ONE_SHOT_READ {
		r.log.Info("Replica refused a one-shot dataflow; its read fails with the refusal", kv...)
	} else {
		r.log.Error(errors.New(perr.GetMessage()), "Replica refused a maintained dataflow; its indexes are not maintained there", kv...)
	}
	exports := d.desc.exports()
	for _, e := range exports {
		r.refused[e] = perr
	}
	name := r.cfg.ID.Replica
	for _, p := range r.cluster.peeks {
		if !p.done && p.sendsTo(name) && slices.Contains(exports, p.target) {
			c.peekAnsweredLocked(r, proc, p, nil, perr, true)
		}
	}
}

// refusalOr returns the refusal of the dataflow exporting p's target, if
// r refused it in this connection, and otherwise r's own error answer.
func (r *replica) refusalOr(p *peek, perr *computepb.PeekError) *computepb.PeekError {
	if refusal, ok := r.refused[p.target]; ok {
		return refusal
	}
	return perr
}

// forgetRefusalsLocked forgets the refusals of a collection that is gone.
func (c *Controller) forgetRefusalsLocked(col *collection) {
	if col.kind != kindCompute {
		return
	}
	if cl := c.clusters[col.cluster]; cl != nil {
		for _, r := range cl.replicas {
			delete(r.refused, col.id)
		}
	}
}
