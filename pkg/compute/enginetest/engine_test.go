package enginetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/reference"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// runtimeShape is one worker/process layout the property runs on.
type runtimeShape struct{ workers, processes int }

var shapes = []runtimeShape{{1, 1}, {2, 1}, {4, 1}, {2, 2}}

// horizon is the number of distinct times updates are drawn from.
const horizon = 8

// engine is one runtime layout with its two source tables. Cases run one
// after another on the same runtimes and tables: each case starts at the
// tables' current upper (its base time) and first retracts everything the
// earlier cases left in the tables, so its dataflow, built as of a time at
// or after base, sees exactly the case's own updates. (Creating tables
// while the runtime builds earlier dataflows would race, and re-using the
// runtimes keeps a check cheap.)
type engine struct {
	stats *coverage
	h     *runtimetest.Harness
	srcs  []plan.GlobalID
	net   map[plan.GlobalID]reference.Collection // what the tables hold
	base  frontier.Time
}

// coverage counts what the reads compared, so that a run that only ever
// compared empty results fails instead of passing vacuously.
type coverage struct {
	reads, withRows, withErrors, invalid, subscribed int
}

func newEngine(t *testing.T, shape runtimeShape, stats *coverage, fresh func() plan.GlobalID) *engine {
	e := &engine{
		stats: stats,
		h:     runtimetest.New(t, runtimetest.Options{Workers: shape.workers, Processes: shape.processes, Timeout: 5 * time.Second}),
		srcs:  []plan.GlobalID{fresh(), fresh()},
		net:   map[plan.GlobalID]reference.Collection{},
	}
	for _, id := range e.srcs {
		e.h.Table(id)
		e.net[id] = reference.Collection{}
	}
	return e
}

// fixture is one generated case: a dataflow over the two sources, their
// update streams (times relative to the case's base), and the index the
// reads go to; sometimes a second dataflow that imports that index and
// exports one of its own (exercising index imports across dataflows).
type fixture struct {
	e       *engine
	desc    plan.DataflowDescription
	updates map[plan.GlobalID][]reference.Update
	index   plan.GlobalID
	asOf    frontier.Time // relative to e.base

	stacked      *plan.DataflowDescription
	stackedIndex plan.GlobalID

	subscribe plan.GlobalID // zero when the case has no subscribe sink
}

// TestEngineMatchesReference is the engine's main property: for random
// plans over random update streams, every peek of the exported index at a
// time t (since <= t) returns exactly what the reference evaluator computes
// from the inputs accumulated as of t, or the error the reference says a
// read at t reports. Inputs arrive in random batches; peeks are issued
// both at complete times and at times not yet complete (they must wait);
// the index is compacted at random points (reads at or after the new since
// must be unaffected; a read before it must fail, never return rows).
func TestEngineMatchesReference(t *testing.T) {
	engines := make([]*engine, len(shapes))
	var stats coverage
	var nextID uint64 = 1000
	fresh := func() plan.GlobalID { nextID++; return plan.User(nextID) }
	rapid.Check(t, func(rt *rapid.T) {
		si := rapid.IntRange(0, len(shapes)-1).Draw(rt, "shape")
		// A runtime that failed (shared fate: a fatal error ends it) is
		// replaced, so every case starts on a healthy runtime and shrinking
		// sees independent cases.
		if engines[si] == nil || len(engines[si].h.Fatal()) > 0 {
			engines[si] = newEngine(t, shapes[si], &stats, fresh)
		}
		rt.Logf("runtime: %d workers x %d processes", shapes[si].workers, shapes[si].processes)
		fx := newFixture(rt, engines[si], fresh, func(g *planGen) plan.Plan {
			return g.plan(rapid.IntRange(1, 3).Draw(rt, "depth"), "plan")
		})
		fx.run(rt)
	})
	t.Logf("reads compared: %d (%d with rows, %d reporting evaluation errors, %d reporting invalid data); subscribe times compared: %d",
		stats.reads, stats.withRows, stats.withErrors, stats.invalid, stats.subscribed)
	if stats.reads > 50 && (stats.withRows == 0 || stats.withErrors == 0) {
		t.Errorf("the generated cases never compared rows or never compared errors: the property is vacuous")
	}
}

