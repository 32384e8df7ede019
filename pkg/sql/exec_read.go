package sql

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/reference"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/readtrace"
	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

func (s *Session) selectStmt(ctx context.Context, sel *pg.SelectStmt, params []row.Datum) (*Result, error) {
	start := time.Now()
	sn, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	q, err := s.readPlanner(sn, paramTypesOf(params), params).PlanQuery(sel)
	if err != nil {
		return nil, err
	}
	readtrace.Observe(ctx, readtrace.Planning, start)
	pr, err := s.peekRows(ctx, sn, q)
	if err != nil {
		return nil, err
	}
	budget := &memBudget{limit: s.maxQueryMemory(ctx)}
	fin := q.Finishing
	if len(fin.Order) > 0 {
		// Sorted within max_query_memory, spilling runs to disk beyond it;
		// what is left of the finishing applies row by row.
		if pr, err = s.sortRows(pr, fin.Order, budget.limit); err != nil {
			return nil, err
		}
		fin.Order = nil
	}
	if s.streamRows && pr.Streamed() {
		// The finishing applies row by row: the result goes to the client
		// as it is read (from the backend or the sorted runs), never held
		// whole.
		return &Result{Tag: "SELECT", Columns: queryColumns(q), Iter: newFinishIter(pr, &fin), memLimit: budget.limit}, nil
	}
	diffs, err := budget.collect(pr)
	if err != nil {
		return nil, err
	}
	rows, err := expand(diffs, budget)
	if err != nil {
		return nil, err
	}
	rows = finish(rows, &fin)
	return &Result{Tag: fmt.Sprintf("SELECT %d", len(rows)), Columns: queryColumns(q), Rows: rows}, nil
}

// EnableRowStreaming lets SELECT results come back as Result.Iter when
// they are large and need no ordering (pgwire streams them as DataRows).
func (s *Session) EnableRowStreaming() { s.streamRows = true }

// RowIter yields result rows one at a time.
type RowIter interface {
	// Next returns the next row; ok=false at the end.
	Next() (r []row.Datum, ok bool, err error)
	Close()
}

// finishIter applies a finishing without ORDER BY (offset, limit,
// projection) to peek rows as they are read, expanding multiplicities.
type finishIter struct {
	rows    PeekRows
	f       *planner.Finishing
	skipped int64
	sent    int64
	cur     []row.Datum // projected row being repeated
	left    int64       // repetitions of cur still to return
}

func newFinishIter(rows PeekRows, f *planner.Finishing) *finishIter {
	return &finishIter{rows: rows, f: f}
}

func (it *finishIter) Next() ([]row.Datum, bool, error) {
	for {
		if it.f.Limit != nil && it.sent >= *it.f.Limit {
			return nil, false, nil
		}
		if it.left > 0 {
			if it.skipped < it.f.Offset {
				n := min(it.left, it.f.Offset-it.skipped)
				it.skipped += n
				it.left -= n
				continue
			}
			it.left--
			it.sent++
			return it.cur, true, nil
		}
		d, ok, err := it.rows.Next()
		if err != nil || !ok {
			return nil, false, err
		}
		if d.Diff < 0 {
			return nil, false, sqlerr.Errorf(sqlerr.InternalError, "result has a row with negative multiplicity %d", d.Diff)
		}
		datums, err := d.Row.Unpack()
		if err != nil {
			return nil, false, fmt.Errorf("decode result row: %w", err)
		}
		p := make([]row.Datum, len(it.f.Project))
		for j, c := range it.f.Project {
			p[j] = datums[c]
		}
		it.cur, it.left = p, d.Diff
	}
}

func (it *finishIter) Close() { it.rows.Close() }

