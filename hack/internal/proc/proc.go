package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// RepoRoot walks up from the working directory to the go.mod of the
// tandem module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/tandemdb/tandem\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the tandem repository (no go.mod for github.com/tandemdb/tandem above the working directory)")
		}
		dir = parent
	}
}

// Build compiles the controller and replica into binDir, from the module
// rooted at repoRoot.
func Build(ctx context.Context, repoRoot, binDir string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", binDir+string(os.PathSeparator), "./cmd/controller", "./cmd/replica")
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build ./cmd/controller ./cmd/replica: %w\n%s", err, out)
	}
	return nil
}

// Config says how to start a controller.
type Config struct {
	BinDir  string // holds controller and replica
	DataDir string // empty: a fresh temporary directory
	Keep    bool   // keep DataDir after Stop
	// ExtraArgs are appended to the controller's command line.
	ExtraArgs []string
	// Env is appended to the controller's environment, which its
	// replicas inherit (their flags read TANDEM_* variables).
	Env []string
	// StartTimeout bounds the wait for the controller to answer SQL.
	StartTimeout time.Duration
}

// Controller is a running controller process.
type Controller struct {
	PgwireAddr string
	HTTPAddr   string
	DataDir    string
	LogPath    string

	cmd      *exec.Cmd
	keep     bool
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
}

// Start launches the controller and returns once it has printed its
// addresses, /readyz answers 200 and a SQL connection succeeds. On error
// everything it started is stopped.
func Start(ctx context.Context, cfg Config) (_ *Controller, err error) {
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = time.Minute
	}
	c := &Controller{DataDir: cfg.DataDir, keep: cfg.Keep, exited: make(chan struct{})}
	if c.DataDir == "" {
		dir, err := os.MkdirTemp("", "tandem-bench-")
		if err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
		c.DataDir = dir
	}
	c.LogPath = filepath.Join(c.DataDir, "controller.log")
	logf, err := os.Create(c.LogPath)
	if err != nil {
		return nil, fmt.Errorf("controller log: %w", err)
	}
	args := append([]string{
		"--data-dir=" + c.DataDir,
		"--orchestrator=process",
		"--replica-binary=" + filepath.Join(cfg.BinDir, "replica"),
		"--pgwire-listen-addr=127.0.0.1:0",
		"--http-listen-addr=127.0.0.1:0",
		"--storage-listen-addr=127.0.0.1:0",
	}, cfg.ExtraArgs...)
	c.cmd = exec.Command(filepath.Join(cfg.BinDir, "controller"), args...)
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if len(cfg.Env) > 0 {
		c.cmd.Env = append(os.Environ(), cfg.Env...)
	}
	c.cmd.Stderr = logf
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start controller: %w", err)
	}
	go func() {
		c.waitErr = c.cmd.Wait()
		logf.Close()
		close(c.exited)
	}()
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()

	startCtx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	addrs := make(chan [2]string, 1)
	go func() { addrs <- parseBanner(stdout) }()
	select {
	case a := <-addrs:
		c.PgwireAddr, c.HTTPAddr = a[0], a[1]
	case <-c.exited:
		return nil, fmt.Errorf("controller exited during startup (%v); log %s:\n%s", c.waitErr, c.LogPath, tail(c.LogPath))
	case <-startCtx.Done():
		return nil, fmt.Errorf("controller did not print its addresses: %w; log %s:\n%s", startCtx.Err(), c.LogPath, tail(c.LogPath))
	}
	if c.PgwireAddr == "" || c.HTTPAddr == "" {
		return nil, fmt.Errorf("controller banner lacked addresses (pgwire %q, http %q)", c.PgwireAddr, c.HTTPAddr)
	}
	if err := c.waitReady(startCtx); err != nil {
		return nil, err
	}
	return c, nil
}