// newFixture draws a case whose main plan is draw's over the two sources.
func newFixture(rt *rapid.T, e *engine, fresh func() plan.GlobalID, draw func(*planGen) plan.Plan) *fixture {
	srcA, srcB := e.srcs[0], e.srcs[1]
	g := &planGen{t: rt, sources: map[plan.GlobalID]row.RelationDesc{srcA: descA, srcB: descB}, ids: []plan.GlobalID{srcA, srcB}}
	p := draw(g)
	d := g.desc(p)
	obj, idx := fresh(), fresh()
	indexKey := g.columnKey(d, 1, "index_key")
	if len(indexKey) == 0 {
		// A relation without columns (a reduce with neither key nor
		// aggregates) is indexed by a constant.
		indexKey = []expr.Expr{expr.Literal(row.Int64(0))}
	}
	fx := &fixture{
		e:       e,
		index:   idx,
		asOf:    frontier.Time(rapid.IntRange(0, 2).Draw(rt, "as_of")),
		updates: map[plan.GlobalID][]reference.Update{},
	}
	fx.desc = plan.DataflowDescription{
		ID:             fresh(),
		DebugName:      "enginetest",
		SourceImports:  []plan.SourceImport{{ID: srcA, Desc: descA, Connection: plan.SourceConnection{Kind: plan.SourceTable}}, {ID: srcB, Desc: descB, Connection: plan.SourceConnection{Kind: plan.SourceTable}}},
		ObjectsToBuild: []plan.Build{{ID: obj, Plan: p}},
		IndexExports:   []plan.IndexExport{{ID: idx, On: obj, Key: indexKey}},
		AsOf:           frontier.At(e.base + fx.asOf),
		Until:          frontier.Closed(),
		Class:          plan.ClassMaintained,
	}
	if rapid.IntRange(0, 2).Draw(rt, "subscribe") == 0 {
		fx.subscribe = fresh()
		fx.desc.SubscribeSinks = []plan.SubscribeSink{{ID: fx.subscribe, From: obj, Snapshot: true, UpTo: frontier.Closed()}}
	}
	if err := fx.desc.Validate(); err != nil {
		rt.Fatalf("generated an invalid dataflow: %v", err)
	}
	js, _ := json.Marshal(fx.desc.ObjectsToBuild[0].Plan)
	rt.Logf("plan: %s", js)
	if rapid.IntRange(0, 2).Draw(rt, "stacked") == 0 {
		g2 := &planGen{t: rt, sources: map[plan.GlobalID]row.RelationDesc{obj: d}, ids: []plan.GlobalID{obj}}
		p2 := g2.plan(rapid.IntRange(1, 2).Draw(rt, "stacked_depth"), "stacked_plan")
		d2 := g2.desc(p2)
		key2 := g2.columnKey(d2, 1, "stacked_index_key")
		if len(key2) == 0 {
			key2 = []expr.Expr{expr.Literal(row.Int64(0))}
		}
		obj2 := fresh()
		fx.stackedIndex = fresh()
		fx.stacked = &plan.DataflowDescription{
			ID:             fresh(),
			DebugName:      "enginetest-stacked",
			IndexImports:   []plan.IndexImport{{ID: idx, On: obj, Key: indexKey, Desc: d}},
			ObjectsToBuild: []plan.Build{{ID: obj2, Plan: p2}},
			IndexExports:   []plan.IndexExport{{ID: fx.stackedIndex, On: obj2, Key: key2}},
			AsOf:           fx.desc.AsOf,
			Until:          frontier.Closed(),
			Class:          plan.ClassMaintained,
		}
		if err := fx.stacked.Validate(); err != nil {
			rt.Fatalf("generated an invalid stacked dataflow: %v", err)
		}
		js, _ := json.Marshal(p2)
		rt.Logf("stacked plan over the index: %s", js)
	}
	for _, id := range e.srcs {
		desc := descA
		if id == srcB {
			desc = descB
		}
		fx.updates[id] = genUpdates(rt, desc)
		rt.Logf("updates of %s: %v", id, fx.updates[id])
	}
	return fx
}

