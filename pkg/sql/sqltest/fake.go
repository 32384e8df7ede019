package sqltest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/reference"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Fake is an in-memory sql.Backend. It is safe for concurrent use.
type Fake struct {
	mu       sync.Mutex
	nextID   uint64
	items    []sql.Item
	updates  map[plan.GlobalID][]reference.Update
	now      frontier.Time
	changed  chan struct{} // closed and replaced on every write
	params   map[string]string
	clusters []sql.Cluster
	// Peeks counts reads by path, for tests of path selection.
	peeks    map[string]int
	lastPeek sql.PeekRequest
	// streamed marks peek results as streamed (StreamPeeks); open counts
	// peek results not closed yet.
	streamed bool
	open     int
	// gate, when set, holds every peek until it is closed or the peek's
	// context ends (BlockPeeks).
	gate chan struct{}
	// gated counts the peeks the gate holds now (HeldPeeks).
	gated atomic.Int64
	// roles and grants (roles.go), grants keyed by object, grantee and
	// grantor (grantKey).
	roles  map[string]sql.Role
	grants map[[3]string]sql.Grant
	// gen is the catalog generation: bumped by every change to items,
	// roles or grants.
	gen uint64
}

// BlockPeeks holds every later peek until the returned release is called
// or the peek's context ends, as a read waiting on a busy replica does.
func (f *Fake) BlockPeeks() (release func()) {
	gate := make(chan struct{})
	f.mu.Lock()
	f.gate = gate
	f.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			f.gate = nil
			f.mu.Unlock()
			close(gate)
		})
	}
}

// HeldPeeks returns how many peeks BlockPeeks holds now.
func (f *Fake) HeldPeeks() int { return int(f.gated.Load()) }

// StreamPeeks makes every later peek result report Streamed, as a
// backend's large spilled results do, so the SQL layer streams them.
func (f *Fake) StreamPeeks() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.streamed = true
}

// OpenPeeks returns how many peek results have not been closed.
func (f *Fake) OpenPeeks() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.open
}

// peekRows are a fake peek result: in memory, reporting Streamed as
// configured, counted until closed.
type peekRows struct {
	sql.PeekRows
	f        *Fake
	streamed bool
	closed   bool
}

func (p *peekRows) Streamed() bool { return p.streamed }
func (p *peekRows) Close() {
	if p.closed {
		return
	}
	p.closed = true
	p.PeekRows.Close()
	p.f.mu.Lock()
	p.f.open--
	p.f.mu.Unlock()
}

// LastPeek returns the most recent peek request.
func (f *Fake) LastPeek() sql.PeekRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastPeek
}

var _ sql.Backend = (*Fake)(nil)

// DefaultParams are the system parameters Fake knows, with defaults.
func DefaultParams() map[string]string {
	return map[string]string{
		"enable_compute_interactive_dataflows": "on",
		"max_result_size":                      "1073741824",
		"max_connections":                      "100",
		"max_query_memory":                     "268435456",
	}
}

// New returns a Fake with one cluster "default" of one replica "r1".
func New() *Fake {
	return &Fake{
		nextID:   1,
		updates:  map[plan.GlobalID][]reference.Update{},
		now:      1,
		changed:  make(chan struct{}),
		params:   DefaultParams(),
		clusters: []sql.Cluster{{Name: "default", Replicas: []sql.Replica{{Name: "r1", Size: "1", Processes: 1, Workers: 1, Status: "ready"}}}},
		peeks:    map[string]int{},
		// Every role may use the default cluster, as in the environment.
		grants: map[[3]string]sql.Grant{{"cluster:default", "", ""}: {Object: "cluster:default", Privileges: "U"}},
	}
}

// PeekCount returns how many peeks took a path: "index" or "dataflow".
func (f *Fake) PeekCount(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.peeks[path]
}

// Items implements sql.Backend.
func (f *Fake) Items(context.Context) ([]sql.Item, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.items), nil
}

// Generation implements sql.Backend.
func (f *Fake) Generation(context.Context) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gen, nil
}

