package controller_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/controller/testparams"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/orchestrator"
	"github.com/tandemdb/tandem/pkg/orchestrator/process"
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

// realReplica builds cmd/replica once per test binary.
func realReplica(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("real replica processes: skipped with -short")
	}
	replicaOnce.Do(buildReplica)
	if replicaErr != nil {
		t.Fatal(replicaErr)
	}
	return replicaBin
}

func buildReplica() {
	// `make test` builds the replica once for every package that runs it
	// and names the directory in TANDEM_TEST_BIN_DIR.
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
	out, err := exec.Command("go", "build", "-o", replicaBin, "../../../cmd/replica").CombinedOutput()
	if err != nil {
		replicaErr = fmt.Errorf("build replica: %v\n%s", err, out)
	}
}

// kvIndex is a maintained index on a KEY VALUE load generator with keys
// rows, keyed by key. start is fixed so every replica generates the same
// data.
func kvIndex(id, source uint64, keys int, start frontier.Time) controller.Dataflow {
	d := &plan.DataflowDescription{
		ID: plan.User(id), DebugName: "kv index", Class: plan.ClassMaintained, Until: frontier.Closed(),
		SourceImports: []plan.SourceImport{{
			ID: plan.User(source),
			Desc: row.NewRelationDesc([]string{"key", "partition", "value"},
				[]row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeInt64}, {Type: row.TypeBytes}}),
			Connection: plan.SourceConnection{Kind: plan.SourceLoadGen, Options: map[string]string{
				"generator": "KEY VALUE", "keys": strconv.Itoa(keys), "tick_ms": "100",
				"start": strconv.FormatUint(uint64(start), 10), "updates_per_tick": "10",
			}},
		}},
		IndexExports: []plan.IndexExport{{ID: plan.User(id), On: plan.User(source), Key: []expr.Expr{expr.Column(0)}}},
	}
	df, err := controller.FromPlan(d)
	if err != nil {
		panic(err)
	}
	return df
}

type realEnv struct {
	t    *testing.T
	orch *process.Orchestrator
	ctl  *controller.Controller
	logs string
}

func newRealEnv(t *testing.T, orch *process.Orchestrator, opts ...func(*controller.Config)) *realEnv {
	t.Helper()
	e := &realEnv{t: t, orch: orch}
	if orch == nil {
		e.logs = t.TempDir()
		t.Cleanup(func() { dumpReplicaLogs(t, e.logs) })
		o, err := process.New(process.Config{ReplicaBinary: realReplica(t), Log: testr.New(t).WithName("orch"),
			LogDir: e.logs, MinBackoff: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { o.Close() })
		e.orch = o
	}
	cfg := controller.Config{Log: testr.New(t).WithName("ctl"), Orchestrator: e.orch, ReadPolicyLag: 500 * time.Millisecond,
		Parameters: testparams.Parameters(t)}
	for _, o := range opts {
		o(&cfg)
	}
	e.ctl = controller.New(cfg)
	e.ctl.Start()
	t.Cleanup(e.ctl.Close)
	if err := e.ctl.CreateCluster("default"); err != nil {
		t.Fatal(err)
	}
	return e
}

// dumpReplicaLogs shows the tail of each replica log of a failed test:
// the replicas' own errors are not in the test's output otherwise.
func dumpReplicaLogs(t *testing.T, dir string) {
	if !t.Failed() {
		return
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		t.Logf("%s (last lines):\n%s", filepath.Base(f), b)
	}
}

func (e *realEnv) replica(name string, processes, workers int) orchestrator.ReplicaConfig {
	e.t.Helper()
	cfg := orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "default", Replica: name}, Processes: processes, Workers: workers, LogLevel: "info",
		Interactive: testparams.Interactive(e.t)}
	if err := e.ctl.CreateReplica(context.Background(), cfg); err != nil {
		e.t.Fatal(err)
	}
	return cfg
}

func (e *realEnv) replicaStatus(name string) controller.ReplicaStatus {
	for _, cl := range e.ctl.Status().Clusters {
		for _, r := range cl.Replicas {
			if r.Name == name {
				return r
			}
		}
	}
	return controller.ReplicaStatus{}
}