// genUpdates draws an update stream for one source. Mostly it inserts
// rows and later retracts some of them, so the collection never has a
// negative multiplicity (negative multiplicities arise inside plans, from
// Negate); now and then it retracts rows that are not there, which reads
// must report as invalid data rather than return.
func genUpdates(rt *rapid.T, desc row.RelationDesc) []reference.Update {
	invalid := rapid.IntRange(0, 9).Draw(rt, "invalid_input") == 0
	var (
		out       []reference.Update
		retracted = map[int]bool{} // insertions already retracted
	)
	n := rapid.IntRange(0, 16).Draw(rt, "updates")
	for len(out) < n {
		var live []int
		for i, u := range out {
			if u.Diff > 0 && !retracted[i] {
				live = append(live, i)
			}
		}
		if len(live) > 0 && rapid.IntRange(0, 2).Draw(rt, "retract") == 0 {
			// Retract (part of) an earlier insertion, at or after its time.
			i := rapid.SampledFrom(live).Draw(rt, "retracted")
			retracted[i] = true
			u := out[i]
			out = append(out, reference.Update{
				Row:  u.Row,
				Time: frontier.Time(rapid.IntRange(int(u.Time), horizon-1).Draw(rt, "retract_time")),
				Diff: -int64(rapid.IntRange(1, int(u.Diff)).Draw(rt, "retract_diff")),
			})
			continue
		}
		diff := int64(rapid.SampledFrom([]int{1, 1, 2}).Draw(rt, "diff"))
		if invalid && rapid.IntRange(0, 3).Draw(rt, "negative") == 0 {
			diff = -1
		}
		out = append(out, reference.Update{
			Row:  row.Pack(genRow(rt, desc, "row")...),
			Time: frontier.Time(rapid.IntRange(0, horizon-1).Draw(rt, "time")),
			Diff: diff,
		})
	}
	return out
}

type pendingRead struct {
	uuid   string
	target plan.GlobalID
	t      frontier.Time
	keys   [][]byte
}

func (fx *fixture) run(rt *rapid.T) {
	e := fx.e
	base := e.base
	if err := e.h.CreateDataflow(fx.desc); err != nil {
		rt.Fatalf("create dataflow: %v", err)
	}
	defer func() {
		if err := e.h.AllowCompaction(fx.index, frontier.Closed()); err != nil {
			rt.Errorf("drop index: %v", err)
		}
		if !fx.subscribe.IsZero() {
			if err := e.h.AllowCompaction(fx.subscribe, frontier.Closed()); err != nil {
				rt.Errorf("drop subscribe: %v", err)
			}
		}
	}()
	targets := []plan.GlobalID{fx.index}
	if fx.stacked != nil {
		if err := e.h.CreateDataflow(*fx.stacked); err != nil {
			rt.Fatalf("create stacked dataflow: %v", err)
		}
		// Deferred after the first: runs before it, dropping the importer
		// before the index it imports.
		defer func() {
			if err := e.h.AllowCompaction(fx.stackedIndex, frontier.Closed()); err != nil {
				rt.Errorf("drop stacked index: %v", err)
			}
		}()
		targets = append(targets, fx.stackedIndex)
	}
	// Everything below is in case-relative time; the engine sees base + t.
	since := fx.asOf
	var pending []pendingRead
	lower := frontier.Time(0)
	for lower < horizon {
		upper := frontier.Time(rapid.IntRange(int(lower)+1, horizon).Draw(rt, "batch_upper"))
		for _, id := range e.srcs {
			var ups []dataflow.Update
			if lower == 0 {
				// Retract what earlier cases left, at the case's base.
				for r, n := range e.net[id] {
					ups = append(ups, dataflow.Update{Val: []byte(r), Time: base, Diff: -n})
				}
				clear(e.net[id])
			}
			for _, u := range fx.updates[id] {
				if u.Time >= lower && u.Time < upper {
					ups = append(ups, dataflow.Update{Val: u.Row, Time: base + u.Time, Diff: u.Diff})
					e.net[id][string(u.Row)] += u.Diff
				}
			}
			if err := e.h.Table(id).Append(ups, frontier.At(base+upper)); err != nil {
				rt.Fatalf("append to %s: %v", id, err)
			}
		}
		e.base = base + upper
		lower = upper
		// A read at a complete time.
		if upper > since && rapid.Bool().Draw(rt, "read_now") {
			at := frontier.Time(rapid.IntRange(int(since), int(upper)-1).Draw(rt, "read_at"))
			target := rapid.SampledFrom(targets).Draw(rt, "read_target")
			keys := fx.drawKeys(rt, target, at)
			rows, err := e.h.Peek(target, base+at, &runtimetest.PeekRequest{Keys: keys})
			fx.check(rt, target, at, keys, rows, err)
		}
		// A read at any time, possibly not complete yet: it must wait.
		if rapid.IntRange(0, 2).Draw(rt, "read_later") == 0 {
			at := frontier.Time(rapid.IntRange(int(since), horizon-1).Draw(rt, "read_later_at"))
			target := rapid.SampledFrom(targets).Draw(rt, "read_later_target")
			keys := fx.drawKeys(rt, target, at)
			pending = append(pending, pendingRead{e.h.StartPeek(target, base+at, &runtimetest.PeekRequest{Keys: keys}), target, at, keys})
		}
		// Compaction, never past a pending read, the data so far, or the
		// final read at horizon-1.
		limit := min(upper, horizon-1)
		for _, p := range pending {
			limit = min(limit, p.t)
		}
		if limit > since && rapid.IntRange(0, 2).Draw(rt, "compact") == 0 {
			since = frontier.Time(rapid.IntRange(int(since)+1, int(limit)).Draw(rt, "since"))
			if err := e.h.AllowCompaction(fx.index, frontier.At(base+since)); err != nil {
				rt.Fatalf("allow compaction: %v", err)
			}
			// A read before since must fail, not return compacted rows.
			if _, err := e.h.Peek(fx.index, base+since-1, nil); err == nil || !strings.Contains(err.Error(), "compacted") {
				rt.Fatalf("peek at %d after compaction to %d: got err %v, want a compaction error", since-1, since, err)
			}
		}
	}
	for _, p := range pending {
		rows, err := e.h.AwaitPeek(p.uuid)
		fx.check(rt, p.target, p.t, p.keys, rows, err)
	}
	for _, target := range targets {
		rows, err := e.h.Peek(target, base+horizon-1, nil)
		fx.check(rt, target, horizon-1, nil, rows, err)
	}
	if !fx.subscribe.IsZero() {
		fx.checkSubscribe(rt, base)
	}
}