// CreateItem implements sql.Backend.
func (f *Fake) CreateItem(_ context.Context, it sql.Item) (sql.Item, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.createLocked(it)
}

func (f *Fake) createLocked(it sql.Item) (sql.Item, error) {
	f.gen++ // a catalog change
	if it.Schema == "" {
		it.Schema = sql.SchemaPublic
	}
	for _, o := range f.items {
		if o.Schema == it.Schema && o.Name == it.Name {
			return sql.Item{}, sqlerr.Errorf(sqlerr.DuplicateObject, "%q already exists", it.Name)
		}
	}
	if (it.Kind == sql.KindMaterializedView || it.Kind == sql.KindIndex) && it.Plan == nil {
		return sql.Item{}, fmt.Errorf("create %s %s: no plan", it.Kind, it.Name)
	}
	if it.Plan != nil {
		// Check the plan against the catalog as the real backend would.
		if _, err := it.Plan.Desc(f.envLocked()); err != nil {
			return sql.Item{}, fmt.Errorf("create %s %s: invalid plan: %w", it.Kind, it.Name, err)
		}
	}
	it.ID = plan.User(f.nextID)
	f.nextID++
	f.items = append(f.items, it)
	return it, nil
}

func (f *Fake) envLocked() plan.Env {
	return func(id plan.GlobalID) (row.RelationDesc, bool) {
		for _, it := range f.items {
			if it.ID == id && it.Kind != sql.KindIndex && it.Kind != sql.KindView {
				return it.Desc, true
			}
		}
		return row.RelationDesc{}, false
	}
}

// AddSystemItem adds an introspection relation with fixed rows, for tests
// of introspection reads.
func (f *Fake) AddSystemItem(name string, desc row.RelationDesc, rows ...[]row.Datum) sql.Item {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++ // a catalog change
	it := sql.Item{ID: plan.System(f.nextID), Schema: sql.SchemaIntrospection, Name: name, Kind: sql.KindSource, Desc: desc}
	f.nextID++
	f.items = append(f.items, it)
	for _, r := range rows {
		f.updates[it.ID] = append(f.updates[it.ID], reference.Update{Row: row.Pack(r...), Time: 0, Diff: 1})
	}
	return it
}

func desc(cols ...[2]any) row.RelationDesc {
	d := row.RelationDesc{}
	for _, c := range cols {
		d.Names = append(d.Names, c[0].(string))
		d.Types = append(d.Types, row.ColumnType{Type: c[1].(row.Type)})
	}
	return d
}

// generatorOutputs are the subsources of each load generator and their
// columns.
func generatorOutputs(gen, name string) ([]string, []row.RelationDesc, error) {
	i, t, ts, b := row.TypeInt64, row.TypeText, row.TypeTimestamp, row.TypeBytes
	switch gen {
	case "COUNTER":
		return []string{name}, []row.RelationDesc{desc([2]any{"counter", i})}, nil
	case "KEY VALUE":
		return []string{name}, []row.RelationDesc{desc([2]any{"key", i}, [2]any{"partition", i}, [2]any{"value", b}, [2]any{"offset", i})}, nil
	case "AUCTION":
		return []string{"organizations", "users", "accounts", "auctions", "bids"}, []row.RelationDesc{
			desc([2]any{"id", i}, [2]any{"name", t}),
			desc([2]any{"id", i}, [2]any{"org_id", i}, [2]any{"name", t}),
			desc([2]any{"id", i}, [2]any{"org_id", i}, [2]any{"balance", i}),
			desc([2]any{"id", i}, [2]any{"seller", i}, [2]any{"item", t}, [2]any{"end_time", ts}),
			desc([2]any{"id", i}, [2]any{"buyer", i}, [2]any{"auction_id", i}, [2]any{"amount", i}, [2]any{"bid_time", ts}),
		}, nil
	}
	return nil, nil, sqlerr.Errorf(sqlerr.InvalidParameterValue, "unknown load generator %q", gen)
}

