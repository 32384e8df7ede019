package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tandemdb/tandem/pkg/flagenv"
	"github.com/tandemdb/tandem/pkg/internaltls"
	"github.com/tandemdb/tandem/pkg/pprofserver"
)

// config is the replica's parsed command line.
type config struct {
	ControllerListenAddr   string
	InternalHTTPListenAddr string
	// PprofListenAddr, when set, is the loopback address of /debug/pprof.
	PprofListenAddr string
	// InternalTLS, when its files are set, authenticates the compute
	// protocol port and the storage connection with mutual TLS.
	InternalTLS       internaltls.Files
	ComputeListenAddr string
	// InteractiveListenAddr is where the interactive runtime's mesh
	// listens; set when --interactive-peers is given.
	InteractiveListenAddr string
	// StorageAddr is the controller's table storage gRPC service; table
	// sources read from it. Empty: tables cannot be read.
	StorageAddr        string
	Workers            int
	Process            int
	ComputePeers       []string
	InteractivePeers   []string
	PeerConnectTimeout time.Duration
	ShutdownTimeout    time.Duration
	LogLevel           slog.Level
	// MaintenanceNice is added to the nice value of the maintenance
	// runtime's worker threads in a two-runtime process (0: unchanged).
	MaintenanceNice int
	// MemoryLimit is --memory-limit in bytes (0: from GOMEMLIMIT or the
	// container, see memoryLimit).
	MemoryLimit uint64
	// OffHeapArrangements is --offheap-arrangements (batch.SetOffHeap).
	OffHeapArrangements bool
	// PeekLane is --peek-lane: auto, tcp, unix or off (peeklane.go).
	PeekLane string
	// PeekLaneListenAddr is --peek-lane-listen-addr: where the tcp lane
	// listens ("": --controller-listen-addr's host, a system-chosen port).
	PeekLaneListenAddr string
}

// DefaultMaintenanceNice is --maintenance-nice's default: CFS gives a
// thread at nice 10 about a tenth of the share of one at nice 0, so while
// interactive workers and the read path want a core, maintenance workers
// yield it; alone, they use every core as before.
const DefaultMaintenanceNice = 10

var statefulSetOrdinal = regexp.MustCompile(`-(\d+)$`)

