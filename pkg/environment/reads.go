package environment

import (
	"context"
	"errors"

	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

func isolation(s string) controller.Isolation {
	if s == sql.IsolationStrictSerializable {
		return controller.StrictSerializable
	}
	return controller.Serializable
}

// Peek implements sql.Reads: an index read on the fast path, otherwise a
// one-shot dataflow over the plan's inputs.
func (e *Environment) Peek(ctx context.Context, req sql.PeekRequest) (sql.PeekRows, error) {
	var res controller.PeekResult
	var err error
	switch {
	case req.Index != nil:
		pr := controller.PeekRequest{Cluster: req.Cluster, Target: req.Index.Index, Isolation: isolation(req.Isolation), Replica: req.Replica,
			SpillDir: e.cfg.SpillDir, Finishing: req.Cut, AsOf: req.AsOf}
		for _, k := range req.Index.Keys {
			pr.LiteralKeys = append(pr.LiteralKeys, k)
		}
		if m := req.Index.MFP; len(m.Expressions) > 0 || len(m.Predicates) > 0 || len(m.Projection) > 0 {
			pr.MFP = &m
		}
		res, err = e.cfg.Compute.Peek(ctx, pr)
	case req.Plan != nil:
		if target, ok, ierr := e.introspectionGet(ctx, req); ierr != nil || ok {
			// A plain read of an introspection relation reads the
			// replica's index directly.
			err = ierr
			if ok {
				res, err = e.cfg.Compute.Peek(ctx, controller.PeekRequest{Cluster: req.Cluster, Target: target, Replica: req.Replica,
					SpillDir: e.cfg.SpillDir})
			}
			break
		}
		var df controller.Dataflow
		df, err = e.oneShot(ctx, req.Cluster, *req.Plan, req.Desc)
		df.AsOf = req.AsOf
		if err == nil {
			res, err = e.cfg.Compute.PeekDataflowOn(ctx, req.Cluster, req.Replica, df, isolation(req.Isolation), req.Cut, e.cfg.SpillDir)
		}
	default:
		return nil, sqlerr.Errorf(sqlerr.InternalError, "peek without a plan or an index")
	}
	if err != nil {
		if req.AsOf != nil {
			err = snapshotReadError(err)
		}
		return nil, readError(err)
	}
	if res.Spilled != nil {
		return spilledRows{res.Spilled}, nil
	}
	out := make([]sql.RowDiff, len(res.Rows))
	for i, r := range res.Rows {
		out[i] = sql.RowDiff{Row: r.Row, Diff: int64(r.Count)}
	}
	return sql.RowsOf(out), nil
}

// SpillDirectory implements sql.SpillDirectory: ORDER BY runs go where
// peek answers spill (removed at start like them).
func (e *Environment) SpillDirectory() string { return e.cfg.SpillDir }

// spilledRows reads a spilled answer for the SQL layer.
type spilledRows struct{ s *controller.SpilledRows }

func (r spilledRows) Next() (sql.RowDiff, bool, error) {
	rc, ok, err := r.s.Next()
	if err != nil || !ok {
		return sql.RowDiff{}, false, err
	}
	return sql.RowDiff{Row: rc.Row, Diff: int64(rc.Count)}, true, nil
}
func (spilledRows) Streamed() bool { return true }
func (r spilledRows) Close()       { r.s.Close() }

// readError maps controller errors to SQL errors.
func readError(err error) error {
	var pe *controller.PeekError
	switch {
	case errors.As(err, &pe):
		return sqlerr.New(pe.SQLState, pe.Message)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	case errors.Is(err, controller.ErrUnknownCluster), errors.Is(err, controller.ErrUnknownReplica):
		return sqlerr.New(sqlerr.UndefinedObject, err.Error())
	}
	return sqlerr.Convert(err)
}

// oneShot renders a transient dataflow computing p and exporting it as a
// transient index keyed by all columns.
func (e *Environment) oneShot(ctx context.Context, cluster string, p plan.Plan, desc interface{ Arity() int }) (controller.Dataflow, error) {
	items, err := e.Items(ctx)
	if err != nil {
		return controller.Dataflow{}, err
	}
	build, export := e.transientID(), e.transientID()
	d := &plan.DataflowDescription{ID: export, DebugName: "one-shot " + export.String(), Class: plan.ClassOneShotRead, Until: frontier.Closed()}
	if err := e.addImports(d, p, cluster, indexItems(items)); err != nil {
		return controller.Dataflow{}, err
	}
	d.ObjectsToBuild = []plan.Build{{ID: build, Plan: p}}
	keys := allColumnsN(desc.Arity())
	if len(keys) == 0 {
		return controller.Dataflow{}, sqlerr.Unsupported("reading a zero-column result through a dataflow")
	}
	d.IndexExports = []plan.IndexExport{{ID: export, On: build, Key: keys}}
	return controller.FromPlan(d)
}

func (e *Environment) transientID() plan.GlobalID {
	return e.cfg.Compute.AllocateTransientID()
}

// Subscribe implements sql.Reads.
func (e *Environment) Subscribe(ctx context.Context, req sql.SubscribeRequest) (sql.Subscription, error) {
	if req.Plan == nil {
		return nil, sqlerr.Errorf(sqlerr.InternalError, "subscribe without a plan")
	}
	if req.AsOf != nil {
		return nil, sqlerr.Unsupported("SUBSCRIBE AS OF")
	}
	items, err := e.Items(ctx)
	if err != nil {
		return nil, err
	}
	if readsIntrospection(*req.Plan, indexItems(items)) {
		return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "SUBSCRIBE to introspection relations is not supported; SELECT from them instead")
	}
	build, sink := e.transientID(), e.transientID()
	d := &plan.DataflowDescription{ID: sink, DebugName: "subscribe " + sink.String(), Class: plan.ClassMaintained, Until: frontier.Closed()}
	if err := e.addImports(d, *req.Plan, req.Cluster, indexItems(items)); err != nil {
		return nil, err
	}
	d.ObjectsToBuild = []plan.Build{{ID: build, Plan: *req.Plan}}
	d.SubscribeSinks = []plan.SubscribeSink{{ID: sink, From: build, Snapshot: req.Snapshot, Progress: true, UpTo: frontier.Closed()}}
	df, err := controller.FromPlan(d)
	if err != nil {
		return nil, err
	}
	// The subscription outlives the statement that started it: it ends on
	// Close, not when ctx ends.
	sub, err := e.cfg.Compute.Subscribe(context.WithoutCancel(ctx), req.Cluster, df)
	if err != nil {
		return nil, readError(err)
	}
	return &subscription{sub: sub}, nil
}

