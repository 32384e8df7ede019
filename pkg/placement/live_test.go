package placement

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	df "github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/trace"
	"github.com/tandemdb/tandem/pkg/sharing"
)

// subCollector records what leaves a two-runtime process: subscribe
// batches per sink and fatal errors.
type subCollector struct {
	mu      sync.Mutex
	changed chan struct{}
	subs    map[plan.GlobalID][]*runtime.SubscribeResponse
	fatal   []error
}

func newSubCollector() *subCollector {
	return &subCollector{changed: make(chan struct{}), subs: map[plan.GlobalID][]*runtime.SubscribeResponse{}}
}

func (c *subCollector) respond(r runtime.Response) {
	s, ok := r.(*runtime.SubscribeResponse)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.subs[s.ID] = append(c.subs[s.ID], s)
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *subCollector) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fatal = append(c.fatal, err)
	close(c.changed)
	c.changed = make(chan struct{})
}

// wait returns sink id's batches once their upper reached f, or fails on a
// fatal error or after 20 s.
func (c *subCollector) wait(t *testing.T, id plan.GlobalID, f frontier.Frontier) []*runtime.SubscribeResponse {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		c.mu.Lock()
		ch, rs, fatal := c.changed, c.subs[id], c.fatal
		c.mu.Unlock()
		if len(fatal) > 0 {
			t.Fatalf("runtime failed: %v", fatal)
		}
		if n := len(rs); n > 0 && f.LessEqual(rs[n-1].Upper) {
			return rs
		}
		select {
		case <-ch:
		case <-deadline:
			up := frontier.Minimum()
			if n := len(rs); n > 0 {
				up = rs[n-1].Upper
			}
			t.Fatalf("subscribe %s reached %v, want %v", id, up, f)
		}
	}
}

// liveProcess assembles a two-runtime process as pkg/replica does: the
// maintenance and interactive runtimes behind the multiplexer, sharing a
// registry, both reading the memory tables of tables. It returns the
// multiplexer and the maintenance runtime.
func liveProcess(t *testing.T, workers int, tables render.MemorySources, col *subCollector) (*Multiplexer, *runtime.Runtime) {
	t.Helper()
	tp := newTestProcess(t, workers, RouteSealedHint, true, col.respond, func(runtime.Role) runtime.Config {
		return runtime.Config{Workers: workers, Processes: 1, Sources: render.SourceKinds{plan.SourceTable: tables}, OnFatal: col.fail}
	})
	mux, mrt, irt, inter := tp.mux, tp.mrt, tp.irt, tp.inter
	ctx, cancel := context.WithCancel(context.Background())
	mrt.Start(ctx)
	irt.Start(ctx)
	t.Cleanup(func() {
		cancel()
		inter.Close()
		irt.Stop()
		mrt.Stop()
	})
	return mux, mrt
}

var countDesc = row.NewRelationDesc([]string{"v", "n"}, []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}})

