package environment

import (
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/storage"
)

// A materialized view u<N> is stored like a table: shard u<N> in storage,
// registered as a storage collection, and written by the storage sink of a
// maintained dataflow on the view's cluster (the sink's compute collection
// has the second id allocated with the view). Reads and dependent
// dataflows import the shard, so after a restart the view answers from
// storage at once while its dataflow resumes from the shard's upper.

// installMaterializedView creates the view's shard (unless it exists: a
// restart), its storage collection, and its dataflow. On failure nothing
// new is left behind.
func (e *Environment) installMaterializedView(it sql.Item, df controller.Dataflow) error {
	shard := it.ID.String()
	created := false
	if _, _, err := e.cfg.Storage.Frontiers(shard); errors.Is(err, storage.ErrUnknownShard) {
		// A new view (or one from a catalog written before views were
		// stored): its shard starts where its dataflow will.
		start, err := e.cfg.Compute.ReadableAsOf(df)
		if err != nil {
			return err
		}
		if err := e.cfg.Storage.CreateSinkShard(shard, start); err != nil {
			return err
		}
		created = true
	} else if err != nil {
		return err
	}
	undo := func(cause error) error {
		if created {
			if err := e.cfg.Storage.DropShard(shard); err != nil {
				e.log.Error(err, "Failed to drop the shard of a materialized view that was not created", "id", shard)
			}
		}
		return cause
	}
	if err := e.cfg.Compute.CreateStorageCollection(it.ID); err != nil {
		return undo(fmt.Errorf("materialized view %s: %w", it.Name, err))
	}
	if _, err := e.cfg.Compute.CreateSinkDataflow(it.Cluster, df, it.ID); err != nil {
		if derr := e.cfg.Compute.DropCollection(it.ID); derr != nil {
			e.log.Error(derr, "Failed to drop the collection of a materialized view that was not created", "id", shard)
		}
		return undo(fmt.Errorf("materialized view %s: %w", it.Name, err))
	}
	return nil
}

// dropMaterializedView drops the view's dataflow (its sink stops writing),
// its storage collection, and its shard. Readers still listening see the
// shard end.
func (e *Environment) dropMaterializedView(id plan.GlobalID, sinkID plan.GlobalID) error {
	if !sinkID.IsZero() {
		if err := e.cfg.Compute.DropCollection(sinkID); err != nil {
			e.log.Error(err, "Failed to drop a materialized view's sink", "id", id.String(), "sink", sinkID.String())
		}
	}
	if err := e.cfg.Compute.DropCollection(id); err != nil {
		e.log.Error(err, "Failed to drop a materialized view's collection", "id", id.String())
	}
	return e.cfg.Storage.DropShard(id.String())
}