// Materialize drains r.Iter into r.Rows (and completes the tag), for
// consumers that need every row at once (cursors, portals fetched in
// parts).
//
// A result from a SELECT stops at max_query_memory (53200).
func (r *Result) Materialize() error {
	if r.Iter == nil {
		return nil
	}
	defer r.Iter.Close()
	budget := &memBudget{limit: r.memLimit}
	for {
		d, ok, err := r.Iter.Next()
		if err != nil {
			r.Iter = nil
			return err
		}
		if !ok {
			break
		}
		if err := budget.take(datumsSize(d)); err != nil {
			r.Iter = nil
			return err
		}
		r.Rows = append(r.Rows, d)
	}
	r.Iter = nil
	r.Tag = fmt.Sprintf("%s %d", r.Tag, len(r.Rows))
	return nil
}

// paramTypesOf types parameters by their bound values (NULL stays
// untyped and is inferred).
func paramTypesOf(params []row.Datum) []row.Type {
	out := make([]row.Type, len(params))
	for i, d := range params {
		if !d.IsNull() {
			out[i] = d.Type()
		}
	}
	return out
}

// read computes a query's rows (before finishing). Plans that read no
// collection (constants, VALUES, functions of literals) are evaluated
// here; everything else is a peek: on the fast path an index read,
// otherwise a one-shot dataflow.
func (s *Session) read(ctx context.Context, sn *snapshot, q *planner.Query) ([][]row.Datum, error) {
	pr, err := s.peekRows(ctx, sn, q)
	if err != nil {
		return nil, err
	}
	budget := &memBudget{limit: s.maxQueryMemory(ctx)}
	diffs, err := budget.collect(pr)
	if err != nil {
		return nil, err
	}
	return expand(diffs, budget)
}

// peekRows computes a query's rows (before finishing) as the backend
// returns them; the caller must close them.
func (s *Session) peekRows(ctx context.Context, sn *snapshot, q *planner.Query) (PeekRows, error) {
	if len(q.DependsOn) == 0 {
		diffs, err := evalConstant(&q.Plan)
		if err != nil {
			return nil, err
		}
		return RowsOf(diffs), nil
	}
	if err := s.beforeRead(ctx); err != nil {
		return nil, err
	}
	asOf, err := s.blockSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	s.recordReads(sn, q.DependsOn)
	if s.tx.explicit && s.pendingTable(sn, q.DependsOn) != "" {
		diffs, err := s.readWithPending(ctx, sn, q)
		if err != nil {
			return nil, err
		}
		return RowsOf(diffs), nil
	}
	cluster, _ := s.vars.Get(VarCluster)
	if err := sn.checkUsage(s.user, cluster); err != nil {
		return nil, err
	}
	req := PeekRequest{Cluster: cluster, Desc: q.Desc, Isolation: s.txIsolation(), Cut: topKCut(&q.Finishing), AsOf: asOf}
	for _, id := range q.DependsOn {
		if it, ok := sn.byID[id]; ok && it.Schema == SchemaIntrospection {
			// A replica's own relations are read at its times.
			req.Replica, _ = s.vars.Get(VarClusterReplica)
			req.AsOf = nil
		}
	}
	if fp := q.FastPath; fp != nil {
		req.Index = &IndexPeek{Index: fp.Index, Keys: fp.Keys, MFP: fp.MFP}
	} else {
		p := q.Plan
		req.Plan = &p
	}
	return s.engine.backend.Peek(ctx, req)
}

// topKCut is the part of a finishing a backend may apply where the rows
// are read: an ORDER BY with a LIMIT keeps the first OFFSET+LIMIT rows in
// order (the offset is applied here, with the rest of the finishing).
// Nil when the query does not order and limit, or keeps more than
// maxTopKCut rows: a cut answer is gathered whole before it is ordered,
// while an uncut one streams into this layer's bounded external sort.
func topKCut(f *planner.Finishing) *plan.Finishing {
	if len(f.Order) == 0 || f.Limit == nil || *f.Limit > maxTopKCut || f.Offset > maxTopKCut-*f.Limit {
		return nil
	}
	n := *f.Limit + f.Offset
	return &plan.Finishing{Order: f.Order, Limit: &n}
}

// maxTopKCut bounds the rows a pushed-down ORDER BY ... LIMIT keeps.
const maxTopKCut = 10_000

