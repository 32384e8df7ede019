package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// tandemServer is a controller with its local replica fleet on a fresh
// data directory, started as hack/oracle-controller.sh starts one.
type tandemServer struct {
	cmd  *exec.Cmd
	dir  string
	cfg  *pgx.ConnConfig
	done chan struct{} // closed when the controller exits
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("pick a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startTandem starts a controller and waits until it accepts SQL
// connections. parent is where its temporary data directory goes ("" for
// the system default).
func startTandem(ctx context.Context, controller, replica, parent, logLevel string) (*tandemServer, error) {
	dir, err := os.MkdirTemp(parent, "slt-tandem-")
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	var addrs [3]string
	for i := range addrs {
		if addrs[i], err = freeAddr(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	logf, err := os.Create(filepath.Join(dir, "controller.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("controller log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(controller,
		"--data-dir", filepath.Join(dir, "data"),
		"--pgwire-listen-addr", addrs[0],
		"--http-listen-addr", addrs[1],
		"--storage-listen-addr", addrs[2],
		"--replica-binary", replica,
		"--log-level", logLevel)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The controller dies with the runner even when the runner is killed
	// outright; its replicas die with it (they have the same setting).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", controller, err)
	}
	s := &tandemServer{cmd: cmd, dir: dir, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	host, port, _ := net.SplitHostPort(addrs[0])
	s.cfg, err = pgx.ParseConfig(fmt.Sprintf("host=%s port=%s user=tandem database=tandem sslmode=disable", host, port))
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("controller address: %w", err)
	}
	// Up to a minute, as hack/oracle-controller.sh: a loaded machine can
	// take tens of seconds to start it.
	deadline := time.Now().Add(time.Minute)
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.ConnectConfig(cctx, s.cfg)
		cancel()
		if err == nil {
			_ = conn.Close(ctx)
			return s, nil
		}
		if !s.alive() || time.Now().After(deadline) || ctx.Err() != nil {
			tail := s.logTail()
			s.stop()
			return nil, fmt.Errorf("controller on %s did not come up: %w\n%s", addrs[0], err, tail)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *tandemServer) alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// logTail is the end of the controller's log, for a failure message.
func (s *tandemServer) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "controller.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}

// stop ends the controller (SIGTERM, then SIGKILL to its process group
// after 15 s) and removes its data directory.
func (s *tandemServer) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	_ = os.RemoveAll(s.dir)
}

func (s *tandemServer) String() string {
	return s.cfg.Host + ":" + strconv.Itoa(int(s.cfg.Port))
}