// checkSubscribe waits for the subscribe to reach the end of the case and
// checks that its updates (snapshot at as_of, then changes), accumulated
// through every time t, give the collection the reference computes at t.
func (fx *fixture) checkSubscribe(rt *rapid.T, base frontier.Time) {
	resps, err := fx.e.h.WaitSubscribe(fx.subscribe, frontier.At(base+horizon))
	if err != nil {
		rt.Fatalf("subscribe: %v (runtime: %v)", err, fx.e.h.Fatal())
	}
	var ups []reference.Update
	for _, r := range resps {
		for _, u := range r.Updates {
			if u.Time < base+fx.asOf {
				rt.Fatalf("subscribe update %s at %d before as_of %d", reference.FormatRow(u.Row), u.Time-base, fx.asOf)
			}
			ups = append(ups, reference.Update{Row: u.Row, Time: u.Time - base, Diff: u.Diff})
		}
	}
	obj := fx.desc.ObjectsToBuild[0].ID
	for at := fx.asOf; at < horizon; at++ {
		inputs := map[plan.GlobalID]reference.Result{}
		for _, id := range fx.e.srcs {
			inputs[id] = reference.Result{Rows: reference.AsOf(fx.updates[id], at), Errors: reference.Collection{}}
		}
		out, err := reference.Evaluate(&fx.desc, inputs)
		if err != nil {
			rt.Fatalf("reference: %v", err)
		}
		fx.e.stats.subscribed++
		if got, want := reference.AsOf(ups, at), out[obj].Rows; !got.Equal(want) {
			rt.Fatalf("subscribe accumulated through %d:\nengine\n%s\nreference\n%s", at, got, want)
		}
	}
}

// expected evaluates the reference for index target at time at, and the
// index's key expressions.
func (fx *fixture) expected(rt *rapid.T, target plan.GlobalID, at frontier.Time) (reference.Result, []expr.Expr) {
	inputs := map[plan.GlobalID]reference.Result{}
	for _, id := range fx.e.srcs {
		inputs[id] = reference.Result{Rows: reference.AsOf(fx.updates[id], at), Errors: reference.Collection{}}
	}
	out, err := reference.Evaluate(&fx.desc, inputs)
	if err != nil {
		rt.Fatalf("reference: %v", err)
	}
	want := out[fx.index]
	if target != fx.stackedIndex {
		return want, fx.desc.IndexExports[0].Key
	}
	// The stacked dataflow reads the index: its rows and its errors.
	out2, err := reference.Evaluate(fx.stacked, map[plan.GlobalID]reference.Result{fx.desc.ObjectsToBuild[0].ID: want})
	if err != nil {
		rt.Fatalf("reference (stacked): %v", err)
	}
	return out2[fx.stackedIndex], fx.stacked.IndexExports[0].Key
}