// CreateSource implements sql.Backend.
func (f *Fake) CreateSource(_ context.Context, spec sql.SourceSpec) ([]sql.Item, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++ // a catalog change
	names, descs, err := generatorOutputs(spec.Generator, spec.Name)
	if err != nil {
		return nil, err
	}
	var out []sql.Item
	if len(names) > 1 {
		it, err := f.createLocked(sql.Item{Name: spec.Name, Kind: sql.KindSource, Desc: row.RelationDesc{}, SQL: spec.SQL, Cluster: spec.Cluster, Owner: spec.Owner})
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	for k, n := range names {
		it := sql.Item{Name: n, Kind: sql.KindSource, Desc: descs[k], SQL: spec.SQL, Cluster: spec.Cluster, Owner: spec.Owner}
		if len(out) > 0 {
			it.DependsOn = []plan.GlobalID{out[0].ID}
		}
		created, err := f.createLocked(it)
		if err != nil {
			return nil, err
		}
		out = append(out, created)
	}
	return out, nil
}

// DropItems implements sql.Backend.
func (f *Fake) DropItems(_ context.Context, ids []plan.GlobalID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++ // a catalog change
	for _, id := range ids {
		i := slices.IndexFunc(f.items, func(it sql.Item) bool { return it.ID == id })
		if i < 0 {
			return fmt.Errorf("drop %s: unknown item", id)
		}
		for _, o := range f.items {
			if o.ID != id && (o.On == id || slices.Contains(o.DependsOn, id)) && !slices.Contains(ids, o.ID) {
				return fmt.Errorf("drop %s: %s still depends on it", id, o.ID)
			}
		}
		f.items = slices.Delete(f.items, i, i+1)
		delete(f.updates, id)
		f.dropGrantsLocked("relation:" + id.String())
	}
	return nil
}

// AlterTable implements sql.Backend.
func (f *Fake) AlterTable(_ context.Context, it sql.Item) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++ // a catalog change
	old := f.itemLocked(it.ID)
	if old == nil || old.Kind != sql.KindTable {
		return fmt.Errorf("alter %s: not a table", it.ID)
	}
	for _, o := range f.items {
		if o.ID != it.ID && o.Schema == old.Schema && o.Name == it.Name {
			return sqlerr.Errorf(sqlerr.DuplicateTable, "relation %q already exists", it.Name)
		}
	}
	old.Name, old.Desc, old.SQL = it.Name, it.Desc, it.SQL
	return nil
}

// WriteTable writes one table (WriteTables of one).
func (f *Fake) WriteTable(ctx context.Context, id plan.GlobalID, ups []sql.RowDiff) error {
	return f.WriteTables(ctx, []sql.TableWrite{{Table: id, Updates: ups}})
}

// WriteTables implements sql.Backend: every write is checked before any is
// applied, then all are applied at one time.
// Commits returns how many WriteTables calls have committed, so a test
// can check that a transaction commits in exactly one.
func (f *Fake) Commits() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return uint64(f.now)
}

func (f *Fake) WriteTables(_ context.Context, writes []sql.TableWrite) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, w := range writes {
		it := f.itemLocked(w.Table)
		if it == nil || it.Kind != sql.KindTable {
			return fmt.Errorf("write %s: not a table", w.Table)
		}
		for _, u := range w.Updates {
			datums, err := u.Row.Unpack()
			if err != nil {
				return fmt.Errorf("write %s: %w", w.Table, err)
			}
			// Removals may be of rows written before an ALTER TABLE changed
			// the columns (ADD COLUMN rewrites the rows).
			if err := it.Desc.Check(datums); err != nil && u.Diff > 0 {
				return fmt.Errorf("write %s: %w", w.Table, err)
			}
		}
	}
	f.now++
	for _, w := range writes {
		for _, u := range w.Updates {
			f.updates[w.Table] = append(f.updates[w.Table], reference.Update{Row: u.Row, Time: f.now, Diff: u.Diff})
		}
	}
	close(f.changed)
	f.changed = make(chan struct{})
	return nil
}

