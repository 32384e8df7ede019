package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/compute/controller/testparams"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/storage"
)

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// TestMain removes the binaries built by the tests that need them.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildBinaries builds controller and replica into a temp dir, once per
// test binary (each build links two large binaries: tens of seconds on a
// loaded machine).
func buildBinaries(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binaries: skipped with -short")
	}
	if dir, ok, err := prebuiltBinaries("controller", "replica"); ok || err != nil {
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "tandem-controller-e2e"); binErr != nil {
			return
		}
		if out, err := exec.Command("go", "build", "-o", binDir+"/", "../../cmd/controller", "../../cmd/replica").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binDir
}

// prebuiltBinaries returns TANDEM_TEST_BIN_DIR when it is set: `make test`
// builds cmd/controller and cmd/replica once into it for every package that
// runs them, instead of each test binary linking its own. ok is false when
// it is unset (the test builds them); an error when a named binary is
// missing from it.
func prebuiltBinaries(names ...string) (dir string, ok bool, err error) {
	dir = os.Getenv("TANDEM_TEST_BIN_DIR")
	if dir == "" {
		return "", false, nil
	}
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			return "", true, fmt.Errorf("TANDEM_TEST_BIN_DIR: %w", err)
		}
	}
	return dir, true, nil
}

type runningController struct {
	cmd        *exec.Cmd
	pgwireAddr string
	httpAddr   string
}

// startController runs the controller on free loopback ports and waits
// for its startup banner. The run's system parameters
// (TANDEM_TEST_SYSTEM_PARAMETERS, see testparams) are passed as
// --system-parameter-default before extra, so a test that sets its own
// (the hydration acceptance test's two arms) overrides them.
func startController(t *testing.T, bin, dataDir string, extra ...string) *runningController {
	t.Helper()
	args := []string{"--data-dir=" + dataDir,
		"--pgwire-listen-addr=127.0.0.1:0", "--http-listen-addr=127.0.0.1:0", "--storage-listen-addr=127.0.0.1:0"}
	args = append(append(args, testparams.Flag(t)...), extra...)
	cmd := exec.Command(filepath.Join(bin, "controller"), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dataDir, fmt.Sprintf("controller-%d.log", time.Now().UnixNano())))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); logf.Close() })
	rc := &runningController{cmd: cmd}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "SQL:"); ok {
			var host, port string
			fmt.Sscanf(strings.TrimSpace(rest), "psql -h %s -p %s", &host, &port)
			rc.pgwireAddr = host + ":" + port
		}
		if rest, ok := strings.CutPrefix(line, "HTTP:"); ok {
			rc.httpAddr = strings.TrimSuffix(strings.TrimPrefix(strings.Fields(rest)[0], "http://"), "/api/status")
		}
		if strings.HasPrefix(line, "Press Ctrl-C") {
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if rc.pgwireAddr == "" || rc.httpAddr == "" {
		t.Fatalf("controller did not print its addresses (pgwire %q, http %q)", rc.pgwireAddr, rc.httpAddr)
	}
	return rc
}

// status decodes the controller's /api/status into v (a struct naming
// the fields the caller needs).
func (rc *runningController) status(t *testing.T, v any) {
	t.Helper()
	resp, err := http.Get("http://" + rc.httpAddr + "/api/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func (rc *runningController) replicaPIDs(t *testing.T) []int {
	t.Helper()
	return rc.clusterPIDs(t, "")
}

// clusterPIDs returns the PIDs of the running replica processes of one
// cluster (every cluster's when cluster is empty).
func (rc *runningController) clusterPIDs(t *testing.T, cluster string) []int {
	t.Helper()
	var st struct {
		Orchestrator []struct {
			Cluster   string `json:"cluster"`
			Processes []struct{ PID int }
		} `json:"orchestrator"`
	}
	rc.status(t, &st)
	var pids []int
	for _, r := range st.Orchestrator {
		if cluster != "" && r.Cluster != cluster {
			continue
		}
		for _, p := range r.Processes {
			if p.PID > 0 {
				pids = append(pids, p.PID)
			}
		}
	}
	return pids
}

// TestAcknowledgedTableWritesSurviveControllerKill9 inserts rows through
// pgwire while the controller is killed with SIGKILL: every INSERT that
// was acknowledged is in the table afterwards, and the replicas died with
// the controller.
func TestAcknowledgedTableWritesSurviveControllerKill9(t *testing.T) {
	bin := buildBinaries(t)
	dataDir := t.TempDir()
	rc := startController(t, bin, dataDir)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, "postgres://tandem@"+rc.pgwireAddr+"/tandem?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE t (a bigint)"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	var pids []int
	for len(pids) == 0 && time.Now().Before(deadline) {
		pids = rc.replicaPIDs(t)
		time.Sleep(20 * time.Millisecond)
	}
	var acked atomic.Int64
	acked.Store(-1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := int64(0); ; i++ {
			if _, err := conn.Exec(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d)", i)); err != nil {
				return // the controller is gone
			}
			acked.Store(i)
		}
	}()
	// Its own deadline: 200 fsynced inserts can take a while on a loaded
	// machine, and only the count matters here, not the rate.
	for deadline := time.Now().Add(60 * time.Second); acked.Load() < 200 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if err := rc.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	_ = rc.cmd.Wait()
	last := acked.Load()
	if last < 200 {
		t.Fatalf("only %d inserts acknowledged before the kill", last+1)
	}

	// Replicas die with their controller (no orphans).
	for _, pid := range pids {
		for deadline := time.Now().Add(30 * time.Second); syscall.Kill(pid, 0) == nil && !zombie(pid); {
			if time.Now().After(deadline) {
				t.Fatalf("replica %d outlived its controller", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	cat, err := catalog.Open(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	err = cat.View(func(tx *catalog.Tx) error {
		it, err := tx.ItemByName("t")
		id = fmt.Sprintf("u%d", it.ID)
		return err
	})
	cat.Close()
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(filepath.Join(dataDir, "storage"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, upper, _ := st.Frontiers(id)
	ut, _ := upper.Time()
	got, err := st.Snapshot(ctx, id, ut-1)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, u := range got {
		d, err := row.Row(u.Row).Unpack()
		if err != nil {
			t.Fatal(err)
		}
		seen[d[0].Int64()] = true
	}
	for i := int64(0); i <= last; i++ {
		if !seen[i] {
			t.Fatalf("acknowledged insert %d lost (acknowledged 0..%d, recovered %d rows)", i, last, len(got))
		}
	}
	t.Logf("%d inserts acknowledged before kill -9; %d rows recovered", last+1, len(got))

	// The controller comes back on the same data directory.
	rc = startController(t, bin, dataDir)
	conn2, err := pgx.Connect(ctx, "postgres://tandem@"+rc.pgwireAddr+"/tandem?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close(ctx)
	if _, err := conn2.Exec(ctx, "INSERT INTO t VALUES (-1)"); err != nil {
		t.Fatalf("insert after restart: %v", err)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}
