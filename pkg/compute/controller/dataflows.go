package controller

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// ParamInteractiveDataflows is the system parameter that turns on the
// interactive runtime and tags one-shot reads OneShotRead.
const ParamInteractiveDataflows = "enable_compute_interactive_dataflows"

// interactiveLocked reports whether one-shot reads are tagged OneShotRead.
func (c *Controller) interactiveLocked() bool {
	on, _ := strconv.ParseBool(c.params[ParamInteractiveDataflows])
	return on || c.params[ParamInteractiveDataflows] == "on"
}

// CreateStorageCollection registers a table shard as a collection readable
// from its current since; the controller then holds it with its read policy
// and forwards compaction to storage.
func (c *Controller) CreateStorageCollection(id plan.GlobalID) error {
	if c.cfg.Storage == nil {
		return errors.New("create storage collection: controller has no storage")
	}
	since, upper, err := c.cfg.Storage.Frontiers(id.String())
	if err != nil {
		return fmt.Errorf("create storage collection %s: %w", id, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.collections[id]; ok {
		return fmt.Errorf("create storage collection %s: %w", id, ErrExists)
	}
	col := newCollection(id, kindStorage, since, c.cfg.ReadPolicyLag)
	c.collections[id] = col
	col.policy, err = c.acquireHoldLocked(id, since)
	if err != nil {
		return err
	}
	c.advanceWriteLocked(col, upper)
	return nil
}

// CreateDataflow installs a maintained dataflow in a cluster: it picks an
// as_of readable in every import, holds the imports there, registers the
// exports (held by the read policy), and sends the dataflow to every
// replica. It returns the as_of.
func (c *Controller) CreateDataflow(cluster string, df Dataflow) (frontier.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, err := c.clusterLocked(cluster)
	if err != nil {
		return 0, err
	}
	asOf, err := c.chooseTimeLocked(df.imports(), df.Generators, serializable)
	if err != nil {
		return 0, fmt.Errorf("create dataflow %s: %w", df.ID, err)
	}
	if df.Class == computepb.DataflowClass_DATAFLOW_CLASS_UNSPECIFIED {
		df.Class = computepb.DataflowClass_DATAFLOW_CLASS_MAINTAINED
	}
	if err := c.createDataflowLocked(cl, df, asOf, c.cfg.ReadPolicyLag); err != nil {
		return 0, err
	}
	return asOf, nil
}

// createDataflowLocked installs df at asOf. Every export gets a policy hold
// with the given lag and holds on every import at asOf.
func (c *Controller) createDataflowLocked(cl *cluster, df Dataflow, asOf frontier.Time, lag time.Duration) error {
	if !df.ID.Valid() || len(df.exports()) == 0 || df.Encode == nil {
		return fmt.Errorf("create dataflow %q: id, an export and an encoder are required", df.ID)
	}
	if _, ok := cl.dataflows[df.ID]; ok {
		return fmt.Errorf("create dataflow %s: %w", df.ID, ErrExists)
	}
	for _, e := range df.exports() {
		if _, ok := c.collections[e]; ok {
			return fmt.Errorf("create dataflow %s: export %s: %w", df.ID, e, ErrExists)
		}
	}
	for _, id := range df.IndexImports {
		if col, ok := c.collections[id]; !ok || col.kind != kindCompute || col.cluster != cl.name {
			return fmt.Errorf("create dataflow %s: index import %s is not an index of cluster %s: %w", df.ID, id, cl.name, ErrUnknownCollection)
		}
	}
	for _, id := range df.SourceImports {
		if col, ok := c.collections[id]; !ok || col.kind != kindStorage {
			return fmt.Errorf("create dataflow %s: source import %s: %w", df.ID, id, ErrUnknownCollection)
		}
	}
	body, err := df.Encode(asOf, df.Class)
	if err != nil {
		return fmt.Errorf("create dataflow %s: encode: %w", df.ID, err)
	}
	// Acquire every hold before changing anything, so a failure leaks none.
	var acquired []*ReadHold
	fail := func(err error) error {
		for _, h := range acquired {
			c.releaseLocked(h)
		}
		return fmt.Errorf("create dataflow %s: %w", df.ID, err)
	}
	type exportHolds struct {
		inputs []*ReadHold
	}
	holds := make([]exportHolds, len(df.exports()))
	for i := range df.exports() {
		for _, in := range df.imports() {
			h, err := c.acquireHoldLocked(in, asOf)
			if err != nil {
				return fail(err)
			}
			acquired = append(acquired, h)
			holds[i].inputs = append(holds[i].inputs, h)
		}
	}
	c.seq++
	d := &dataflow{desc: df, asOf: asOf, class: df.Class, seq: c.seq}
	cl.dataflows[df.ID] = d
	for _, r := range cl.replicas {
		// Each replica reads the storage imports from asOf, however long
		// its first read takes.
		c.holdImportsLocked(r, d, asOf)
	}
	for i, e := range df.exports() {
		col := newCollection(e, kindCompute, asOf, lag)
		col.cluster = cl.name
		col.dataflow = d
		col.inputs = holds[i].inputs
		c.collections[e] = col
		col.policy, _ = c.acquireHoldLocked(e, asOf) // readable: since == asOf
	}
	create := &computepb.Command{Kind: &computepb.Command_CreateDataflow{CreateDataflow: &computepb.CreateDataflow{Dataflow: body}}}
	schedule := &computepb.Command{Kind: &computepb.Command_Schedule{Schedule: &computepb.Schedule{Id: protocol.GlobalIDToProto(df.ID)}}}
	for _, r := range cl.replicas {
		if r.conns != nil {
			if c.holdBackDataflowLocked(r, d) {
				continue // memory.go
			}
			r.admitted[df.ID] = true
		}
		r.sendLocked(create)
		r.sendLocked(schedule)
	}
	return nil
}

// DropCollection drops an index, subscribe sink or table: its read policy
// is released, and it goes once no other hold (a dependent dataflow, a
// pending read) keeps it.
func (c *Controller) DropCollection(id plan.GlobalID) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	col, ok := c.collections[id]
	if !ok || col.dropped {
		return fmt.Errorf("drop %s: %w", id, ErrUnknownCollection)
	}
	c.dropLocked(col)
	return nil
}

func (c *Controller) dropLocked(col *collection) {
	col.dropped = true
	p := col.policy
	col.policy = nil
	c.releaseLocked(p)
	c.maybeRemoveLocked(col)
}

// AllocateTransientID returns a fresh transient GlobalId ("t<N>") for a
// one-shot dataflow's export.
func (c *Controller) AllocateTransientID() plan.GlobalID {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := plan.Transient(c.nextTransient)
	c.nextTransient++
	return id
}

// Isolation is a read's timestamp selection.
type Isolation int

const (
	// serializable reads the latest time complete in every input.
	serializable Isolation = iota
	// strictSerializable reads at the oracle's time, after every
	// acknowledged write.
	strictSerializable
)

// Isolation levels.
const (
	Serializable       = serializable
	StrictSerializable = strictSerializable
)

// chooseAsOfLocked picks a read time for a set of tracked inputs (see
// chooseTimeLocked, timestamp.go).
func (c *Controller) chooseAsOfLocked(inputs []plan.GlobalID, iso Isolation) (frontier.Time, error) {
	return c.chooseTimeLocked(inputs, nil, iso)
}