// parseConfig parses args, taking each flag not given on the command line
// from its TANDEM_ environment variable, and the process index from the
// StatefulSet hostname suffix when neither gives it.
func parseConfig(args []string, getenv func(string) string, hostname string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("replica", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{}
	var peers, interactive, logLevel, memLimit string
	process := -1
	fs.StringVar(&cfg.ControllerListenAddr, "controller-listen-addr", ":2100", "address of the compute protocol gRPC endpoint")
	fs.StringVar(&cfg.InternalHTTPListenAddr, "internal-http-listen-addr", ":6878", "address of /metrics, /healthz and /readyz")
	fs.StringVar(&cfg.InternalTLS.CA, "internal-tls-ca", "", "CA certificate of the deployment's internal links: with --internal-tls-cert and --internal-tls-key, the compute protocol port requires a client certificate it signed and the storage connection presents one")
	fs.StringVar(&cfg.InternalTLS.Cert, "internal-tls-cert", "", "this replica's internal certificate (see --internal-tls-ca)")
	fs.StringVar(&cfg.InternalTLS.Key, "internal-tls-key", "", "key of --internal-tls-cert")
	fs.StringVar(&cfg.PprofListenAddr, "pprof-listen-addr", "", "loopback address serving /debug/pprof (e.g. 127.0.0.1:6060; default: profiles off)")
	fs.StringVar(&cfg.ComputeListenAddr, "compute-listen-addr", "", "address the compute mesh listens on (default: all interfaces, on the port of this process's --compute-peers entry)")
	fs.StringVar(&cfg.StorageAddr, "storage-addr", "", "address of the controller's table storage gRPC service (tables are unreadable without it)")
	fs.IntVar(&cfg.Workers, "workers", 1, "worker goroutines per process")
	fs.IntVar(&process, "process", -1, "index of this process in --compute-peers (default: the hostname's StatefulSet ordinal, else 0)")
	fs.StringVar(&peers, "compute-peers", "", "comma-separated compute addresses of every process of the replica, in process order (empty: one process)")
	fs.StringVar(&interactive, "interactive-peers", "", "comma-separated interactive worker-port addresses of every process, in process order; starts the interactive runtime beside the maintenance runtime")
	fs.DurationVar(&cfg.PeerConnectTimeout, "peer-connect-timeout", 5*time.Minute, "how long to wait for every peer process")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", 10*time.Second, "how long a graceful shutdown may take")
	fs.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.IntVar(&cfg.MaintenanceNice, "maintenance-nice", DefaultMaintenanceNice, "with --interactive-peers: added to the nice value of the maintenance runtime's worker threads (0-19, Linux), so that reads on the interactive runtime win a core over index maintenance; 0 leaves them at the process's priority")
	fs.BoolVar(&cfg.OffHeapArrangements, "offheap-arrangements", true, "keep the columns of large arrangement batches outside the Go heap (anonymous mappings released when nothing holds the batch), so that the collector's heap goal, and with it the growth of the resident set under readers, is set by the small heap rather than by the indexes; false keeps every batch on the Go heap (docs/design/runtime.md)")
	fs.StringVar(&memLimit, "memory-limit", "", "memory limit of the process (e.g. 4GiB): above 90% of it new reads and new dataflows are refused with 53200 (in a replica of several processes, dataflows by the controller, to which each process reports its memory) (default: GOMEMLIMIT, else the container's cgroup limit)")

	fs.StringVar(&cfg.PeekLane, "peek-lane", "auto", "the connection point reads take from the controller beside the command stream (docs/design/read-path.md): tcp (on --peek-lane-listen-addr, by default a port chosen by the system on --controller-listen-addr's host, with mutual TLS when --internal-tls-* are set), unix (a socket in a new directory only this user can enter; the controller must run as this user), auto (unix when --controller-listen-addr is a loopback address, else tcp) or off")
	fs.StringVar(&cfg.PeekLaneListenAddr, "peek-lane-listen-addr", "", "address the tcp peek lane listens on (e.g. :2103, a port a pod spec and a NetworkPolicy can name; an empty host is advertised as the host the controller dials for --controller-listen-addr) (default: --controller-listen-addr's host, a port chosen by the system)")
	if err := flagenv.Parse(fs, args, getenv); err != nil {
		return nil, err
	}
	if err := cfg.LogLevel.UnmarshalText([]byte(logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	if t := cfg.InternalTLS; (t.CA == "") != (t.Cert == "") || (t.Cert == "") != (t.Key == "") {
		return nil, errors.New("--internal-tls-ca, --internal-tls-cert and --internal-tls-key go together")
	}
	if cfg.PprofListenAddr != "" {
		if err := pprofserver.CheckAddr(cfg.PprofListenAddr); err != nil {
			return nil, fmt.Errorf("--pprof-listen-addr: %w", err)
		}
	}
	if memLimit != "" {
		n, err := parseMemory(memLimit)
		if err != nil {
			return nil, fmt.Errorf("--memory-limit %q: %w", memLimit, err)
		}
		cfg.MemoryLimit = n
	}
	switch cfg.PeekLane {
	case "auto", "tcp", "unix", "off":
	default:
		return nil, fmt.Errorf("--peek-lane %q: want auto, tcp, unix or off", cfg.PeekLane)
	}
	if err := checkPeekLaneAddr(cfg.PeekLane, cfg.PeekLaneListenAddr); err != nil {
		return nil, err
	}
	if cfg.MaintenanceNice < 0 || cfg.MaintenanceNice > 19 {
		return nil, fmt.Errorf("--maintenance-nice: %d, want 0 to 19", cfg.MaintenanceNice)
	}
	if cfg.Workers < 1 {
		return nil, fmt.Errorf("--workers: %d, want at least 1", cfg.Workers)
	}
	var err error
	if cfg.ComputePeers, err = splitAddrs("--compute-peers", peers); err != nil {
		return nil, err
	}
	if cfg.InteractivePeers, err = splitAddrs("--interactive-peers", interactive); err != nil {
		return nil, err
	}
	if process < 0 {
		process = 0
		if m := statefulSetOrdinal.FindStringSubmatch(hostname); m != nil && len(cfg.ComputePeers) > 1 {
			if process, err = strconv.Atoi(m[1]); err != nil {
				return nil, fmt.Errorf("process index from hostname %q: %w", hostname, err)
			}
		}
	}
	cfg.Process = process
	if err := cfg.checkInteractive(); err != nil {
		return nil, err
	}
	if len(cfg.ComputePeers) == 0 {
		if cfg.Process != 0 {
			return nil, fmt.Errorf("--process %d without --compute-peers", cfg.Process)
		}
		return cfg, nil
	}
	if cfg.Process >= len(cfg.ComputePeers) {
		return nil, fmt.Errorf("--process %d out of range for %d --compute-peers", cfg.Process, len(cfg.ComputePeers))
	}
	if cfg.ComputeListenAddr == "" {
		_, port, _ := net.SplitHostPort(cfg.ComputePeers[cfg.Process])
		cfg.ComputeListenAddr = ":" + port
	}
	return cfg, nil
}

// checkInteractive asserts that the interactive runtime spans the same
// processes as the maintenance runtime (one address per process, this
// process at the same index), and picks its listen address. Both runtimes
// take their worker count from --workers, so they are equal by construction.
func (c *config) checkInteractive() error {
	if len(c.InteractivePeers) == 0 {
		return nil
	}
	processes := max(1, len(c.ComputePeers))
	if len(c.InteractivePeers) != processes {
		return fmt.Errorf("--interactive-peers lists %d processes but the replica has %d: both runtimes must span the same processes", len(c.InteractivePeers), processes)
	}
	if c.Process >= processes {
		return fmt.Errorf("--process %d out of range for %d --interactive-peers", c.Process, processes)
	}
	_, port, _ := net.SplitHostPort(c.InteractivePeers[c.Process])
	c.InteractiveListenAddr = ":" + port
	return nil
}

// splitAddrs parses a comma-separated list of host:port addresses.
func splitAddrs(flagName, s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", flagName, a, err)
		}
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 || host == "" {
			return nil, fmt.Errorf("%s: %q: want host:port", flagName, a)
		}
		if seen[a] {
			return nil, fmt.Errorf("%s: %q listed twice", flagName, a)
		}
		seen[a] = true
		out = append(out, a)
	}
	return out, nil
}
