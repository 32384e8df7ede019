package environment

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/controller/testparams"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/orchestrator"
	"github.com/tandemdb/tandem/pkg/orchestrator/process"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
	"github.com/tandemdb/tandem/pkg/storage"
)

var (
	replicaOnce sync.Once
	replicaBin  string
	replicaErr  error
	// replicaShared: replicaBin is TANDEM_TEST_BIN_DIR's, not this run's.
	replicaShared bool
)

// TestMain removes the replica binary built by the tests that need one.
func TestMain(m *testing.M) {
	code := m.Run()
	if replicaBin != "" && !replicaShared {
		os.RemoveAll(filepath.Dir(replicaBin))
	}
	os.Exit(code)
}

func realReplica(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("real replica processes: skipped with -short")
	}
	replicaOnce.Do(func() {
		// `make test` builds the replica once for every package that runs
		// it and names the directory in TANDEM_TEST_BIN_DIR.
		if dir := os.Getenv("TANDEM_TEST_BIN_DIR"); dir != "" {
			replicaBin, replicaShared = filepath.Join(dir, "replica"), true
			if _, err := os.Stat(replicaBin); err != nil {
				replicaErr = fmt.Errorf("TANDEM_TEST_BIN_DIR: %w", err)
			}
			return
		}
		dir, err := os.MkdirTemp("", "tandem-replica")
		if err != nil {
			replicaErr = err
			return
		}
		replicaBin = filepath.Join(dir, "replica")
		if out, err := exec.Command("go", "build", "-o", replicaBin, "../../cmd/replica").CombinedOutput(); err != nil {
			replicaErr = fmt.Errorf("build replica: %v\n%s", err, out)
		}
	})
	if replicaErr != nil {
		t.Fatal(replicaErr)
	}
	return replicaBin
}

// stack is one incarnation of the controller's parts over a data dir.
type stack struct {
	env   *Environment
	cat   *catalog.Catalog
	store *storage.Store
	ctl   *controller.Controller
	orch  *process.Orchestrator
}

func openStack(t *testing.T, dir string) *stack {
	t.Helper()
	s := &stack{}
	var err error
	if s.cat, err = catalog.Open(dir); err != nil {
		t.Fatal(err)
	}
	if s.store, err = storage.Open(filepath.Join(dir, "storage"), storage.Options{}); err != nil {
		t.Fatal(err)
	}
	if s.orch, err = process.New(process.Config{ReplicaBinary: realReplica(t), Log: testr.New(t), LogDir: filepath.Join(dir, "logs")}); err != nil {
		t.Fatal(err)
	}
	s.ctl = controller.New(controller.Config{Log: testr.New(t), Orchestrator: s.orch, Storage: s.store, Oracle: s.store.Oracle()})
	s.ctl.Start()
	if s.env, err = Open(context.Background(), Config{Log: testr.New(t), Catalog: s.cat, Storage: s.store, Compute: s.ctl,
		ParamDefaults: testparams.Parameters(t)}); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *stack) close() {
	s.ctl.Close()
	s.orch.Close()
	s.store.Close()
	s.cat.Close()
}

func orchestratorID(replica string) orchestrator.ReplicaID {
	return orchestrator.ReplicaID{Cluster: DefaultCluster, Replica: replica}
}

func itemNames(items []sql.Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, fmt.Sprintf("%s:%s:%s", it.ID, it.Kind, it.Name))
	}
	return out
}

