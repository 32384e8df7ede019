package placement

import (
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/trace"
	"github.com/tandemdb/tandem/pkg/sharing"
)

type nullTarget struct{ peeks []string }

func (*nullTarget) CreateDataflow(plan.DataflowDescription) error          { return nil }
func (*nullTarget) AllowCompaction(plan.GlobalID, frontier.Frontier) error { return nil }
func (*nullTarget) UpdateConfiguration(map[string]string) error            { return nil }
func (n *nullTarget) Peek(p runtime.Peek)                                  { n.peeks = append(n.peeks, p.UUID) }
func (*nullTarget) CancelPeek(string)                                      {}

type collector struct {
	mu  sync.Mutex
	got []*runtime.PeekResponse
	ch  chan *runtime.PeekResponse
}

func newCollector() *collector { return &collector{ch: make(chan *runtime.PeekResponse, 64)} }

func (c *collector) respond(r runtime.Response) {
	if p, ok := r.(*runtime.PeekResponse); ok {
		c.mu.Lock()
		c.got = append(c.got, p)
		c.mu.Unlock()
		c.ch <- p
	}
}

func (c *collector) next(t *testing.T) *runtime.PeekResponse {
	t.Helper()
	select {
	case p := <-c.ch:
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no peek response")
		return nil
	}
}

// insertRows appends one batch [lo, hi) with rows (k, v) at time lo.
func insertRows(t *testing.T, tr *trace.Trace, lo, hi frontier.Time, kvs ...int64) {
	t.Helper()
	var b batch.Builder
	for i := 0; i+1 < len(kvs); i += 2 {
		b.Push(row.Pack(row.Int64(kvs[i])), row.Pack(row.Int64(kvs[i]), row.Int64(kvs[i+1])), lo, 1)
	}
	bat, err := b.Build(batch.Description{Lower: frontier.At(lo), Upper: frontier.At(hi), Since: frontier.Minimum()})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Insert(bat); err != nil {
		t.Fatal(err)
	}
}

func sealEmpty(t *testing.T, tr *trace.Trace, lo, hi frontier.Time) {
	t.Helper()
	bat, err := new(batch.Builder).Build(batch.Description{Lower: frontier.At(lo), Upper: frontier.At(hi), Since: frontier.Minimum()})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Insert(bat); err != nil {
		t.Fatal(err)
	}
}

