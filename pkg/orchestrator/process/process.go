package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/orchestrator"
)

// Config configures the process orchestrator.
type Config struct {
	// ReplicaBinary is the path of the `replica` executable.
	ReplicaBinary string
	// Host is the loopback address replicas listen on; default 127.0.0.1.
	Host string
	// Log receives lifecycle events and, unless LogDir is set, the replicas'
	// output lines.
	Log logr.Logger
	// LogDir, when set, receives one log file per replica process.
	LogDir string
	// Env is appended to the controller's environment for every replica.
	Env []string
	// MinBackoff and MaxBackoff bound the restart delay (defaults 100ms, 10s).
	MinBackoff, MaxBackoff time.Duration
	// StableAfter resets the backoff once an incarnation ran this long
	// (default 10s).
	StableAfter time.Duration
	// StopGrace is how long a stopping process gets between SIGTERM and
	// SIGKILL (default 5s).
	StopGrace time.Duration
}

func (c *Config) defaults() {
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = 100 * time.Millisecond
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 10 * time.Second
	}
	if c.StableAfter <= 0 {
		c.StableAfter = 10 * time.Second
	}
	if c.StopGrace <= 0 {
		c.StopGrace = 5 * time.Second
	}
}

// Orchestrator runs replicas as local child processes. It is safe for
// concurrent use. Close must be called to stop every child.
type Orchestrator struct {
	cfg Config

	mu       sync.Mutex
	replicas map[orchestrator.ReplicaID]*replica
	closed   bool
}

var _ orchestrator.Orchestrator = (*Orchestrator)(nil)

// New returns a process orchestrator. The replica binary must exist.
func New(cfg Config) (*Orchestrator, error) {
	cfg.defaults()
	if cfg.ReplicaBinary == "" {
		return nil, errors.New("process orchestrator: replica binary is required")
	}
	if _, err := os.Stat(cfg.ReplicaBinary); err != nil {
		return nil, fmt.Errorf("process orchestrator: replica binary: %w", err)
	}
	if cfg.LogDir != "" {
		if err := os.MkdirAll(cfg.LogDir, 0o755); err != nil {
			return nil, fmt.Errorf("process orchestrator: log dir: %w", err)
		}
	}
	return &Orchestrator{cfg: cfg, replicas: map[orchestrator.ReplicaID]*replica{}}, nil
}

// replica is one ensured replica and the supervisors of its processes.
type replica struct {
	cfg    orchestrator.ReplicaConfig
	procs  []*proc
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// ports are kept across a process's restarts, so its addresses stay stable,
// unless another program took one of them meanwhile (see supervise).
type ports struct {
	computeCtl, compute, interactive, internalHTTP int
}

// proc supervises one replica process.
type proc struct {
	mu     sync.Mutex
	status orchestrator.ProcessStatus
	ports  ports
}

func (p *proc) snapshot() orchestrator.ProcessStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

func (p *proc) currentPorts() ports {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ports
}

func (p *proc) update(f func(*orchestrator.ProcessStatus)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(&p.status)
}

// EnsureReplica starts the replica, replaces it when its config changed, and
// does nothing when it already runs with cfg.
func (o *Orchestrator) EnsureReplica(ctx context.Context, cfg orchestrator.ReplicaConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.LogLevel == "" {
		cfg.LogLevel = "info"
	}
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return errors.New("process orchestrator: closed")
	}
	old, ok := o.replicas[cfg.ID]
	if ok && old.cfg == cfg {
		o.mu.Unlock()
		return nil
	}
	delete(o.replicas, cfg.ID)
	o.mu.Unlock()
	if ok {
		o.cfg.Log.Info("Replacing replica after a config change", "replica", cfg.ID.String())
		old.stop()
	}

	r, err := o.start(cfg)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		// Close raced with us: it did not see r, so stop it here.
		go r.stop()
		return errors.New("process orchestrator: closed")
	}
	if _, ok := o.replicas[cfg.ID]; ok {
		// A concurrent EnsureReplica won; keep its replica.
		go r.stop()
		return nil
	}
	o.replicas[cfg.ID] = r
	return nil
}

func (o *Orchestrator) start(cfg orchestrator.ReplicaConfig) (*replica, error) {
	r := &replica{cfg: cfg}
	for i := range cfg.Processes {
		pp, err := o.pickPorts(cfg.Interactive)
		if err != nil {
			return nil, fmt.Errorf("ensure replica %s: %w", cfg.ID, err)
		}
		r.procs = append(r.procs, &proc{ports: pp, status: orchestrator.ProcessStatus{
			Index:            i,
			State:            orchestrator.ProcessStarting,
			ComputeCtlAddr:   net.JoinHostPort(o.cfg.Host, strconv.Itoa(pp.computeCtl)),
			InternalHTTPAddr: net.JoinHostPort(o.cfg.Host, strconv.Itoa(pp.internalHTTP)),
		}})
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	for i := range r.procs {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			o.supervise(ctx, r, i)
		}()
	}
	o.cfg.Log.Info("Started replica", "replica", cfg.ID.String(), "processes", cfg.Processes, "workers", cfg.Workers, "interactive", cfg.Interactive)
	return r, nil
}