func (e *realEnv) waitFor(what string, timeout time.Duration, cond func() bool) time.Duration {
	e.t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			e.t.Fatalf("timed out after %v waiting for %s; status %+v", timeout, what, e.ctl.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

func (e *realEnv) hydrated(replica string, id plan.GlobalID) bool {
	r := e.replicaStatus(replica)
	return r.Connected && slices.Contains(r.Hydrated, id)
}

func (e *realEnv) pid(replica string, proc int) int {
	st, err := e.orch.Status(context.Background(), orchestrator.ReplicaID{Cluster: "default", Replica: replica})
	if err != nil {
		e.t.Fatal(err)
	}
	return st.Processes[proc].PID
}

// TestKilledReplicaRehydratesWhileAnotherAnswers kills a replica during
// hydration: the orchestrator restarts it, the controller replays the
// history to it, it hydrates again, and the other replica answers reads
// throughout. r2 hydrates before r1 exists: had both started hydrating
// together, the restarted r1 could finish before r2 on a loaded machine
// and answer every read (it did, 1 run in 4, with the interactive runtime
// on and off).
func TestKilledReplicaRehydratesWhileAnotherAnswers(t *testing.T) {
	e := newRealEnv(t, nil)
	e.replica("r2", 1, 2)
	const keys = 200000
	// Tick 1 (the snapshot) lies before the dataflow's as_of.
	start := frontier.Time(time.Now().UnixMilli()) - 1000
	if _, err := e.ctl.CreateDataflow("default", kvIndex(1, 100, keys, start)); err != nil {
		t.Fatal(err)
	}
	e.waitFor("r2 hydrated", 90*time.Second, func() bool { return e.hydrated("r2", plan.User(1)) })
	e.replica("r1", 1, 2)
	e.waitFor("r1 connected", 30*time.Second, func() bool { return e.replicaStatus("r1").Connected })
	oldPID, oldEpoch := e.pid("r1", 0), e.replicaStatus("r1").Epoch
	if e.hydrated("r1", plan.User(1)) {
		t.Log("r1 hydrated before the kill; the kill still exercises rehydration")
	}
	if err := syscall.Kill(oldPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()

	// Reads succeed meanwhile, answered by r2, and the collection's write
	// frontier never moves back although r1 restarts from scratch.
	var answeredBy []string
	lastWrite := frontier.Minimum()
	for !e.hydrated("r1", plan.User(1)) || e.replicaStatus("r1").Epoch == oldEpoch {
		for _, c := range e.ctl.Status().Collections {
			if c.ID == plan.User(1) {
				w, err := frontier.Parse(c.Write)
				if err != nil {
					t.Fatal(err)
				}
				if w.Less(lastWrite) {
					t.Fatalf("u1 write frontier regressed from %v to %v", lastWrite, w)
				}
				lastWrite = w
			}
		}
		if time.Since(killed) > 90*time.Second {
			t.Fatalf("r1 did not rehydrate: %+v", e.replicaStatus("r1"))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := e.ctl.Peek(ctx, controller.PeekRequest{Cluster: "default", Target: plan.User(1), LiteralKeys: [][]byte{row.Pack(row.Int64(42))}})
		cancel()
		if err != nil {
			t.Fatalf("read during r1's outage: %v", err)
		}
		if len(res.Rows) != 1 {
			t.Fatalf("read of key 42 returned %d rows", len(res.Rows))
		}
		answeredBy = append(answeredBy, res.Replica)
		time.Sleep(50 * time.Millisecond)
	}
	rehydrated := time.Since(killed)
	if !slices.Contains(answeredBy, "r2") {
		t.Fatalf("no read answered by r2 while r1 was down: %v", answeredBy)
	}
	st, _ := e.orch.Status(context.Background(), orchestrator.ReplicaID{Cluster: "default", Replica: "r1"})
	if st.Processes[0].Restarts < 1 || st.Processes[0].PID == oldPID {
		t.Fatalf("r1 was not restarted: %+v", st.Processes[0])
	}
	// A full read agrees on both replicas' data.
	res, err := e.ctl.Peek(context.Background(), controller.PeekRequest{Cluster: "default", Target: plan.User(1)})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, r := range res.Rows {
		n += r.Count
	}
	if n != keys {
		t.Fatalf("full read: %d rows, want %d", n, keys)
	}
	t.Logf("r1 killed during hydration, restarted (epoch %d -> %d) and rehydrated %d keys in %v; %d reads meanwhile, answered by %v",
		oldEpoch, e.replicaStatus("r1").Epoch, keys, rehydrated.Round(time.Millisecond), len(answeredBy), countBy(answeredBy))
}

func countBy(xs []string) map[string]int {
	m := map[string]int{}
	for _, x := range xs {
		m[x]++
	}
	return m
}

// TestControllerRestartReusesDataflows replaces the controller while the
// replicas keep running (the orchestrator outlives it, as Kubernetes
// replicas would): the new controller re-creates the same dataflows from
// its catalog, the replicas reconcile, and they reuse instead of
// rebuilding. Frontiers seen by the new controller do not regress below
// what readers were given before.
func TestControllerRestartReusesDataflows(t *testing.T) {
	e := newRealEnv(t, nil)
	cfg := e.replica("r1", 2, 1)
	// Tick 1 (the snapshot) lies before the dataflow's as_of.
	start := frontier.Time(time.Now().UnixMilli()) - 1000
	const dataflows = 3
	for i := range dataflows {
		if _, err := e.ctl.CreateDataflow("default", kvIndex(uint64(1+i), uint64(100+i), 20000, start)); err != nil {
			t.Fatal(err)
		}
	}
	e.waitFor("hydrated", 60*time.Second, func() bool {
		for i := range dataflows {
			if !e.hydrated("r1", plan.User(uint64(1+i))) {
				return false
			}
		}
		return true
	})
	res, err := e.ctl.Peek(context.Background(), controller.PeekRequest{Cluster: "default", Target: plan.User(1)})
	if err != nil {
		t.Fatal(err)
	}
	readBefore := res.Timestamp
	before := reconciled(t, e, "r1")
	e.ctl.Close()

	// The new controller: same orchestrator, same dataflows.
	e2 := newRealEnv(t, e.orch)
	for i := range dataflows {
		if _, err := e2.ctl.CreateDataflow("default", kvIndex(uint64(1+i), uint64(100+i), 20000, start)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e2.ctl.CreateReplica(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	took := e2.waitFor("hydrated after restart", 60*time.Second, func() bool {
		for i := range dataflows {
			if !e2.hydrated("r1", plan.User(uint64(1+i))) {
				return false
			}
		}
		return true
	})
	res, err = e2.ctl.Peek(context.Background(), controller.PeekRequest{Cluster: "default", Target: plan.User(1)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Timestamp < readBefore {
		t.Fatalf("read after restart at %d, before the restart at %d: time went backwards", res.Timestamp, readBefore)
	}
	after := reconciled(t, e, "r1")
	reused := after["reused"] - before["reused"]
	rebuilt := after["replaced"] - before["replaced"]
	t.Logf("controller restart: %v dataflows (over 2 processes) reused, %v replaced; hydrated again %v after reconnecting", reused, rebuilt, took.Round(time.Millisecond))
	if reused != 2*dataflows || rebuilt != 0 {
		t.Fatalf("reconciliation reused %v and replaced %v, want %d reused and none replaced", reused, rebuilt, 2*dataflows)
	}
}

// reconciled sums a replica's reconciliation counters over its processes
// (tandem_compute_reconciliation_dataflows_total, from internal-http).
func reconciled(t *testing.T, e *realEnv, replica string) map[string]float64 {
	t.Helper()
	st, err := e.orch.Status(context.Background(), orchestrator.ReplicaID{Cluster: "default", Replica: replica})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, p := range st.Processes {
		resp, err := http.Get("http://" + p.InternalHTTPAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "tandem_compute_reconciliation_dataflows_total{") {
				continue
			}
			for _, o := range []string{"reused", "replaced", "dropped"} {
				if strings.Contains(line, `"`+o+`"`) {
					f := strings.Fields(line)
					v, _ := strconv.ParseFloat(f[len(f)-1], 64)
					out[o] += v
				}
			}
		}
		resp.Body.Close()
	}
	return out
}