// liveScenario runs one seed: a table of random (k, v) changes, an index
// of count(*) by v over it, and two subscribes to the index's view with
// the same as_of: one Maintained (served by the maintenance runtime, as
// every subscribe was before live imports) and one LiveRead (served by the
// interactive runtime through a live import). The index is compacted up
// to the table's upper as it goes, ahead of both subscribes, as a faster
// replica's reads would let the controller do. Both must produce exactly
// the same updates.
func liveScenario(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x11fe))
	tbl := render.NewMemoryTable()
	src, view, index := plan.User(1), plan.User(2), plan.User(3)
	col := newSubCollector()
	mux, _ := liveProcess(t, 2, render.MemorySources{src: tbl}, col)

	// Valid changes only (a deletion removes a present row), all of one
	// append at one time: a SQL collection never has negative counts.
	up := frontier.Time(1)
	var present [][2]int64
	appendRandom := func() {
		t.Helper()
		var ups []df.Update
		for range rng.IntN(6) {
			r, d := [2]int64{rng.Int64N(20), rng.Int64N(4)}, int64(1)
			if len(present) > 0 && rng.IntN(3) == 0 {
				i := rng.IntN(len(present))
				r, d = present[i], -1
				present = append(present[:i], present[i+1:]...)
			} else {
				present = append(present, r)
			}
			ups = append(ups, df.Update{Val: row.Pack(row.Int64(r[0]), row.Int64(r[1])), Time: up, Diff: d})
		}
		up += 1 + frontier.Time(rng.IntN(3))
		if err := tbl.Append(ups, frontier.At(up)); err != nil {
			t.Fatal(err)
		}
	}
	if err := mux.CreateDataflow(plan.DataflowDescription{
		ID: plan.User(100), DebugName: "count by v", Class: plan.ClassMaintained,
		SourceImports: []plan.SourceImport{{ID: src, Desc: kvDesc, Connection: plan.SourceConnection{Kind: plan.SourceTable}}},
		ObjectsToBuild: []plan.Build{{ID: view, Plan: plan.NewReduce(plan.NewGet(src), []expr.Expr{expr.Column(1)},
			plan.Aggregate{Func: plan.AggCountStar})}},
		IndexExports: []plan.IndexExport{{ID: index, On: view, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:         frontier.At(0), Until: frontier.Closed(),
	}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		appendRandom()
	}
	asOf := frontier.At(up - 1 - frontier.Time(rng.IntN(2)))
	end := up + 40
	subscribe := func(id plan.GlobalID, class plan.DataflowClass) {
		t.Helper()
		if err := mux.CreateDataflow(plan.DataflowDescription{
			ID: plan.Transient(uint64(id.N) + 100), DebugName: "subscribe " + class.String(), Class: class,
			IndexImports:   []plan.IndexImport{{ID: index, On: view, Key: []expr.Expr{expr.Column(0)}, Desc: countDesc}},
			SubscribeSinks: []plan.SubscribeSink{{ID: id, From: view, Snapshot: true, UpTo: frontier.At(end)}},
			AsOf:           asOf, Until: frontier.Closed(),
		}); err != nil {
			t.Fatal(err)
		}
	}
	maintained, live := plan.Transient(1), plan.Transient(2)
	subscribe(maintained, plan.ClassMaintained)
	subscribe(live, plan.ClassLiveRead)
	for up < end {
		appendRandom()
		if rng.IntN(2) == 0 {
			// Compaction ahead of both subscribes (at most the upper).
			if err := mux.AllowCompaction(index, frontier.At(up-frontier.Time(rng.IntN(2)))); err != nil {
				t.Fatal(err)
			}
		}
		if rng.IntN(4) == 0 {
			time.Sleep(time.Millisecond) // let the runtimes interleave differently
		}
	}
	want := col.wait(t, maintained, frontier.Closed())
	got := col.wait(t, live, frontier.Closed())
	w, g := subscribeLog(t, want, asOf), subscribeLog(t, got, asOf)
	if w != g {
		t.Fatalf("seed %d: the interactive runtime's subscribe differs from maintenance's\nmaintenance:\n%s\ninteractive:\n%s", seed, w, g)
	}
}

// subscribeLog checks that batches are contiguous from asOf to closed and
// hold only updates within their bounds, and renders their consolidated
// updates as "time row diff" lines.
func subscribeLog(t *testing.T, rs []*runtime.SubscribeResponse, asOf frontier.Frontier) string {
	t.Helper()
	lower := asOf
	sum := map[string]int64{}
	for _, r := range rs {
		if r.Error != nil {
			t.Fatalf("subscribe error: %v", r.Error)
		}
		if r.Lower != lower {
			t.Fatalf("batch [%v, %v) does not start where the last ended (%v)", r.Lower, r.Upper, lower)
		}
		for _, u := range r.Updates {
			if !r.Lower.LessEqualTime(u.Time) || r.Upper.LessEqualTime(u.Time) {
				t.Fatalf("update at %d outside its batch [%v, %v)", u.Time, r.Lower, r.Upper)
			}
			sum[fmt.Sprintf("%6d %s", u.Time, row.Row(u.Row))] += u.Diff
		}
		lower = r.Upper
	}
	if !lower.IsClosed() {
		t.Fatalf("subscribe ended at %v, want closed", lower)
	}
	var lines []string
	for k, d := range sum {
		if d != 0 {
			lines = append(lines, fmt.Sprintf("%s %+d", k, d))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestLiveSubscribeMatchesMaintenance is the differential test of SUBSCRIBE
// on the interactive runtime: over random changes, with the index
// compacted ahead of the subscribes, a LiveRead subscribe (snapshot from
// the published index, updates from a live import) produces exactly the
// updates of a Maintained one.
func TestLiveSubscribeMatchesMaintenance(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { liveScenario(t, seed) })
	}
}

// TestLiveImportFollowsPublishedIndex drives the publisher by hand, so
// that it compacts and merges as aggressively as it may: after every batch
// it asks for compaction to its upper (maintenance applies it at once, the
// interactive runtime's standing hold follows) and spends merge fuel. A
// LiveRead subscribe on the interactive runtime must, at every frontier it
// reports, hold exactly the index's contents at every time before it, and
// never read below the published since: without the live import's
// follower the publisher compacts past it (sabotage: the dataflow fails,
// ErrLiveImportLost).
func TestLiveImportFollowsPublishedIndex(t *testing.T) {
	const workers = 2
	rng := rand.New(rand.NewPCG(7, 7))
	reg := sharing.NewRegistry()
	col := newSubCollector()
	var irt *runtime.Runtime
	inter := newInteractiveRuntime(t, InteractiveConfig{Registry: reg, Workers: workers, Respond: col.respond},
		runtimeWith(runtime.Config{Workers: workers, Processes: 1, Role: runtime.Interactive, Respond: col.respond, OnFatal: col.fail}, &irt))
	defer inter.Close()
	irt.Start(context.Background())
	defer irt.Stop()
	maint := newTestMaintenance(t, reg, &nullTarget{})

	src, view, index := plan.User(1), plan.User(2), plan.User(3)
	maintained := plan.DataflowDescription{
		ID: plan.User(100), DebugName: "index", Class: plan.ClassMaintained,
		SourceImports:  []plan.SourceImport{{ID: src, Desc: kvDesc, Connection: plan.SourceConnection{Kind: plan.SourceTable}}},
		ObjectsToBuild: []plan.Build{{ID: view, Plan: plan.NewGet(src)}},
		IndexExports:   []plan.IndexExport{{ID: index, On: view, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:           frontier.At(0), Until: frontier.Closed(),
	}
	for _, x := range []runtime.Commands{maint, inter} {
		if err := x.CreateDataflow(maintained); err != nil {
			t.Fatal(err)
		}
	}
	pubs := make([]*handPublisher, workers)
	for w := range workers {
		pubs[w] = newHandPublisher(t, maint, index, w)
	}
	// The reference: every update published, by row.
	type upd struct {
		t frontier.Time
		d int64
	}
	ref := map[string][]upd{}
	up := frontier.Time(0)
	subscribed := false
	publish := func(n int) {
		t.Helper()
		next := up + 1 + frontier.Time(rng.IntN(3))
		for w := range workers {
			var rows []pubRow
			for range n {
				k, v := int64(rng.IntN(5000)*workers+w), rng.Int64N(3)
				ts := up + frontier.Time(rng.Uint64N(uint64(next-up)))
				rows = append(rows, pubRow{k: k, v: v, t: ts, d: 1})
				key := row.Row(row.Pack(row.Int64(k), row.Int64(v))).String()
				ref[key] = append(ref[key], upd{ts, 1})
			}
			pubs[w].insert(t, up, next, rows)
		}
		up = next
		// Maintenance compacts to its upper at once (once the subscribe
		// exists; before, to just below it, where the subscribe reads);
		// the interactive runtime's standing hold follows (it has applied
		// the command).
		c := frontier.At(up - 1)
		if subscribed {
			c = frontier.At(up)
		}
		for _, p := range pubs {
			p.compact(t, c)
		}
		if err := inter.AllowCompaction(index, c); err != nil {
			t.Fatal(err)
		}
	}
	// A snapshot bigger than a live import walks in one schedule
	// (flattenFuel), so that the publisher moves on, compacts and merges
	// while the import is still walking it.
	publish(3)
	publish(3 * 4096)
	publish(3)
	sub := plan.Transient(1)
	asOf := up - 1
	end := up + 60
	if err := inter.CreateDataflow(plan.DataflowDescription{
		ID: plan.Transient(2), DebugName: "live subscribe", Class: plan.ClassLiveRead,
		IndexImports:   []plan.IndexImport{{ID: index, On: view, Key: []expr.Expr{expr.Column(0)}, Desc: kvDesc}},
		SubscribeSinks: []plan.SubscribeSink{{ID: sub, From: view, Snapshot: true, UpTo: frontier.At(end)}},
		AsOf:           frontier.At(asOf), Until: frontier.Closed(),
	}); err != nil {
		t.Fatal(err)
	}
	subscribed = true
	for up < end {
		publish(rng.IntN(4))
		if rng.IntN(3) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	rs := col.wait(t, sub, frontier.Closed())
	// Every time the subscribe's batches cover, from its as_of to its end:
	// the rows it delivered up to then accumulate to the index's contents
	// then. Walked once in time order, with the running difference.
	diffAt := map[frontier.Time]map[string]int64{}
	add := func(ts frontier.Time, key string, d int64) {
		if diffAt[ts] == nil {
			diffAt[ts] = map[string]int64{}
		}
		diffAt[ts][key] += d
	}
	for key, us := range ref {
		for _, u := range us {
			add(u.t, key, u.d)
		}
	}
	lower := frontier.At(asOf)
	for _, r := range rs {
		if r.Error != nil {
			t.Fatal(r.Error)
		}
		if r.Lower != lower {
			t.Fatalf("batch [%v, %v) does not start where the last ended (%v)", r.Lower, r.Upper, lower)
		}
		lower = r.Upper
		for _, u := range r.Updates {
			add(u.Time, row.Row(u.Row).String(), -u.Diff)
		}
	}
	running := map[string]int64{}
	for at := frontier.Time(0); at < end; at++ {
		for key, d := range diffAt[at] {
			if running[key] += d; running[key] == 0 {
				delete(running, key)
			}
		}
		if at < asOf {
			continue
		}
		for key, d := range running {
			t.Fatalf("as of %d row %s: the index holds %+d more than the subscribe", at, key, d)
		}
	}
}

// pubRow is one update a hand publisher inserts.
type pubRow struct {
	k, v int64
	t    frontier.Time
	d    int64
}

// handPublisher plays one maintenance worker's shard of an index: its ok
// and error traces with the export's own handles, published through the
// Maintenance wrapper.
type handPublisher struct {
	ok, errs *trace.Trace
	own      [2]*trace.Handle
	pub      runtime.Publication
}

func newHandPublisher(t *testing.T, maint *Maintenance, id plan.GlobalID, worker int) *handPublisher {
	t.Helper()
	p := &handPublisher{ok: trace.New(frontier.Minimum()), errs: trace.New(frontier.Minimum())}
	p.own = [2]*trace.Handle{p.ok.NewHandle("export"), p.errs.NewHandle("export errors")}
	var err error
	if p.pub, err = maint.Publish(id, worker, p.ok, p.errs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.pub.Close()
		for _, h := range p.own {
			h.Release()
		}
	})
	return p
}

// insert appends [lo, hi) with rows to the ok trace (and an empty batch to
// the error trace), spends merge fuel and republishes.
func (p *handPublisher) insert(t *testing.T, lo, hi frontier.Time, rows []pubRow) {
	t.Helper()
	var b batch.Builder
	for _, r := range rows {
		b.Push(row.Pack(row.Int64(r.k)), row.Pack(row.Int64(r.k), row.Int64(r.v)), r.t, r.d)
	}
	desc := batch.Description{Lower: frontier.At(lo), Upper: frontier.At(hi), Since: frontier.Minimum()}
	for i, tr := range []*trace.Trace{p.ok, p.errs} {
		bb := &b
		if i == 1 {
			bb = &batch.Builder{}
		}
		bt, err := bb.Build(desc)
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Insert(bt); err != nil {
			t.Fatal(err)
		}
		fuel := 1 << 20
		tr.Exert(&fuel)
	}
	if err := p.pub.Refresh(); err != nil {
		t.Fatal(err)
	}
}

// compact advances the export's own handles to f, records it and spends
// merge fuel, so merges (which apply the since) follow at once.
func (p *handPublisher) compact(t *testing.T, f frontier.Frontier) {
	t.Helper()
	for _, h := range p.own {
		if err := h.SetLogical(f); err != nil {
			t.Fatal(err)
		}
		if err := h.SetPhysical(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.pub.Compact(f); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []*trace.Trace{p.ok, p.errs} {
		fuel := 1 << 20
		tr.Exert(&fuel)
	}
	if err := p.pub.Refresh(); err != nil {
		t.Fatal(err)
	}
}

// TestLiveSubscribeSnapshotWhileMaintenanceStalls: a LiveRead subscribe's
// snapshot and the updates already published come from the published
// index, so they arrive while every maintenance worker is stuck in one
// long step (as during a big index's hydration). The subscribe here ends
// at the published upper, so it must complete during the stall. Sabotage:
// the same subscribe tagged Maintained waits for the stall to end and the
// test fails.
func TestLiveSubscribeSnapshotWhileMaintenanceStalls(t *testing.T) {
	tbl := render.NewMemoryTable()
	src, view, index := plan.User(1), plan.User(2), plan.User(3)
	col := newSubCollector()
	mux, mrt := liveProcess(t, 2, render.MemorySources{src: tbl}, col)
	if err := mux.CreateDataflow(plan.DataflowDescription{
		ID: plan.User(100), DebugName: "index", Class: plan.ClassMaintained,
		SourceImports:  []plan.SourceImport{{ID: src, Desc: kvDesc, Connection: plan.SourceConnection{Kind: plan.SourceTable}}},
		ObjectsToBuild: []plan.Build{{ID: view, Plan: plan.NewGet(src)}},
		IndexExports:   []plan.IndexExport{{ID: index, On: view, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:           frontier.At(0), Until: frontier.Closed(),
	}); err != nil {
		t.Fatal(err)
	}
	kv := func(k, v int64, ts frontier.Time) df.Update {
		return df.Update{Val: row.Pack(row.Int64(k), row.Int64(v)), Time: ts, Diff: 1}
	}
	if err := tbl.Append([]df.Update{kv(1, 10, 1), kv(2, 20, 2), kv(3, 30, 4)}, frontier.At(6)); err != nil {
		t.Fatal(err)
	}
	// A Maintained subscribe to [3, 6) tells when maintenance has published
	// through 6 (its batches leave once the index's frontier passed 6).
	sub := func(id plan.GlobalID, class plan.DataflowClass) {
		t.Helper()
		if err := mux.CreateDataflow(plan.DataflowDescription{
			ID: plan.Transient(uint64(id.N) + 100), DebugName: "subscribe " + class.String(), Class: class,
			IndexImports:   []plan.IndexImport{{ID: index, On: view, Key: []expr.Expr{expr.Column(0)}, Desc: kvDesc}},
			SubscribeSinks: []plan.SubscribeSink{{ID: id, From: view, Snapshot: true, UpTo: frontier.At(6)}},
			AsOf:           frontier.At(3), Until: frontier.Closed(),
		}); err != nil {
			t.Fatal(err)
		}
	}
	sub(plan.Transient(1), plan.ClassMaintained)
	want := subscribeLog(t, col.wait(t, plan.Transient(1), frontier.Closed()), frontier.At(3))

	stalled, release := make(chan struct{}, 2), make(chan struct{})
	defer close(release)
	mrt.OnWorkers(func(int) error {
		stalled <- struct{}{}
		<-release
		return nil
	})
	<-stalled
	<-stalled
	// Maintenance cannot take these in while it stalls.
	if err := tbl.Append([]df.Update{kv(4, 40, 7)}, frontier.At(9)); err != nil {
		t.Fatal(err)
	}
	sub(plan.Transient(2), plan.ClassLiveRead)
	got := subscribeLog(t, col.wait(t, plan.Transient(2), frontier.Closed()), frontier.At(3))
	if got != want {
		t.Fatalf("live subscribe during the stall:\n%s\nwant (maintenance, before the stall):\n%s", got, want)
	}
}
