package process

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"

	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// fakeBinary is the fake replica built once for the package's tests.
var fakeBinary string

func TestMain(m *testing.M) {
	if os.Getenv("ORCH_HELPER_CONTROLLER") != "" {
		helperController()
		return
	}
	dir, err := os.MkdirTemp("", "fakereplica")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeBinary = filepath.Join(dir, "fakereplica")
	build := exec.Command("go", "build", "-o", fakeBinary, "./testdata/fakereplica")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build fake replica:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// helperController plays a controller that ensures a replica, prints the
// pids of its processes and grandchildren, and waits to be killed.
func helperController() {
	o, err := New(Config{ReplicaBinary: os.Getenv("ORCH_HELPER_BINARY"), Log: logr.Discard()})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	id := orchestrator.ReplicaID{Cluster: "c", Replica: "r"}
	if err := o.EnsureReplica(context.Background(), orchestrator.ReplicaConfig{ID: id, Processes: 2, Workers: 1}); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	st, err := waitRunning(o, id, 10*time.Second)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	for _, p := range st.Processes {
		pid, _, grandchild, err := dialPID(p.ComputeCtlAddr)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Println("pids", pid, grandchild)
	}
	fmt.Println("ready")
	time.Sleep(time.Minute)
}

func waitRunning(o *Orchestrator, id orchestrator.ReplicaID, timeout time.Duration) (orchestrator.ReplicaStatus, error) {
	deadline := time.Now().Add(timeout)
	for {
		st, err := o.Status(context.Background(), id)
		if err != nil {
			return st, err
		}
		ok := true
		for _, p := range st.Processes {
			if p.State != orchestrator.ProcessRunning {
				ok = false
			} else if _, _, _, err := dialPID(p.ComputeCtlAddr); err != nil {
				ok = false
			}
		}
		if ok {
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("replica %s not running after %v: %+v", id, timeout, st.Processes)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// dialPID reads "pid process grandchild" from a fake replica.
func dialPID(addr string) (pid, process, grandchild int, err error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0, 0, 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return 0, 0, 0, err
	}
	_, err = fmt.Sscanf(line, "%d %d %d", &pid, &process, &grandchild)
	return pid, process, grandchild, err
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil {
		return false
	}
	// A zombie still accepts signal 0; treat it as dead.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	fields := strings.Fields(string(b))
	return len(fields) < 3 || fields[2] != "Z"
}

func waitDead(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still alive", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func newOrch(t *testing.T, cfg Config) *Orchestrator {
	t.Helper()
	if cfg.ReplicaBinary == "" {
		cfg.ReplicaBinary = fakeBinary
	}
	cfg.Log = testr.New(t)
	o, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

func TestEnsureStatusRemove(t *testing.T) {
	o := newOrch(t, Config{})
	id := orchestrator.ReplicaID{Cluster: "default", Replica: "r1"}
	ctx := context.Background()
	if err := o.EnsureReplica(ctx, orchestrator.ReplicaConfig{ID: id, Processes: 2, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	st, err := waitRunning(o, id, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for i, p := range st.Processes {
		pid, proc, grandchild, err := dialPID(p.ComputeCtlAddr)
		if err != nil {
			t.Fatal(err)
		}
		if pid != p.PID || proc != i {
			t.Fatalf("process %d: status pid %d, served pid %d process %d", i, p.PID, pid, proc)
		}
		pids = append(pids, pid, grandchild)
	}
	ids, _ := o.ListReplicas(ctx)
	if len(ids) != 1 || ids[0] != id {
		t.Fatalf("list = %v", ids)
	}
	if err := o.RemoveReplica(ctx, id); err != nil {
		t.Fatal(err)
	}
	// The grandchildren die too: the whole process group is signalled.
	waitDead(t, pids...)
	if _, err := o.Status(ctx, id); !errors.Is(err, orchestrator.ErrNotFound) {
		t.Fatalf("status after remove: %v", err)
	}
}

func TestRestartOnCrashKeepsAddress(t *testing.T) {
	o := newOrch(t, Config{MinBackoff: 10 * time.Millisecond})
	id := orchestrator.ReplicaID{Cluster: "default", Replica: "r1"}
	old := startAndCrash(t, o, id)
	var st orchestrator.ReplicaStatus
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err = waitRunning(o, id, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if st.Processes[0].PID != old.PID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("process was not restarted")
		}
		time.Sleep(20 * time.Millisecond)
	}
	p := st.Processes[0]
	if p.Restarts != 1 || p.LastExit == "" {
		t.Fatalf("restarts=%d lastExit=%q", p.Restarts, p.LastExit)
	}
	if p.ComputeCtlAddr != old.ComputeCtlAddr {
		t.Fatalf("address changed across restart: %s -> %s", old.ComputeCtlAddr, p.ComputeCtlAddr)
	}
}

// startAndCrash ensures a one-process replica, waits until it runs, and
// kills its process as a crash would; it returns the process's status
// before the crash.
func startAndCrash(t *testing.T, o *Orchestrator, id orchestrator.ReplicaID) orchestrator.ProcessStatus {
	t.Helper()
	if err := o.EnsureReplica(context.Background(), orchestrator.ReplicaConfig{ID: id, Processes: 1, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	st, err := waitRunning(o, id, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	old := st.Processes[0]
	_, _, grandchild, err := dialPID(old.ComputeCtlAddr)
	if err != nil {
		t.Fatal(err)
	}
	// A crash kills only the replica; its grandchild is the test's to reap.
	t.Cleanup(func() { _ = syscall.Kill(grandchild, syscall.SIGKILL) })
	if err := syscall.Kill(old.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	return old
}

// TestRestartRepicksTakenPort: a port another program took while the
// process was down would fail every restart; the orchestrator moves the
// process to fresh ports instead of crash-looping on the old one.
func TestRestartRepicksTakenPort(t *testing.T) {
	// The backoff leaves the test time to take the port before the restart.
	o := newOrch(t, Config{MinBackoff: 2 * time.Second})
	id := orchestrator.ReplicaID{Cluster: "default", Replica: "r1"}
	old := startAndCrash(t, o, id)
	var st orchestrator.ReplicaStatus
	var err error
	// Take the port as soon as the dead process released it.
	var taken net.Listener
	deadline := time.Now().Add(30 * time.Second)
	for taken == nil { // the port is free once the kernel reaped the process
		if taken, err = net.Listen("tcp", old.ComputeCtlAddr); err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("port %s never released: %v", old.ComputeCtlAddr, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	defer taken.Close()
	for {
		st, err = o.Status(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		p := st.Processes[0]
		if p.State == orchestrator.ProcessRunning && p.PID != old.PID && p.ComputeCtlAddr != old.ComputeCtlAddr {
			if _, _, _, err := dialPID(p.ComputeCtlAddr); err == nil {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("process not restarted on fresh ports: %+v", p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestEnsureIsIdempotentAndReplacesOnChange(t *testing.T) {
	o := newOrch(t, Config{})
	ctx := context.Background()
	id := orchestrator.ReplicaID{Cluster: "c", Replica: "r"}
	cfg := orchestrator.ReplicaConfig{ID: id, Processes: 1, Workers: 1}
	if err := o.EnsureReplica(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	st1, err := waitRunning(o, id, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.EnsureReplica(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	st2, err := waitRunning(o, id, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if st1.Processes[0].PID != st2.Processes[0].PID {
		t.Fatal("ensure with the same config restarted the process")
	}
	cfg.Workers = 2
	cfg.Interactive = true
	if err := o.EnsureReplica(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	st3, err := waitRunning(o, id, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if st3.Processes[0].PID == st1.Processes[0].PID || st3.Config.Workers != 2 {
		t.Fatalf("config change did not replace the process: %+v", st3)
	}
	waitDead(t, st1.Processes[0].PID)
}

func TestCrashLoopBacksOff(t *testing.T) {
	o := newOrch(t, Config{MinBackoff: 50 * time.Millisecond, Env: []string{"FAKE_EXIT_IMMEDIATELY=1"}})
	id := orchestrator.ReplicaID{Cluster: "c", Replica: "r"}
	start := time.Now()
	if err := o.EnsureReplica(context.Background(), orchestrator.ReplicaConfig{ID: id, Processes: 1, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	// Five exits are separated by four backoff waits of 50+100+200+400 ms,
	// so they cannot be seen before 750 ms however fast the process
	// starts; without (growing) backoff a crash loop gets there in a few
	// process starts. The bound is a lower one only: a loaded machine
	// makes every start slower, which never makes the test fail.
	const restarts, minWait = 5, 750 * time.Millisecond
	deadline := time.Now().Add(60 * time.Second)
	var st orchestrator.ReplicaStatus
	for {
		var err error
		st, err = o.Status(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if st.Processes[0].Restarts >= restarts {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d restarts in 60s", st.Processes[0].Restarts)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if elapsed := time.Since(start); elapsed < minWait {
		t.Fatalf("%d restarts after %v, want at least %v of exponential backoff", st.Processes[0].Restarts, elapsed, minWait)
	}
	if !strings.Contains(st.Processes[0].LastExit, "exit status 3") {
		t.Fatalf("last exit = %q", st.Processes[0].LastExit)
	}
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	o := newOrch(t, Config{StopGrace: 200 * time.Millisecond, Env: []string{"FAKE_IGNORE_TERM=1"}})
	id := orchestrator.ReplicaID{Cluster: "c", Replica: "r"}
	if err := o.EnsureReplica(context.Background(), orchestrator.ReplicaConfig{ID: id, Processes: 1, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	st, err := waitRunning(o, id, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 200*time.Millisecond {
		t.Fatal("close did not wait for the grace period")
	}
	waitDead(t, st.Processes[0].PID)
}

// TestNoOrphansWhenControllerIsKilled kills -9 a controller process that
// runs the orchestrator: its replicas must die with it (Pdeathsig).
func TestNoOrphansWhenControllerIsKilled(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "ORCH_HELPER_CONTROLLER=1", "ORCH_HELPER_BINARY="+fakeBinary)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var replicaPIDs []int
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if line == "ready" {
			break
		}
		var pid, grandchild int
		if _, err := fmt.Sscanf(line, "pids %d %d", &pid, &grandchild); err == nil {
			replicaPIDs = append(replicaPIDs, pid)
			t.Cleanup(func() { _ = syscall.Kill(grandchild, syscall.SIGKILL) })
			continue
		}
		t.Fatalf("helper: %s", line)
	}
	if len(replicaPIDs) != 2 {
		t.Fatalf("helper reported %d replica processes", len(replicaPIDs))
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitDead(t, replicaPIDs...)
}

func TestValidate(t *testing.T) {
	tests := []struct {
		cfg  orchestrator.ReplicaConfig
		want bool
	}{
		{orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "c", Replica: "r"}, Processes: 1, Workers: 1}, true},
		{orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "c"}, Processes: 1, Workers: 1}, false},
		{orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "c", Replica: "r"}, Processes: 0, Workers: 1}, false},
		{orchestrator.ReplicaConfig{ID: orchestrator.ReplicaID{Cluster: "c", Replica: "r"}, Processes: 1, Workers: 0}, false},
	}
	for _, tt := range tests {
		if got := tt.cfg.Validate() == nil; got != tt.want {
			t.Errorf("Validate(%+v) ok=%v, want %v", tt.cfg, got, tt.want)
		}
	}
}
