package sql

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// subscribePlan plans the relation a SUBSCRIBE follows.
func (s *Session) subscribePlan(ctx context.Context, st *parse.Subscribe) (*planner.Query, error) {
	sn, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	pl := s.planner(sn, nil, nil)
	pl.Maintained = true
	if st.Query != nil {
		return pl.PlanRelation(st.Query)
	}
	rel, err := sn.Resolve(st.Object.Schema, st.Object.Name)
	if err != nil {
		return nil, err
	}
	if err := useAllColumns(rel); err != nil {
		// SUBSCRIBE t reads every column, as SELECT * does.
		return nil, err
	}
	if rel.View != nil {
		// The view's reads are its owner's (viewCatalog).
		pl.Catalog = rel.ViewCatalog
		return pl.PlanRelation(rel.View)
	}
	p := plan.NewGet(rel.ID)
	return &planner.Query{Plan: p, Desc: rel.Desc, DependsOn: []plan.GlobalID{rel.ID}}, nil
}

type subscribeOptions struct {
	snapshot, progress bool
	asOf               *frontier.Time
}

func parseSubscribeOptions(st *parse.Subscribe) (subscribeOptions, error) {
	o := subscribeOptions{snapshot: true}
	for _, opt := range st.Options {
		val := true
		if opt.Kind != parse.ValueNone {
			b, err := strconv.ParseBool(strings.ToLower(opt.Value))
			if err != nil {
				return o, sqlerr.Errorf(sqlerr.InvalidParameterValue, "%s must be a boolean, got %q", opt.Name, opt.Value)
			}
			val = b
		}
		switch opt.Name {
		case "SNAPSHOT":
			o.snapshot = val
		case "PROGRESS":
			o.progress = val
		default:
			return o, sqlerr.Errorf(sqlerr.InvalidParameterValue, "unknown SUBSCRIBE option %s", opt.Name)
		}
	}
	if st.AsOf != "" {
		t, err := strconv.ParseUint(st.AsOf, 10, 64)
		if err != nil {
			return o, sqlerr.Errorf(sqlerr.InvalidParameterValue, "AS OF must be a timestamp in milliseconds, got %q", st.AsOf)
		}
		ft := frontier.Time(t)
		o.asOf = &ft
	}
	return o, nil
}

// subscribeColumns are Materialize's: mz_timestamp, [mz_progressed,]
// mz_diff, then the relation's columns (nullable, since progress rows
// carry NULLs).
func subscribeColumns(d row.RelationDesc, progress bool) []Column {
	cols := []Column{{Name: "mz_timestamp", Type: row.ColumnType{Type: row.TypeInt64}}}
	if progress {
		cols = append(cols, Column{Name: "mz_progressed", Type: row.ColumnType{Type: row.TypeBool}})
	}
	cols = append(cols, Column{Name: "mz_diff", Type: row.ColumnType{Type: row.TypeInt64, Nullable: progress}})
	for i, t := range d.Types {
		t.Nullable = t.Nullable || progress
		cols = append(cols, Column{Name: d.Name(i), Type: t})
	}
	return cols
}

func (s *Session) startSubscribe(ctx context.Context, st *parse.Subscribe) (*subscribeStream, []Column, error) {
	opts, err := parseSubscribeOptions(st)
	if err != nil {
		return nil, nil, err
	}
	q, err := s.subscribePlan(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	if err := s.checkSubscribeInBlock(ctx, q); err != nil {
		return nil, nil, err
	}
	cluster, _ := s.vars.Get(VarCluster)
	if err := s.checkUsage(ctx, cluster); err != nil {
		return nil, nil, err
	}
	p := q.Plan
	sub, err := s.engine.backend.Subscribe(ctx, SubscribeRequest{
		Cluster: cluster, Plan: &p, Desc: q.Desc, Snapshot: opts.snapshot, AsOf: opts.asOf,
	})
	if err != nil {
		return nil, nil, err
	}
	return &subscribeStream{sub: sub, progress: opts.progress, arity: q.Desc.Arity()},
		subscribeColumns(q.Desc, opts.progress), nil
}

func (s *Session) subscribe(ctx context.Context, st *parse.Subscribe) (*Result, error) {
	stream, cols, err := s.startSubscribe(ctx, st)
	if err != nil {
		return nil, err
	}
	return &Result{Tag: "SUBSCRIBE", Columns: cols, Copy: stream}, nil
}

func (s *Session) declareSubscribe(ctx context.Context, st *parse.DeclareSubscribe) (*Result, error) {
	stream, cols, err := s.startSubscribe(ctx, st.Subscribe)
	if err != nil {
		return nil, err
	}
	if err := s.addCursor(st.Cursor, &cursor{columns: cols, stream: stream}); err != nil {
		return nil, err
	}
	return tagf("DECLARE CURSOR"), nil
}

// subscribeStream turns subscription batches into rows.
type subscribeStream struct {
	sub      Subscription
	progress bool
	arity    int
}

// Next returns the rows of the next batch that has any: its updates in
// time order and, with PROGRESS, a progress row for the new upper.
func (st *subscribeStream) Next(ctx context.Context) ([][]row.Datum, error) {
	for {
		b, err := st.sub.Next(ctx)
		if err != nil {
			return nil, err
		}
		ups := slices.Clone(b.Updates)
		slices.SortStableFunc(ups, func(a, c TimedRowDiff) int {
			switch {
			case a.Time < c.Time:
				return -1
			case a.Time > c.Time:
				return 1
			}
			return 0
		})
		var out [][]row.Datum
		for _, u := range ups {
			datums, err := u.Row.Unpack()
			if err != nil {
				return nil, err
			}
			r := []row.Datum{row.Int64(int64(u.Time))}
			if st.progress {
				r = append(r, row.False)
			}
			r = append(r, row.Int64(u.Diff))
			out = append(out, append(r, datums...))
		}
		if st.progress {
			r := []row.Datum{row.Int64(int64(b.Upper)), row.True, row.Null()}
			for i := 0; i < st.arity; i++ {
				r = append(r, row.Null())
			}
			out = append(out, r)
		}
		if len(out) > 0 {
			return out, nil
		}
	}
}

// Close ends the subscription.
func (st *subscribeStream) Close() { st.sub.Close() }

// describeTandem describes the result of a Tandem statement.
func (s *Session) describeTandem(ctx context.Context, st parse.Statement) ([]Column, error) {
	switch st := st.(type) {
	case *parse.Subscribe:
		opts, err := parseSubscribeOptions(st)
		if err != nil {
			return nil, err
		}
		q, err := s.subscribePlan(ctx, st)
		if err != nil {
			return nil, err
		}
		return subscribeColumns(q.Desc, opts.progress), nil
	case *parse.Show:
		return showColumns(st.Kind), nil
	case *parse.Fetch:
		if c, ok := s.cursors[strings.ToLower(st.Fetch.Portalname)]; ok {
			return c.columns, nil
		}
	}
	return nil, nil
}