// parseBanner reads the controller's startup banner for its pgwire and
// HTTP addresses, then keeps draining stdout so the child never blocks.
func parseBanner(r io.Reader) [2]string {
	var a [2]string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "SQL:"); ok {
			var host, port string
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "psql -h %s -p %s", &host, &port); err == nil {
				a[0] = host + ":" + port
			}
		}
		if rest, ok := strings.CutPrefix(line, "HTTP:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				u := strings.TrimPrefix(f[0], "http://")
				a[1], _, _ = strings.Cut(u, "/")
			}
		}
		if strings.HasPrefix(line, "Press Ctrl-C") {
			break
		}
	}
	go io.Copy(io.Discard, r)
	return a
}

// waitReady polls /readyz, then pings over SQL.
func (c *Controller) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	var last error
	for {
		if resp, err := client.Get("http://" + c.HTTPAddr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			last = fmt.Errorf("/readyz answered %s", resp.Status)
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("controller not ready (%v): %w; log %s", last, ctx.Err(), c.LogPath)
		case <-c.exited:
			return fmt.Errorf("controller exited while starting (%v); log %s:\n%s", c.waitErr, c.LogPath, tail(c.LogPath))
		case <-time.After(50 * time.Millisecond):
		}
	}
	conn, err := c.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if err := conn.Ping(ctx); err != nil {
		return fmt.Errorf("ping controller: %w", err)
	}
	return nil
}

// ConnString is the pgx connection string of the controller.
func (c *Controller) ConnString() string {
	return "postgres://tandem@" + c.PgwireAddr + "/tandem?sslmode=disable"
}

// Connect opens one SQL connection. Benchmarks pre-open theirs so that
// connection setup never lands inside a measured request.
func (c *Controller) Connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, c.ConnString())
	if err != nil {
		return nil, fmt.Errorf("connect to controller at %s: %w", c.PgwireAddr, err)
	}
	return conn, nil
}

// Get fetches an HTTP path (e.g. /api/status, /metrics) from the controller.
func (c *Controller) Get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.HTTPAddr+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
	}
	return b, nil
}

// Alive reports whether the controller process is still running.
func (c *Controller) Alive() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// Stop terminates the controller's process group (SIGTERM, SIGKILL after
// 10 s) and removes the data directory unless kept. Safe to call twice.
func (c *Controller) Stop() error {
	var err error
	c.stopOnce.Do(func() {
		if c.cmd != nil && c.cmd.Process != nil {
			pgid := c.cmd.Process.Pid
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
			select {
			case <-c.exited:
			case <-time.After(10 * time.Second):
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
				<-c.exited
			}
			// Anything left in the group (it should be empty) goes too.
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		if !c.keep && c.DataDir != "" {
			err = os.RemoveAll(c.DataDir)
		}
	})
	return err
}

// tail returns the last lines of a log for error messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// ErrMissing marks a scenario that cannot run because the system under
// test lacks a feature; the message names the feature.
var ErrMissing = errors.New("feature missing from the system under test")

// Pid is the controller's process id.
func (c *Controller) Pid() int { return c.cmd.Process.Pid }

// Kill ends the controller's whole process group with SIGKILL, as a crash
// or a power cut would, and waits for the controller to be reaped. The data
// directory is kept, so a new controller can be started on it.
func (c *Controller) Kill() {
	pgid := c.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-c.exited
	c.stopOnce.Do(func() {})
}

// Children returns the process ids of the controller's child processes
// whose executable is named name (e.g. "replica"), read from /proc.
func (c *Controller) Children(name string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	parent := c.cmd.Process.Pid
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		comm, ppid, ok := parseStat(string(stat))
		if ok && ppid == parent && comm == name {
			out = append(out, pid)
		}
	}
	return out, nil
}

// parseStat reads the command name and parent pid of a /proc/PID/stat line:
// "pid (comm) state ppid ...", where comm may itself hold spaces and ")".
func parseStat(stat string) (comm string, ppid int, ok bool) {
	open, close := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || close < open {
		return "", 0, false
	}
	f := strings.Fields(stat[close+1:])
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return stat[open+1 : close], ppid, err == nil
}