func (f *Fake) itemLocked(id plan.GlobalID) *sql.Item {
	for i := range f.items {
		if f.items[i].ID == id {
			return &f.items[i]
		}
	}
	return nil
}

// contentsLocked computes a collection at time t.
func (f *Fake) contentsLocked(id plan.GlobalID, t frontier.Time, depth int) (reference.Result, error) {
	it := f.itemLocked(id)
	if it == nil {
		return reference.Result{}, fmt.Errorf("unknown collection %s", id)
	}
	if depth > 100 {
		return reference.Result{}, fmt.Errorf("dependency cycle at %s", id)
	}
	switch it.Kind {
	case sql.KindTable, sql.KindSource:
		return reference.Result{Rows: reference.AsOf(f.updates[id], t), Errors: reference.Collection{}}, nil
	case sql.KindMaterializedView:
		return f.evalLocked(it.Plan, t, depth+1)
	case sql.KindView:
		// A read of an indexed view reads the index, which maintains
		// the view's query.
		for i := range f.items {
			if ix := &f.items[i]; ix.Kind == sql.KindIndex && ix.On == id && ix.Plan != nil {
				return f.evalLocked(ix.Plan, t, depth+1)
			}
		}
	}
	return reference.Result{}, fmt.Errorf("%s %s is not a collection", it.Kind, it.Name)
}

func (f *Fake) evalLocked(p *plan.Plan, t frontier.Time, depth int) (reference.Result, error) {
	env := map[plan.GlobalID]reference.Result{}
	for _, dep := range p.DependsOn() {
		c, err := f.contentsLocked(dep, t, depth)
		if err != nil {
			return reference.Result{}, err
		}
		env[dep] = c
	}
	return reference.EvalPlan(p, env)
}

func rowDiffs(res reference.Result) ([]sql.RowDiff, error) {
	if errs := res.Errs(); len(errs) > 0 {
		return nil, errs[0]
	}
	out := make([]sql.RowDiff, 0, len(res.Rows))
	for k, n := range res.Rows {
		out = append(out, sql.RowDiff{Row: row.Row(k), Diff: n})
	}
	slices.SortFunc(out, func(a, b sql.RowDiff) int { return strings.Compare(string(a.Row), string(b.Row)) })
	return out, nil
}

// Peek implements sql.Backend.
func (f *Fake) Peek(ctx context.Context, req sql.PeekRequest) (sql.PeekRows, error) {
	f.mu.Lock()
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		f.gated.Add(1)
		select {
		case <-gate:
		case <-ctx.Done():
			f.gated.Add(-1)
			return nil, ctx.Err()
		}
		f.gated.Add(-1)
	}
	rows, err := f.peek(req)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open++
	return &peekRows{PeekRows: sql.RowsOf(rows), f: f, streamed: f.streamed}, nil
}

func (f *Fake) peek(req sql.PeekRequest) ([]sql.RowDiff, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkCluster(req.Cluster); err != nil {
		return nil, err
	}
	f.lastPeek = req
	if req.Index != nil {
		f.peeks["index"]++
		return f.indexPeekLocked(req.Index)
	}
	f.peeks["dataflow"]++
	res, err := f.evalLocked(req.Plan, f.now, 0)
	if err != nil {
		return nil, err
	}
	return rowDiffs(res)
}

func (f *Fake) checkCluster(name string) error {
	for _, c := range f.clusters {
		if c.Name == name {
			return nil
		}
	}
	return sqlerr.Errorf(sqlerr.UndefinedObject, "unknown cluster %q", name)
}