// args renders the replica command line for process i from the processes'
// current ports.
func (o *Orchestrator) args(r *replica, i int) []string {
	host := o.cfg.Host
	var computePeers, interactivePeers []string
	for _, p := range r.procs {
		pp := p.currentPorts()
		computePeers = append(computePeers, net.JoinHostPort(host, strconv.Itoa(pp.compute)))
		interactivePeers = append(interactivePeers, net.JoinHostPort(host, strconv.Itoa(pp.interactive)))
	}
	pp := r.procs[i].currentPorts()
	args := []string{
		"--controller-listen-addr=" + net.JoinHostPort(host, strconv.Itoa(pp.computeCtl)),
		"--internal-http-listen-addr=" + net.JoinHostPort(host, strconv.Itoa(pp.internalHTTP)),
		// Bind the mesh to loopback too; the replica's default is every
		// interface.
		"--compute-listen-addr=" + net.JoinHostPort(host, strconv.Itoa(pp.compute)),
		"--workers=" + strconv.Itoa(r.cfg.Workers),
		"--process=" + strconv.Itoa(i),
		"--compute-peers=" + strings.Join(computePeers, ","),
		"--log-level=" + r.cfg.LogLevel,
	}
	if r.cfg.Interactive {
		args = append(args, "--interactive-peers="+strings.Join(interactivePeers, ","))
	}
	return args
}

// pickPorts asks the kernel for free loopback ports. Another program may
// take one before the replica binds it; the replica then fails to start, and
// its restart (with backoff, visible in Status as restarts) picks fresh ones.
func (o *Orchestrator) pickPorts(interactive bool) (ports, error) {
	n := 3
	if interactive {
		n = 4
	}
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var got []int
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(o.cfg.Host, "0"))
		if err != nil {
			return ports{}, fmt.Errorf("pick free port: %w", err)
		}
		ls = append(ls, l)
		got = append(got, l.Addr().(*net.TCPAddr).Port)
	}
	p := ports{computeCtl: got[0], compute: got[1], internalHTTP: got[2]}
	if interactive {
		p.interactive = got[3]
	}
	return p, nil
}

// supervise runs process i until ctx is cancelled, restarting it on exit.
// Before a restart it checks that the process's ports are still free: one
// another program took meanwhile would fail every restart, so the process
// gets fresh ones (the controller reads addresses from Status on every
// connect; peer processes pick up the new peer list when they restart,
// which they do because a replica's processes share fate).
func (o *Orchestrator) supervise(ctx context.Context, r *replica, i int) {
	p := r.procs[i]
	log := o.cfg.Log.WithValues("replica", r.cfg.ID.String(), "process", i)
	backoff := o.cfg.MinBackoff
	for first := true; ; first = false {
		if !first {
			o.repickTakenPorts(p, r.cfg.Interactive, log)
		}
		p.update(func(s *orchestrator.ProcessStatus) { s.State = orchestrator.ProcessStarting; s.PID = 0 })
		started := time.Now()
		err := o.runOnce(ctx, r.cfg.ID, p, log, o.args(r, i))
		if ctx.Err() != nil {
			p.update(func(s *orchestrator.ProcessStatus) { s.State = orchestrator.ProcessStopped; s.PID = 0 })
			log.V(1).Info("Stopped replica process")
			return
		}
		if time.Since(started) >= o.cfg.StableAfter {
			backoff = o.cfg.MinBackoff
		}
		exit := "exited"
		if err != nil {
			exit = err.Error()
		}
		p.update(func(s *orchestrator.ProcessStatus) {
			s.State = orchestrator.ProcessBackoff
			s.PID = 0
			s.Restarts++
			s.LastExit = exit
		})
		log.Info("Replica process exited; restarting", "exit", exit, "backoff", backoff.String())
		select {
		case <-ctx.Done():
			p.update(func(s *orchestrator.ProcessStatus) { s.State = orchestrator.ProcessStopped })
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, o.cfg.MaxBackoff)
	}
}

// repickTakenPorts gives p fresh ports when one of its ports can no longer
// be bound.
func (o *Orchestrator) repickTakenPorts(p *proc, interactive bool, log logr.Logger) {
	old := p.currentPorts()
	if o.portsFree(old) {
		return
	}
	pp, err := o.pickPorts(interactive)
	if err != nil {
		log.Error(err, "A port of the replica process is taken and no fresh one could be picked")
		return
	}
	p.mu.Lock()
	p.ports = pp
	p.status.ComputeCtlAddr = net.JoinHostPort(o.cfg.Host, strconv.Itoa(pp.computeCtl))
	p.status.InternalHTTPAddr = net.JoinHostPort(o.cfg.Host, strconv.Itoa(pp.internalHTTP))
	p.mu.Unlock()
	log.Info("A port of the replica process was taken by another program; restarting it on fresh ports",
		"computectl", p.snapshot().ComputeCtlAddr)
}