// expand turns counted rows into a list of rows, under budget: the
// decoded columns and one slice header per repetition count against it.
func expand(diffs []RowDiff, budget *memBudget) ([][]row.Datum, error) {
	var out [][]row.Datum
	for _, d := range diffs {
		if d.Diff < 0 {
			return nil, sqlerr.Errorf(sqlerr.InternalError, "result has a row with negative multiplicity %d", d.Diff)
		}
		datums, err := d.Row.Unpack()
		if err != nil {
			return nil, fmt.Errorf("decode result row: %w", err)
		}
		if err := budget.take(datumSize*uint64(len(datums)) + 24*uint64(d.Diff)); err != nil {
			return nil, err
		}
		for i := int64(0); i < d.Diff; i++ {
			out = append(out, datums)
		}
	}
	return out, nil
}

// evalConstant evaluates a plan that reads no collection.
func evalConstant(p *plan.Plan) ([]RowDiff, error) {
	res, err := reference.EvalPlan(p, nil)
	if err != nil {
		return nil, err
	}
	if errs := res.Errs(); len(errs) > 0 {
		return nil, errs[0]
	}
	diffs := make([]RowDiff, 0, len(res.Rows))
	for k, n := range res.Rows {
		diffs = append(diffs, RowDiff{Row: row.Row(k), Diff: n})
	}
	slices.SortFunc(diffs, func(a, b RowDiff) int { return strings.Compare(string(a.Row), string(b.Row)) })
	return diffs, nil
}

// finish applies ORDER BY, OFFSET, LIMIT and the final projection.
func finish(rows [][]row.Datum, f *planner.Finishing) [][]row.Datum {
	if len(f.Order) > 0 {
		slices.SortStableFunc(rows, orderCompare(f.Order))
	}
	if f.Offset > 0 {
		if f.Offset >= int64(len(rows)) {
			rows = nil
		} else {
			rows = rows[f.Offset:]
		}
	}
	if f.Limit != nil && *f.Limit < int64(len(rows)) {
		rows = rows[:*f.Limit]
	}
	out := make([][]row.Datum, len(rows))
	for i, r := range rows {
		p := make([]row.Datum, len(f.Project))
		for j, c := range f.Project {
			p[j] = r[c]
		}
		out[i] = p
	}
	return out
}

func (s *Session) explain(ctx context.Context, e *pg.ExplainStmt, params []row.Datum) (*Result, error) {
	sel := e.Query.GetSelectStmt()
	// EXPLAIN CREATE MATERIALIZED VIEW shows the maintained plan (where
	// now() makes temporal filters, docs/design/time.md).
	mv := e.Query.GetCreateTableAsStmt()
	if mv != nil && mv.Objtype == pg.ObjectType_OBJECT_MATVIEW {
		sel = mv.Query.GetSelectStmt()
	}
	if sel == nil {
		return nil, sqlerr.Unsupported("EXPLAIN of statements other than SELECT and CREATE MATERIALIZED VIEW")
	}
	sn, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	var q *planner.Query
	if mv != nil {
		pl := s.planner(sn, paramTypesOf(params), params)
		pl.Maintained = true
		q, err = pl.PlanRelation(sel)
	} else {
		q, err = s.readPlanner(sn, paramTypesOf(params), params).PlanQuery(sel)
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Tag: "EXPLAIN", Columns: []Column{{Name: "QUERY PLAN", Type: textCol}}}
	text := planner.Explain(q)
	if mv != nil {
		text = planner.ExplainMaintained(q)
	}
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		res.Rows = append(res.Rows, []row.Datum{row.Text(line)})
	}
	return res, nil
}

// cursor is an open cursor: buffered rows and, for SUBSCRIBE, the stream
// that produces more.
type cursor struct {
	columns []Column
	rows    [][]row.Datum
	stream  RowStream
}

func (c *cursor) close() {
	if c.stream != nil {
		c.stream.Close()
	}
}