// peekIndex reads an index until it returns rows: a load generator's
// snapshot lands at its first tick, so a read at an earlier time is
// rightly empty.
func peekIndex(t *testing.T, env *Environment, id plan.GlobalID, keys ...row.Row) []sql.RowDiff {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		pr, err := env.Peek(ctx, sql.PeekRequest{Cluster: DefaultCluster, Index: &sql.IndexPeek{Index: id, Keys: keys}, Isolation: sql.IsolationSerializable})
		cancel()
		if err != nil {
			t.Fatalf("peek %s: %v", id, err)
		}
		rows, err := sql.CollectRows(pr)
		if err != nil {
			t.Fatalf("peek %s: %v", id, err)
		}
		if len(rows) > 0 || time.Now().After(deadline) {
			return rows
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRestartRecoversCatalogTablesAndIndexes(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := openStack(t, dir)
	src, err := s.env.CreateSource(ctx, sql.SourceSpec{Name: "kv", Generator: "KEY VALUE", Options: map[string]string{"KEYS": "500", "TICK INTERVAL": "50ms"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(src) != 1 || src[0].Desc.Arity() != 3 {
		t.Fatalf("source items %+v", src)
	}
	get := plan.NewGet(src[0].ID)
	idx, err := s.env.CreateItem(ctx, sql.Item{Name: "kv_idx", Kind: sql.KindIndex, Desc: src[0].Desc, Cluster: DefaultCluster,
		On: src[0].ID, Keys: []expr.Expr{expr.Column(0)}, Plan: &get, DependsOn: []plan.GlobalID{src[0].ID}})
	if err != nil {
		t.Fatal(err)
	}
	desc := row.NewRelationDesc([]string{"a"}, []row.ColumnType{{Type: row.TypeInt64}})
	tbl, err := s.env.CreateItem(ctx, sql.Item{Name: "t", Kind: sql.KindTable, Desc: desc})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.env.WriteTables(ctx, []sql.TableWrite{{Table: tbl.ID, Updates: []sql.RowDiff{{Row: row.Pack(row.Int64(7)), Diff: 2}}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.env.CreateCluster(ctx, "other", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.env.CreateItem(ctx, sql.Item{Name: "t", Kind: sql.KindTable, Desc: desc}); sqlerr.Code(err) != sqlerr.DuplicateObject {
		t.Fatalf("duplicate name: %v", err)
	}
	rows := peekIndex(t, s.env, idx.ID, row.Pack(row.Int64(3)))
	if len(rows) != 1 || rows[0].Diff != 1 {
		t.Fatalf("index read before restart: %+v", rows)
	}
	before, _ := s.env.Items(ctx)
	s.close()

	s = openStack(t, dir)
	defer s.close()
	after, err := s.env.Items(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(itemNames(before), itemNames(after)) {
		t.Fatalf("items after restart %v, before %v", itemNames(after), itemNames(before))
	}
	cls, _ := s.env.Clusters(ctx)
	if len(cls) != 2 || cls[0].Name != DefaultCluster || len(cls[0].Replicas) != 1 || cls[1].Name != "other" {
		t.Fatalf("clusters after restart %+v", cls)
	}
	// The index's dataflow was re-created and answers again.
	rows = peekIndex(t, s.env, idx.ID, row.Pack(row.Int64(3)))
	if len(rows) != 1 {
		t.Fatalf("index read after restart: %+v", rows)
	}
	// The acknowledged table write is still there.
	_, upper, _ := s.store.Frontiers(tbl.ID.String())
	ut, _ := upper.Time()
	got, err := s.store.Snapshot(ctx, tbl.ID.String(), ut-1)
	if err != nil || len(got) != 1 || got[0].Diff != 2 {
		t.Fatalf("table after restart: %+v, %v", got, err)
	}
	// Ids continue after the last allocated one.
	t2, err := s.env.CreateItem(ctx, sql.Item{Name: "t2", Kind: sql.KindTable, Desc: desc})
	if err != nil || t2.ID.N <= tbl.ID.N {
		t.Fatalf("id after restart %v (last before %v), %v", t2.ID, tbl.ID, err)
	}
}

func TestSystemParametersPersistAndValidate(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := openStack(t, dir)
	// The run's TANDEM_TEST_SYSTEM_PARAMETERS reached the environment as
	// defaults of the fresh data directory (a flag-on run that ignored
	// them fails here), and the default replica was started with the
	// runtimes the flag asks for.
	if v, err := s.env.SystemParameter(ctx, controller.ParamInteractiveDataflows); err != nil || v != testparams.Expected(t) {
		t.Fatalf("%s = %q, %v; want %q (%s=%q)", controller.ParamInteractiveDataflows, v, err, testparams.Expected(t), testparams.EnvVar, testparams.Parameters(t))
	}
	checkRuntimes(t, s, DefaultReplica)
	if err := s.env.SetSystemParameter(ctx, controller.ParamInteractiveDataflows, "maybe", false); sqlerr.Code(err) != sqlerr.InvalidParameterValue {
		t.Fatalf("invalid value: %v", err)
	}
	if _, err := s.env.SystemParameter(ctx, "nope"); sqlerr.Code(err) != sqlerr.UndefinedObject {
		t.Fatalf("unknown parameter: %v", err)
	}
	s.close()

	// A restart keeps the persisted value.
	s = openStack(t, dir)
	defer s.close()
	if v, err := s.env.SystemParameter(ctx, controller.ParamInteractiveDataflows); err != nil || v != testparams.Expected(t) {
		t.Fatalf("after restart %q, %v; want %q", v, err, testparams.Expected(t))
	}
}

// checkRuntimes waits until every process of a replica of the default
// cluster serves metrics and checks that it runs the runtimes this test
// run asks for: solo, or maintenance beside interactive.
func checkRuntimes(t *testing.T, s *stack, replica string) map[string]float64 {
	t.Helper()
	want := []string{"solo"}
	if testparams.Interactive(t) {
		want = []string{"interactive", "maintenance"}
	}
	ctx := context.Background()
	total := map[string]float64{}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var err error
		st, err := s.orch.Status(ctx, orchestratorID(replica))
		ok := err == nil && len(st.Processes) > 0
		for _, p := range st.Processes {
			if !ok {
				break
			}
			var rts map[string]float64
			if rts, err = testparams.Runtimes(ctx, p.InternalHTTPAddr); err != nil {
				ok = false
				break
			}
			if got := slices.Sorted(maps.Keys(rts)); !slices.Equal(got, want) {
				t.Fatalf("replica %s process %d runs runtimes %v, want %v", replica, p.Index, got, want)
			}
			for k, v := range rts {
				total[k] += v
			}
		}
		if ok {
			return total
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s metrics not reachable: %v", replica, err)
		}
		clear(total)
		time.Sleep(50 * time.Millisecond)
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		spec sql.ReplicaSpec
		p, w int
		ok   bool
	}{
		{sql.ReplicaSpec{}, DefaultProcesses, DefaultWorkers, true},
		{sql.ReplicaSpec{Size: "4"}, 1, 4, true},
		{sql.ReplicaSpec{Size: "2x3"}, 2, 3, true},
		{sql.ReplicaSpec{Size: "2x3", Workers: 5}, 2, 5, true},
		{sql.ReplicaSpec{Size: "0"}, 0, 0, false},
		{sql.ReplicaSpec{Size: "big"}, 0, 0, false},
	}
	for _, tt := range tests {
		p, w, err := parseSize(tt.spec)
		if (err == nil) != tt.ok || (tt.ok && (p != tt.p || w != tt.w)) {
			t.Errorf("parseSize(%+v) = %d, %d, %v", tt.spec, p, w, err)
		}
	}
}

// TestSubscribeStreamsACounter subscribes to a COUNTER load generator on a
// real replica: batches arrive with advancing uppers and the counter's
// rows, and Close drops the subscribe dataflow.
func TestSubscribeStreamsACounter(t *testing.T) {
	s := openStack(t, t.TempDir())
	defer s.close()
	ctx := context.Background()
	src, err := s.env.CreateSource(ctx, sql.SourceSpec{Name: "c", Generator: "COUNTER", Options: map[string]string{"TICK INTERVAL": "20ms"}})
	if err != nil {
		t.Fatal(err)
	}
	get := plan.NewGet(src[0].ID)
	sub, err := s.env.Subscribe(ctx, sql.SubscribeRequest{Cluster: DefaultCluster, Plan: &get, Desc: src[0].Desc, Snapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	var last frontier.Time
	seen := map[int64]int64{}
	nctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for len(seen) < 10 {
		b, err := sub.Next(nctx)
		if err != nil {
			t.Fatalf("next after %d rows: %v", len(seen), err)
		}
		if b.Upper <= last {
			t.Fatalf("upper %d did not advance past %d", b.Upper, last)
		}
		for _, u := range b.Updates {
			if u.Time < last || u.Time >= b.Upper {
				t.Fatalf("update at %d outside [%d, %d)", u.Time, last, b.Upper)
			}
			d, err := u.Row.Unpack()
			if err != nil {
				t.Fatal(err)
			}
			seen[d[0].Int64()] += u.Diff
		}
		last = b.Upper
	}
	for v, n := range seen {
		if n != 1 {
			t.Fatalf("counter value %d has multiplicity %d", v, n)
		}
	}
	sub.Close()
	// The cluster's introspection indexes stay, each held by its read
	// policy.
	logging := map[plan.GlobalID]bool{}
	for _, id := range s.ctl.IntrospectionIDs(DefaultCluster) {
		logging[id] = true
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := 0
		for _, c := range s.ctl.Status().Collections {
			if c.Kind == "compute" && !logging[c.ID] {
				n++
			}
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("subscribe dataflow still present after Close: %+v", s.ctl.Status().Collections)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if holds := s.ctl.OutstandingReadHolds(); holds != len(logging) {
		t.Fatalf("%d read holds outstanding after the subscription closed, want the %d of the introspection indexes", holds, len(logging))
	}
}

// TestRecoveryRefusesALostShardAndDropsOrphans: a catalogued table whose
// shard log is gone stops recovery with an error naming it (it used to
// come back empty), and a shard no catalog item owns (a crash between
// creating a table's shard and cataloguing it) is dropped at recovery.
func TestRecoveryRefusesALostShardAndDropsOrphans(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := openStack(t, dir)
	desc := row.NewRelationDesc([]string{"a"}, []row.ColumnType{{Type: row.TypeInt64}})
	tbl, err := s.env.CreateItem(ctx, sql.Item{Name: "t", Kind: sql.KindTable, Desc: desc})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.store.CreateShard("u999"); err != nil {
		t.Fatal(err)
	}
	s.close()

	s = openStack(t, dir)
	if s.store.HasShard("u999") {
		t.Fatal("the orphan shard u999 survived recovery")
	}
	if !s.store.HasShard(tbl.ID.String()) {
		t.Fatalf("table %s lost its shard", tbl.ID)
	}
	s.close()

	if err := os.Remove(filepath.Join(dir, "storage", "shards", tbl.ID.String()+".log")); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	store, err := storage.Open(filepath.Join(dir, "storage"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	orch, err := process.New(process.Config{ReplicaBinary: realReplica(t), Log: testr.New(t), LogDir: filepath.Join(dir, "logs")})
	if err != nil {
		t.Fatal(err)
	}
	defer orch.Close()
	ctl := controller.New(controller.Config{Log: testr.New(t), Orchestrator: orch, Storage: store, Oracle: store.Oracle()})
	ctl.Start()
	defer ctl.Close()
	_, err = Open(ctx, Config{Log: testr.New(t), Catalog: cat, Storage: store, Compute: ctl, ParamDefaults: testparams.Parameters(t)})
	if !errors.Is(err, storage.ErrShardMissing) {
		t.Fatalf("recovery with table %s's log gone: %v, want ErrShardMissing", tbl.ID, err)
	}
}