func (f *Fake) indexPeekLocked(ip *sql.IndexPeek) ([]sql.RowDiff, error) {
	ix := f.itemLocked(ip.Index)
	if ix == nil || ix.Kind != sql.KindIndex {
		return nil, fmt.Errorf("peek: %s is not an index", ip.Index)
	}
	res, err := f.evalLocked(ix.Plan, f.now, 0)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, k := range ip.Keys {
		want[string(row.NumericKeyRow(k))] = true // as the engine's peek keys: numerics by value
	}
	out := reference.Result{Rows: reference.Collection{}, Errors: res.Errors}
	for k, n := range res.Rows {
		datums, err := row.Row(k).Unpack()
		if err != nil {
			return nil, err
		}
		if ip.Keys != nil {
			key := make([]row.Datum, len(ix.Keys))
			for i := range ix.Keys {
				if key[i], err = ix.Keys[i].Eval(datums); err != nil {
					return nil, err
				}
			}
			if !want[string(row.Pack(row.NumericKeys(key)...))] {
				continue
			}
		}
		vals, keep, err := ip.MFP.Evaluate(datums, nil)
		if err != nil {
			return nil, err
		}
		if keep {
			r := string(row.Pack(vals...))
			out.Rows[r] += n
			if out.Rows[r] == 0 {
				delete(out.Rows, r)
			}
		}
	}
	return rowDiffs(out)
}

// Subscribe implements sql.Backend.
func (f *Fake) Subscribe(_ context.Context, req sql.SubscribeRequest) (sql.Subscription, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.checkCluster(req.Cluster); err != nil {
		return nil, err
	}
	if _, err := req.Plan.Desc(f.envLocked()); err != nil {
		return nil, fmt.Errorf("subscribe: invalid plan: %w", err)
	}
	start := f.now
	if req.AsOf != nil {
		start = *req.AsOf
	}
	return &subscription{f: f, plan: req.Plan, snapshot: req.Snapshot, at: start, prev: reference.Collection{}}, nil
}

type subscription struct {
	f        *Fake
	plan     *plan.Plan
	snapshot bool
	started  bool
	at       frontier.Time // contents in prev are as of at
	prev     reference.Collection
	closed   bool
}

func (s *subscription) Next(ctx context.Context) (sql.SubscribeBatch, error) {
	s.f.mu.Lock()
	if s.closed {
		s.f.mu.Unlock()
		return sql.SubscribeBatch{}, fmt.Errorf("subscription closed")
	}
	if !s.started {
		s.started = true
		res, err := s.f.evalLocked(s.plan, s.at, 0)
		s.f.mu.Unlock()
		if err != nil {
			return sql.SubscribeBatch{}, err
		}
		if errs := res.Errs(); len(errs) > 0 {
			return sql.SubscribeBatch{}, errs[0]
		}
		b := sql.SubscribeBatch{Upper: s.at + 1}
		if s.snapshot {
			b.Updates = timed(res.Rows, s.at)
		}
		s.prev = res.Rows
		return b, nil
	}
	for s.f.now <= s.at {
		ch := s.f.changed
		s.f.mu.Unlock()
		select {
		case <-ctx.Done():
			return sql.SubscribeBatch{}, ctx.Err()
		case <-ch:
		}
		s.f.mu.Lock()
	}
	// Step through every time since the last batch, so that each write
	// shows at its own time.
	defer s.f.mu.Unlock()
	var b sql.SubscribeBatch
	for s.at < s.f.now {
		s.at++
		res, err := s.f.evalLocked(s.plan, s.at, 0)
		if err != nil {
			return sql.SubscribeBatch{}, err
		}
		if errs := res.Errs(); len(errs) > 0 {
			return sql.SubscribeBatch{}, errs[0]
		}
		b.Updates = append(b.Updates, timed(reference.Diff(res.Rows, s.prev), s.at)...)
		s.prev = res.Rows
	}
	b.Upper = s.at + 1
	return b, nil
}

func timed(c reference.Collection, t frontier.Time) []sql.TimedRowDiff {
	var out []sql.TimedRowDiff
	for k, n := range c {
		out = append(out, sql.TimedRowDiff{Row: row.Row(k), Time: t, Diff: n})
	}
	slices.SortFunc(out, func(a, b sql.TimedRowDiff) int { return strings.Compare(string(a.Row), string(b.Row)) })
	return out
}

func (s *subscription) Close() {
	s.f.mu.Lock()
	s.closed = true
	s.f.mu.Unlock()
}