type subscription struct {
	sub *controller.Subscription
}

// Next implements sql.Subscription.
func (s *subscription) Next(ctx context.Context) (sql.SubscribeBatch, error) {
	select {
	case <-ctx.Done():
		return sql.SubscribeBatch{}, readError(ctx.Err())
	case b, ok := <-s.sub.Batches():
		if !ok {
			if err := s.sub.Err(); err != nil {
				return sql.SubscribeBatch{}, readError(err)
			}
			return sql.SubscribeBatch{}, sqlerr.New(sqlerr.QueryCanceled, "subscription ended")
		}
		out := sql.SubscribeBatch{}
		if t, ok := b.Upper.Time(); ok {
			out.Upper = t
		} else {
			out.Upper = frontier.MaxTime
		}
		for _, u := range b.Updates {
			out.Updates = append(out.Updates, sql.TimedRowDiff{Row: u.Row, Time: u.Time, Diff: u.Diff})
		}
		return out, nil
	}
}

// Close implements sql.Subscription.
func (s *subscription) Close() { s.sub.Close() }

// introspectionGet reports whether req's plan is a plain Get of an
// introspection relation, and if so the index that answers it on the
// request's cluster.
func (e *Environment) introspectionGet(ctx context.Context, req sql.PeekRequest) (plan.GlobalID, bool, error) {
	g := req.Plan.Get
	if g == nil || g.ID.Kind != plan.KindSystem {
		return plan.GlobalID{}, false, nil
	}
	items, err := e.Items(ctx)
	if err != nil {
		return plan.GlobalID{}, false, err
	}
	it, ok := indexItems(items)[g.ID]
	if !ok || !isIntrospection(it) {
		return plan.GlobalID{}, false, nil
	}
	imp, err := e.introspectionImport(it, req.Cluster)
	if err != nil {
		return plan.GlobalID{}, false, err
	}
	return imp.ID, true, nil
}