func (s *Session) addCursor(name string, c *cursor) error {
	name = strings.ToLower(name)
	if _, ok := s.cursors[name]; ok {
		c.close()
		return sqlerr.Errorf("42P03", "cursor %q already exists", name)
	}
	s.cursors[name] = c
	return nil
}

func (s *Session) declareCursor(ctx context.Context, d *pg.DeclareCursorStmt, params []row.Datum) (*Result, error) {
	sel := d.Query.GetSelectStmt()
	if sel == nil {
		return nil, sqlerr.Unsupported("cursors over statements other than SELECT and SUBSCRIBE")
	}
	res, err := s.selectStmt(ctx, sel, params)
	if err != nil {
		return nil, err
	}
	if err := res.Materialize(); err != nil {
		return nil, err
	}
	if err := s.addCursor(d.Portalname, &cursor{columns: res.Columns, rows: res.Rows}); err != nil {
		return nil, err
	}
	return tagf("DECLARE CURSOR"), nil
}

// fetchWithTimeout runs FETCH ... WITH (TIMEOUT = t).
func (s *Session) fetchWithTimeout(ctx context.Context, f *parse.Fetch) (*Result, error) {
	d, err := time.ParseDuration(f.Timeout)
	if err != nil {
		secs, ferr := strconv.ParseFloat(f.Timeout, 64)
		if ferr != nil || secs < 0 || secs > 1e6 {
			return nil, sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid FETCH timeout %q", f.Timeout)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < 0 {
		return nil, sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid FETCH timeout %q", f.Timeout)
	}
	return s.fetch(ctx, f.Fetch, &d)
}

// fetch runs FETCH; a subscribe cursor with no buffered rows waits for
// rows, at most timeout when it is set.
func (s *Session) fetch(ctx context.Context, f *pg.FetchStmt, timeout *time.Duration) (*Result, error) {
	if f.Ismove {
		return nil, sqlerr.Unsupported("MOVE")
	}
	if f.Direction != pg.FetchDirection_FETCH_FORWARD {
		return nil, sqlerr.Unsupported("FETCH in directions other than FORWARD")
	}
	c, ok := s.cursors[strings.ToLower(f.Portalname)]
	if !ok {
		return nil, sqlerr.Errorf(sqlerr.InvalidCursorName, "cursor %q does not exist", f.Portalname)
	}
	n := f.HowMany // FETCH ALL is math.MaxInt64 here, as in Postgres.
	if n <= 0 {
		n = 1
	}
	// A subscribe cursor waits for at least one row, then returns what
	// is available up to n.
	if len(c.rows) == 0 && c.stream != nil && (timeout == nil || *timeout > 0) {
		wctx := ctx
		if timeout != nil {
			var cancel context.CancelFunc
			wctx, cancel = context.WithTimeout(ctx, *timeout)
			defer cancel()
		}
		more, err := c.stream.Next(wctx)
		switch {
		case err == nil:
			c.rows = append(c.rows, more...)
		case timeout != nil && errors.Is(wctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
			// Judged by the context, not the error, since a backend may
			// translate the deadline into an error of its own.
			// The timeout passed without rows: an empty result.
		default:
			return nil, err
		}
	}
	k := int64(len(c.rows))
	if n < k {
		k = n
	}
	out := c.rows[:k]
	c.rows = c.rows[k:]
	return &Result{Tag: fmt.Sprintf("FETCH %d", len(out)), Columns: c.columns, Rows: out}, nil
}

func (s *Session) closeCursor(c *pg.ClosePortalStmt) (*Result, error) {
	if c.Portalname == "" {
		s.closeCursors()
		return tagf("CLOSE CURSOR ALL"), nil
	}
	name := strings.ToLower(c.Portalname)
	cur, ok := s.cursors[name]
	if !ok {
		return nil, sqlerr.Errorf(sqlerr.InvalidCursorName, "cursor %q does not exist", c.Portalname)
	}
	cur.close()
	delete(s.cursors, name)
	return tagf("CLOSE CURSOR"), nil
}