// SystemParameter implements sql.Backend.
func (f *Fake) SystemParameter(_ context.Context, name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.params[strings.ToLower(name)]
	if !ok {
		return "", sqlerr.Errorf(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	return v, nil
}

// SetSystemParameter implements sql.Backend.
func (f *Fake) SetSystemParameter(_ context.Context, name, value string, reset bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	name = strings.ToLower(name)
	def, ok := DefaultParams()[name]
	if !ok {
		return sqlerr.Errorf(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	if reset {
		f.params[name] = def
		return nil
	}
	switch name {
	case "enable_compute_interactive_dataflows":
		switch strings.ToLower(value) {
		case "on", "true":
			value = "on"
		case "off", "false":
			value = "off"
		default:
			return sqlerr.Errorf(sqlerr.InvalidParameterValue, "parameter %q requires a Boolean value", name)
		}
	case "max_result_size", "max_connections", "max_query_memory":
		if _, err := strconv.ParseUint(value, 10, 64); err != nil {
			return sqlerr.Errorf(sqlerr.InvalidParameterValue, "parameter %q requires an integer value", name)
		}
	}
	f.params[name] = value
	return nil
}

// SystemParameterNames implements sql.Backend.
func (f *Fake) SystemParameterNames(context.Context) []string {
	var out []string
	for n := range DefaultParams() {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Clusters implements sql.Backend.
func (f *Fake) Clusters(context.Context) ([]sql.Cluster, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]sql.Cluster, len(f.clusters))
	for i, c := range f.clusters {
		out[i] = sql.Cluster{Name: c.Name, Replicas: slices.Clone(c.Replicas)}
	}
	return out, nil
}

// CreateCluster implements sql.Backend.
func (f *Fake) CreateCluster(_ context.Context, name string, replicas []sql.ReplicaSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.checkCluster(name) == nil {
		return sqlerr.Errorf(sqlerr.DuplicateObject, "cluster %q already exists", name)
	}
	c := sql.Cluster{Name: name}
	for _, r := range replicas {
		c.Replicas = append(c.Replicas, replica(r))
	}
	f.clusters = append(f.clusters, c)
	return nil
}

func replica(r sql.ReplicaSpec) sql.Replica {
	p, w := r.Processes, r.Workers
	if p == 0 {
		p = 1
	}
	if w == 0 {
		w = 1
	}
	return sql.Replica{Name: r.Name, Size: r.Size, Processes: p, Workers: w, Status: "ready"}
}

// DropCluster implements sql.Backend.
func (f *Fake) DropCluster(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, it := range f.items {
		if it.Cluster == name && (it.Kind == sql.KindIndex || it.Kind == sql.KindMaterializedView) {
			return fmt.Errorf("drop cluster %s: %s still runs there", name, it.Name)
		}
	}
	i := slices.IndexFunc(f.clusters, func(c sql.Cluster) bool { return c.Name == name })
	if i < 0 {
		return sqlerr.Errorf(sqlerr.UndefinedObject, "unknown cluster %q", name)
	}
	f.clusters = slices.Delete(f.clusters, i, i+1)
	return nil
}

// CreateReplica implements sql.Backend.
func (f *Fake) CreateReplica(_ context.Context, cluster string, spec sql.ReplicaSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.clusters {
		if f.clusters[i].Name == cluster {
			f.clusters[i].Replicas = append(f.clusters[i].Replicas, replica(spec))
			return nil
		}
	}
	return sqlerr.Errorf(sqlerr.UndefinedObject, "unknown cluster %q", cluster)
}

// DropReplica implements sql.Backend.
func (f *Fake) DropReplica(_ context.Context, cluster, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.clusters {
		c := &f.clusters[i]
		if c.Name != cluster {
			continue
		}
		j := slices.IndexFunc(c.Replicas, func(r sql.Replica) bool { return r.Name == name })
		if j < 0 {
			break
		}
		c.Replicas = slices.Delete(c.Replicas, j, j+1)
		return nil
	}
	return sqlerr.Errorf(sqlerr.UndefinedObject, "unknown cluster replica %q", cluster+"."+name)
}
