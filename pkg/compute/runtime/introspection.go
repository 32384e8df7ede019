package runtime

import (
	"fmt"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/logging"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// EnableIntrospection builds one logging dataflow per relation in ids,
// maintaining relation r as index ids[r], refreshed every interval
// (logging.DefaultInterval when zero) from asOf on. The ids are the system
// GlobalIDs the controller assigned in CreateInstance.
func (r *Runtime) EnableIntrospection(ids map[logging.Relation]plan.GlobalID, interval time.Duration, asOf frontier.Frontier) error {
	descs, err := logging.Dataflows(ids, interval, asOf)
	if err != nil {
		return err
	}
	for _, desc := range descs {
		if err := r.CreateDataflow(desc); err != nil {
			return fmt.Errorf("enable %s: %w", desc.DebugName, err)
		}
	}
	return nil
}

// sources wraps the configured factory with the runtime's own
// introspection sources.
func (r *Runtime) sources() render.SourceFactory {
	return sourceWithIntrospection{r}
}

type sourceWithIntrospection struct{ r *Runtime }

func (s sourceWithIntrospection) OpenSource(imp plan.SourceImport, ctx render.SourceContext) (render.Source, error) {
	if imp.Connection.Kind != plan.SourceIntrospection {
		if s.r.cfg.Sources == nil {
			return nil, fmt.Errorf("source %s: the runtime has no source factory", imp.ID)
		}
		return s.r.cfg.Sources.OpenSource(imp, ctx)
	}
	rel := logging.Relation(imp.Connection.Options[logging.OptionRelation])
	interval := logging.DefaultInterval
	if v, ok := imp.Connection.Options[logging.OptionInterval]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("introspection source %s: interval %q: want a positive duration", imp.ID, v)
		}
		interval = d
	}
	if ctx.Host == nil {
		return nil, fmt.Errorf("introspection source %s: no worker", imp.ID)
	}
	snap, err := s.r.snapshot(rel, ctx.Host)
	if err != nil {
		return nil, fmt.Errorf("introspection source %s: %w", imp.ID, err)
	}
	return logging.NewSource(snap, interval, nil, ctx.Activate), nil
}

// snapshot returns the function computing relation rel's rows for worker w.
func (r *Runtime) snapshot(rel logging.Relation, w *dataflow.Worker) (logging.Snapshot, error) {
	st := r.states[w.Local()]
	worker := row.Int64(int64(w.Index()))
	switch rel {
	case logging.Operators:
		return func(dst []row.Row) []row.Row {
			for _, op := range w.Operators() {
				dst = append(dst, row.Pack(row.Int64(int64(op.Dataflow)), row.Text(op.DebugName), row.Int64(int64(op.Operator)),
					row.Text(op.Name), worker, row.Int64(op.Elapsed.Nanoseconds()), row.Int64(op.Schedules),
					row.Int64(op.Longest.Nanoseconds())))
			}
			return dst
		}, nil
	case logging.Arrangements:
		return func(dst []row.Row) []row.Row {
			for id, idx := range st.indexes {
				ok, errs := idx.Ok.Trace.Stats(), idx.Err.Trace.Stats()
				dst = append(dst, row.Pack(row.Text(id.String()), worker, row.Int64(int64(ok.Updates+errs.Updates)),
					row.Int64(int64(ok.Batches+errs.Batches)), row.Int64(int64(ok.SizeBytes+errs.SizeBytes))))
			}
			return dst
		}, nil
	case logging.Frontiers:
		return func(dst []row.Row) []row.Row {
			for id, idx := range st.indexes {
				dst = append(dst, row.Pack(row.Text(id.String()), worker, frontierDatum(idx.Upper()), frontierDatum(idx.InputFrontier())))
			}
			return dst
		}, nil
	case logging.Peeks:
		return func(dst []row.Row) []row.Row {
			for _, pp := range st.peeks {
				dst = append(dst, row.Pack(row.Text(pp.p.UUID), row.Text(pp.p.Target.String()), row.Int64(int64(pp.p.Timestamp)), worker))
			}
			// Peeks of the process's other runtime, once: their uuids are
			// the process's own, so the rows never collide with the above.
			if w.Local() == 0 {
				r.eachForeignPeek(func(p Peek) {
					dst = append(dst, row.Pack(row.Text(p.UUID), row.Text(p.Target.String()), row.Int64(int64(p.Timestamp)), worker))
				})
			}
			return dst
		}, nil
	case logging.WorkerSteps:
		return func(dst []row.Row) []row.Row {
			h := w.StepHistogram()
			for i, n := range h {
				if n > 0 {
					dst = append(dst, row.Pack(worker, row.Int64(int64(1)<<uint(i)), row.Int64(n)))
				}
			}
			return dst
		}, nil
	case logging.Hydration:
		return func(dst []row.Row) []row.Row {
			for id := range st.indexes {
				ms := row.Null()
				if d, ok := st.hydrated[id]; ok {
					ms = row.Int64(d.Milliseconds())
				}
				dst = append(dst, row.Pack(row.Text(id.String()), worker, ms))
			}
			return dst
		}, nil
	case logging.PeekDurations:
		process := row.Int64(int64(w.Process()))
		return func(dst []row.Row) []row.Row {
			// The histogram is per process: one worker reports it.
			if w.Local() != 0 {
				return dst
			}
			for i := range r.peekHist {
				if n := r.peekHist[i].Load(); n > 0 {
					dst = append(dst, row.Pack(process, row.Int64(int64(1)<<uint(i)), row.Int64(n)))
				}
			}
			return dst
		}, nil
	}
	return nil, fmt.Errorf("unknown relation %q", rel)
}

// frontierDatum is a frontier's time, or NULL when closed.
func frontierDatum(f frontier.Frontier) row.Datum {
	if t, ok := f.Time(); ok {
		return row.Int64(int64(t))
	}
	return row.Null()
}
