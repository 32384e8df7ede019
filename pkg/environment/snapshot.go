package environment

import (
	"context"
	"errors"

	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// BeginSnapshot implements sql.Snapshots: one read time for a transaction
// block, held on its time domain, which is every table, materialized
// view, load-generator source and index (of every cluster, so that SET
// cluster inside the block changes nothing). Introspection relations are
// left out: each replica's are read at its own times.
func (e *Environment) BeginSnapshot(ctx context.Context, iso string) (sql.ReadSnapshot, error) {
	items, err := e.Items(ctx)
	if err != nil {
		return nil, err
	}
	d := &plan.DataflowDescription{ID: e.transientID()}
	for _, it := range items {
		if isIntrospection(it) {
			continue
		}
		switch it.Kind {
		case sql.KindIndex:
			d.IndexImports = append(d.IndexImports, plan.IndexImport{ID: it.ID, On: it.On})
		case sql.KindTable, sql.KindMaterializedView:
			d.SourceImports = append(d.SourceImports, plan.SourceImport{ID: it.ID, Connection: plan.SourceConnection{Kind: plan.SourceTable}})
		case sql.KindSource:
			if it.Desc.Arity() == 0 {
				continue // a source with subsources: they are read instead
			}
			opts, err := e.sourceOptions(it.ID)
			if err != nil {
				return nil, err
			}
			d.SourceImports = append(d.SourceImports, plan.SourceImport{ID: it.ID, Connection: plan.SourceConnection{Kind: plan.SourceLoadGen, Options: opts}})
		}
	}
	domain, err := controller.FromPlan(d)
	if err != nil {
		return nil, sqlerr.Errorf(sqlerr.InternalError, "transaction snapshot: %v", err)
	}
	ids := append(domain.IndexImports, domain.SourceImports...)
	snap, err := e.cfg.Compute.HoldSnapshot(ids, domain.Generators, isolation(iso))
	if err != nil {
		return nil, readError(err)
	}
	return snap, nil
}

// snapshotReadError explains a read at a transaction's snapshot time that
// its input cannot serve: an index or view created after the snapshot was
// taken starts later than it.
func snapshotReadError(err error) error {
	if errors.Is(err, controller.ErrNotReadable) {
		return &sqlerr.Error{Code: sqlerr.SerializationFailure,
			Message: "could not serialize access: the transaction reads an object created after its first read",
			Hint:    "Retry the transaction."}
	}
	return err
}
