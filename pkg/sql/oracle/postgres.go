package oracle

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNoPostgres is returned when no PostgreSQL binaries are installed.
var ErrNoPostgres = errors.New("no PostgreSQL installation found (run hack/postgres.sh)")

// FindPostgres returns the directory holding initdb and postgres.
func FindPostgres() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", ErrNoPostgres
}

// Postgres is a throwaway PostgreSQL server on loopback.
type Postgres struct {
	Port int
	dir  string
	cmd  *exec.Cmd
}

// Pid is the postmaster's process id (benchmarks read its CPU time).
func (p *Postgres) Pid() int { return p.cmd.Process.Pid }

// asServerUser makes cmd run as the "postgres" user when the caller is
// root, since PostgreSQL refuses to run as root.
func asServerUser(cmd *exec.Cmd) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root needs a postgres user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	return nil
}

// FreePort returns a loopback TCP port free at the time of the call.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// StartPostgres initialises a cluster in a fresh directory under
// parentDir and starts a server listening only on 127.0.0.1, with trust
// authentication for the user "postgres".
func StartPostgres(ctx context.Context, parentDir string) (*Postgres, error) {
	bin, err := FindPostgres()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(parentDir, "pg")
	if err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root needs a postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		// The server user must be able to reach and own its directory.
		for d := dir; d != filepath.Dir(d) && d != os.TempDir(); d = filepath.Dir(d) {
			_ = os.Chmod(d, 0o755)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync", "--locale=C")
	if err := asServerUser(initdb); err != nil {
		return nil, err
	}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "shared_buffers=16MB", "-c", "max_connections=20",
		"-c", "TimeZone=UTC",
		// No JIT: without statistics, joins of small tables are estimated
		// dear enough to be compiled, which takes seconds and changes no answer.
		"-c", "jit=off")
	if err := asServerUser(cmd); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	p := &Postgres{Port: port, dir: dir, cmd: cmd}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := p.Connect(ctx, "postgres")
		if err == nil {
			c.Close(ctx)
			return p, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.Stop()
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			return nil, fmt.Errorf("postgres did not come up: %w\n%s", err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Connect opens a connection to database db.
func (p *Postgres) Connect(ctx context.Context, db string) (*pgx.Conn, error) {
	return pgx.Connect(ctx, fmt.Sprintf("host=127.0.0.1 port=%d user=postgres database=%s sslmode=disable", p.Port, db))
}

// Stop shuts the server down (fast shutdown) and waits for it.
func (p *Postgres) Stop() {
	if p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		_ = p.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}