// drawKeys returns nil (read the whole index) or, for a keyed read, the
// encoded index keys of up to two rows the reference has at time at plus
// one key that (very likely) matches nothing.
func (fx *fixture) drawKeys(rt *rapid.T, target plan.GlobalID, at frontier.Time) [][]byte {
	if rapid.IntRange(0, 3).Draw(rt, "keyed_read") != 0 {
		return nil
	}
	want, keyExprs := fx.expected(rt, target, at)
	keys := [][]byte{row.Pack(row.Text("no such key"))}
	for _, r := range sortedRows(want.Rows) {
		if len(keys) == 3 || !rapid.Bool().Draw(rt, "key_pick") {
			continue
		}
		if k, ok := indexKey(keyExprs, row.Row(r)); ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// indexKey evaluates an index's key expressions over an encoded row.
func indexKey(keyExprs []expr.Expr, r row.Row) ([]byte, bool) {
	ds, err := r.Unpack()
	if err != nil {
		return nil, false
	}
	key := make([]row.Datum, len(keyExprs))
	for i := range keyExprs {
		if key[i], err = keyExprs[i].Eval(ds); err != nil {
			return nil, false
		}
	}
	return row.Pack(key...), true
}

func sortedRows(c reference.Collection) []string {
	rows := make([]string, 0, len(c))
	for r := range c {
		rows = append(rows, r)
	}
	slices.Sort(rows)
	return rows
}

// check compares one peek's result (of index target, restricted to keys
// when non-nil) with the reference at time at.
func (fx *fixture) check(rt *rapid.T, target plan.GlobalID, at frontier.Time, keys [][]byte, rows []peek.RowCount, err error) {
	if fatal := fx.e.h.Fatal(); len(fatal) > 0 {
		rt.Fatalf("read at %d: the runtime failed: %v (peek: %v)", at, fatal, err)
	}
	want, keyExprs := fx.expected(rt, target, at)
	if keys != nil {
		// A keyed read sees only the rows with those keys (errors of the
		// index are reported whatever the keys).
		selected := reference.Collection{}
		for r, n := range want.Rows {
			k, _ := indexKey(keyExprs, row.Row(r))
			if slices.ContainsFunc(keys, func(x []byte) bool { return string(x) == string(k) }) {
				selected[r] = n
			}
		}
		want.Rows = selected
	}
	st := fx.e.stats
	st.reads++
	// A read fails when the error collection holds an error (with positive
	// multiplicity), and when a row has a negative multiplicity (invalid
	// data). With both, different workers may report different ones.
	wantErrs := want.Errs()
	negative := ""
	for r, n := range want.Rows {
		if n < 0 {
			negative = fmt.Sprintf("%d copies of %s", n, reference.FormatRow(row.Row(r)))
			break
		}
	}
	if len(wantErrs) > 0 {
		st.withErrors++
	}
	if negative != "" {
		st.invalid++
	}
	if len(wantErrs) > 0 || negative != "" {
		if err == nil {
			rt.Fatalf("read at %d: engine returned rows\n%s\nreference reports errors %v, negative multiplicity %q (rows\n%s)",
				at, collect(rows), wantErrs, negative, want.Rows)
		}
		if want.Errors[string(reference.ErrorRow(err))] <= 0 && negative == "" {
			rt.Fatalf("read at %d: engine error %q (as row %s) is not among the reference's %v",
				at, err, reference.FormatRow(reference.ErrorRow(err)), wantErrs)
		}
		return
	}
	if err != nil {
		rt.Fatalf("read at %d: engine error %v, reference rows\n%s", at, err, want.Rows)
	}
	if len(want.Rows) > 0 {
		st.withRows++
	}
	if got := collect(rows); !got.Equal(want.Rows) {
		rt.Fatalf("read at %d:\nengine\n%s\nreference\n%s\nengine - reference\n%s", at, got, want.Rows, reference.Diff(got, want.Rows))
	}
}

func collect(rows []peek.RowCount) reference.Collection {
	c := reference.Collection{}
	for _, r := range rows {
		c[string(r.Row)] += r.Count
		if c[string(r.Row)] == 0 {
			delete(c, string(r.Row))
		}
	}
	return c
}