// portsFree reports whether every port in pp can be bound now.
func (o *Orchestrator) portsFree(pp ports) bool {
	for _, port := range []int{pp.computeCtl, pp.compute, pp.internalHTTP, pp.interactive} {
		if port == 0 {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort(o.cfg.Host, strconv.Itoa(port)))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}

// runOnce starts one incarnation and waits for it to exit, or stops it when
// ctx is cancelled. It returns the exit error.
func (o *Orchestrator) runOnce(ctx context.Context, id orchestrator.ReplicaID, p *proc, log logr.Logger, args []string) error {
	cmd := exec.Command(o.cfg.ReplicaBinary, args...)
	configureCmd(cmd)
	cmd.Env = append(os.Environ(), o.cfg.Env...)
	out, closeOut, err := o.output(id, p.snapshot().Index, log)
	if err != nil {
		return err
	}
	defer closeOut()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start replica process: %w", err)
	}
	p.update(func(s *orchestrator.ProcessStatus) {
		s.State = orchestrator.ProcessRunning
		s.PID = cmd.Process.Pid
		s.Started = time.Now()
	})
	log.V(1).Info("Started replica process", "pid", cmd.Process.Pid)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		return err
	case <-ctx.Done():
	}
	_ = signalGroup(cmd, syscall.SIGTERM)
	select {
	case err := <-exited:
		return err
	case <-time.After(o.cfg.StopGrace):
	}
	log.Info("Replica process ignored SIGTERM; killing it", "pid", cmd.Process.Pid)
	_ = signalGroup(cmd, syscall.SIGKILL)
	return <-exited
}

// output returns where a process's stdout/stderr go: a log file per process
// (appended across restarts) when LogDir is set, the logger otherwise.
func (o *Orchestrator) output(id orchestrator.ReplicaID, index int, log logr.Logger) (io.Writer, func(), error) {
	if o.cfg.LogDir == "" {
		w := &lineLogger{log: log}
		return w, w.flush, nil
	}
	name := filepath.Join(o.cfg.LogDir, fmt.Sprintf("%s-%s-%d.log", id.Cluster, id.Replica, index))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("open replica log: %w", err)
	}
	return f, func() { f.Close() }, nil
}

// lineLogger forwards whole lines written to it as log entries.
type lineLogger struct {
	log logr.Logger
	mu  sync.Mutex
	buf []byte
}

func (w *lineLogger) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := slices.Index(w.buf, '\n')
		if i < 0 {
			break
		}
		w.log.Info("replica: " + string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	return len(b), nil
}

func (w *lineLogger) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.log.Info("replica: " + string(w.buf))
		w.buf = nil
	}
}

func (r *replica) stop() {
	r.cancel()
	r.wg.Wait()
}

// RemoveReplica stops a replica's processes and waits for them to exit.
func (o *Orchestrator) RemoveReplica(ctx context.Context, id orchestrator.ReplicaID) error {
	o.mu.Lock()
	r, ok := o.replicas[id]
	delete(o.replicas, id)
	o.mu.Unlock()
	if !ok {
		return nil
	}
	done := make(chan struct{})
	go func() { r.stop(); close(done) }()
	select {
	case <-done:
		o.cfg.Log.Info("Removed replica", "replica", id.String())
		return nil
	case <-ctx.Done():
		return fmt.Errorf("remove replica %s: %w", id, ctx.Err())
	}
}

// ListReplicas returns the managed replicas, sorted.
func (o *Orchestrator) ListReplicas(ctx context.Context) ([]orchestrator.ReplicaID, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]orchestrator.ReplicaID, 0, len(o.replicas))
	for id := range o.replicas {
		out = append(out, id)
	}
	slices.SortFunc(out, func(a, b orchestrator.ReplicaID) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}

// Status returns a replica's processes.
func (o *Orchestrator) Status(ctx context.Context, id orchestrator.ReplicaID) (orchestrator.ReplicaStatus, error) {
	o.mu.Lock()
	r, ok := o.replicas[id]
	o.mu.Unlock()
	if !ok {
		return orchestrator.ReplicaStatus{}, fmt.Errorf("status of %s: %w", id, orchestrator.ErrNotFound)
	}
	st := orchestrator.ReplicaStatus{Config: r.cfg}
	for _, p := range r.procs {
		st.Processes = append(st.Processes, p.snapshot())
	}
	return st, nil
}

// Close stops every replica and waits for the processes to exit.
func (o *Orchestrator) Close() error {
	o.mu.Lock()
	o.closed = true
	rs := o.replicas
	o.replicas = map[orchestrator.ReplicaID]*replica{}
	o.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Add(1)
		go func() { defer wg.Done(); r.stop() }()
	}
	wg.Wait()
	return nil
}