func show(rows []peekRow) string {
	var s []string
	for _, r := range rows {
		s = append(s, r)
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

type peekRow = string

func rowsOf(t *testing.T, p *runtime.PeekResponse) string {
	t.Helper()
	if p.Error != nil {
		t.Fatalf("peek %s failed: %v", p.UUID, p.Error)
	}
	var out []peekRow
	for _, rc := range p.Rows {
		ds, err := rc.Row.Unpack()
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, d := range ds {
			parts = append(parts, d.String())
		}
		out = append(out, strings.Join(parts, ","))
	}
	return show(out)
}

// TestPeerPeekWaitsForPublication is the scripted acceptance at the
// placement level: the interactive runtime learns of a maintained index,
// a peek on it arrives before maintenance publishes anything, and it
// resolves with the right rows only once the published upper passes its
// time.
func TestPeerPeekWaitsForPublication(t *testing.T) {
	reg := sharing.NewRegistry()
	col := newCollector()
	in := newTestInteractive(t, InteractiveConfig{Registry: reg, Workers: 1, Respond: col.respond}, &nullTarget{})
	defer in.Close()
	maint := newTestMaintenance(t, reg, &nullTarget{})
	id := plan.User(7)
	desc := plan.DataflowDescription{ID: id, IndexExports: []plan.IndexExport{{ID: id}}, Class: plan.ClassMaintained, AsOf: frontier.At(0)}
	if err := maint.CreateDataflow(desc); err != nil {
		t.Fatal(err)
	}
	if err := in.CreateDataflow(desc); err != nil {
		t.Fatal(err)
	}
	in.Peek(runtime.Peek{UUID: "p1", Target: id, Timestamp: 2})
	select {
	case p := <-col.ch:
		t.Fatalf("peek answered before publication: %+v", p)
	case <-time.After(50 * time.Millisecond):
	}
	ok, errs := trace.New(frontier.Minimum()), trace.New(frontier.Minimum())
	pub, err := maint.Publish(id, 0, ok, errs)
	if err != nil {
		t.Fatal(err)
	}
	insertRows(t, ok, 0, 2, 1, 10, 2, 20)
	sealEmpty(t, errs, 0, 2)
	if err := pub.Refresh(); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-col.ch:
		t.Fatalf("peek at 2 answered with upper 2: %+v", p)
	case <-time.After(50 * time.Millisecond):
	}
	insertRows(t, ok, 2, 3, 3, 30)
	sealEmpty(t, errs, 2, 3)
	if err := pub.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got, want := rowsOf(t, col.next(t)), "1,10 2,20 3,30"; got != want {
		t.Fatalf("rows %q, want %q", got, want)
	}
	// A point lookup with a literal key constraint.
	in.Peek(runtime.Peek{UUID: "p2", Target: id, Timestamp: 1, Keys: [][]byte{row.Pack(row.Int64(2))}})
	if got, want := rowsOf(t, col.next(t)), "2,20"; got != want {
		t.Fatalf("lookup rows %q, want %q", got, want)
	}
	// An ordered peek with a limit keeps only the rows that make the cut,
	// as on the runtime's workers (runtime.NewPeekWalk).
	top := &peek.TopK{Limit: 1, Order: []plan.ColumnOrder{{Column: 1, Desc: true}}}
	in.Peek(runtime.Peek{UUID: "p3", Target: id, Timestamp: 2, TopK: top})
	if got, want := rowsOf(t, col.next(t)), "3,30"; got != want {
		t.Fatalf("top-k rows %q, want %q", got, want)
	}
}

func TestPeerPeekCanceledAndDropped(t *testing.T) {
	reg := sharing.NewRegistry()
	col := newCollector()
	in := newTestInteractive(t, InteractiveConfig{Registry: reg, Workers: 2, Respond: col.respond}, &nullTarget{})
	defer in.Close()
	maint := newTestMaintenance(t, reg, &nullTarget{})
	id := plan.User(8)
	desc := plan.DataflowDescription{ID: id, IndexExports: []plan.IndexExport{{ID: id}}, Class: plan.ClassMaintained}
	_ = maint.CreateDataflow(desc)
	_ = in.CreateDataflow(desc)
	in.Peek(runtime.Peek{UUID: "c", Target: id, Timestamp: 100})
	in.CancelPeek("c")
	if p := col.next(t); !p.Canceled || p.UUID != "c" {
		t.Fatalf("want canceled, got %+v", p)
	}
	var pubs []runtime.Publication
	for w := range 2 {
		pub, err := maint.Publish(id, w, trace.New(frontier.Minimum()), trace.New(frontier.Minimum()))
		if err != nil {
			t.Fatal(err)
		}
		pubs = append(pubs, pub)
	}
	in.Peek(runtime.Peek{UUID: "d", Target: id, Timestamp: 100})
	for _, p := range pubs {
		p.Close()
	}
	p := col.next(t)
	if !errors.Is(p.Error, sharing.ErrDropped) {
		t.Fatalf("want ErrDropped, got %+v", p)
	}
	time.Sleep(20 * time.Millisecond)
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.got) != 2 {
		t.Fatalf("%d responses for 2 peeks", len(col.got))
	}
}

// TestStandingHoldFollowsCompaction: the interactive runtime's standing hold
// starts at the as_of and follows the AllowCompaction it applies, and the
// publisher cannot compact past it (I1c) even though its own handle asks to.
func TestStandingHoldFollowsCompaction(t *testing.T) {
	reg := sharing.NewRegistry()
	in := newTestInteractive(t, InteractiveConfig{Registry: reg, Workers: 1, Respond: func(runtime.Response) {}}, &nullTarget{})
	defer in.Close()
	maint := newTestMaintenance(t, reg, &nullTarget{})
	id := plan.User(9)
	desc := plan.DataflowDescription{ID: id, IndexExports: []plan.IndexExport{{ID: id}}, Class: plan.ClassMaintained, AsOf: frontier.At(0)}
	_ = maint.CreateDataflow(desc)
	_ = in.CreateDataflow(desc)
	ok, errs := trace.New(frontier.Minimum()), trace.New(frontier.Minimum())
	own := ok.NewHandle("export")
	defer own.Release()
	pub, err := maint.Publish(id, 0, ok, errs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		insertRows(t, ok, frontier.Time(i), frontier.Time(i+1), int64(i), 0)
	}
	// Maintenance applies AllowCompaction(8); interactive has applied only 3.
	_ = in.AllowCompaction(id, frontier.At(3))
	_ = own.SetLogical(frontier.At(8))
	_ = pub.Compact(frontier.At(8))
	_ = pub.Refresh()
	if got := ok.Since(); got != frontier.At(3) {
		t.Fatalf("since %v, want [3]: the interactive runtime has applied only 3", got)
	}
	_ = in.AllowCompaction(id, frontier.At(8))
	_ = pub.Refresh()
	if got := ok.Since(); got != frontier.At(8) {
		t.Fatalf("since %v, want [8] once the interactive runtime caught up", got)
	}
}
