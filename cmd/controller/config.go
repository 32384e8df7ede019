package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// config is the controller's parsed command line.
type config struct {
	DataDir           string
	PgwireListenAddr  string
	HTTPListenAddr    string
	StorageListenAddr string
	Orchestrator      string
	ReplicaBinary     string
	LogLevel          slog.Level
	ReplicaLogLevel   string
	// ParamDefaults are system parameter defaults for a fresh data
	// directory, from --system-parameter-default name=value,...
	ParamDefaults map[string]string
}

// envName is a flag's environment fallback: --data-dir -> TANDEM_DATA_DIR.
func envName(flagName string) string {
	return "TANDEM_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// errKubernetesUnsupported refuses --orchestrator=kubernetes until the
// Kubernetes orchestrator exists.
var errKubernetesUnsupported = errors.New("--orchestrator=kubernetes is not yet supported by this build; use --orchestrator=process")

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{}
	var logLevel string
	fs.StringVar(&cfg.DataDir, "data-dir", "data", "directory of the catalog, table storage and replica logs")
	fs.StringVar(&cfg.PgwireListenAddr, "pgwire-listen-addr", "127.0.0.1:6875", "address of the PostgreSQL wire protocol endpoint")
	fs.StringVar(&cfg.HTTPListenAddr, "http-listen-addr", "127.0.0.1:6876", "address of /healthz, /readyz, /metrics and /api/status")
	fs.StringVar(&cfg.StorageListenAddr, "storage-listen-addr", "127.0.0.1:6877", "address of the table storage gRPC service replicas read from")
	fs.StringVar(&cfg.Orchestrator, "orchestrator", "process", "where replicas run: process (local child processes) or kubernetes")
	fs.StringVar(&cfg.ReplicaBinary, "replica-binary", "", "path of the replica binary (default: `replica` beside this binary)")
	fs.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&cfg.ReplicaLogLevel, "replica-log-level", "info", "log level passed to replicas")
	var paramDefaults string
	fs.StringVar(&paramDefaults, "system-parameter-default", "", "comma-separated name=value system parameter defaults applied when the data directory is new (e.g. enable_compute_interactive_dataflows=on)")
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if v := getenv(envName(f.Name)); v != "" {
			if err := f.Value.Set(v); err != nil {
				envErr = errors.Join(envErr, fmt.Errorf("%s=%q: %w", envName(f.Name), v, err))
			}
		}
	})
	if envErr != nil {
		return nil, envErr
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if cfg.ParamDefaults, err = parseParamDefaults(paramDefaults); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := cfg.LogLevel.UnmarshalText([]byte(logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	switch cfg.Orchestrator {
	case "process":
	case "kubernetes":
		return nil, errKubernetesUnsupported
	default:
		return nil, fmt.Errorf("--orchestrator=%q: want process or kubernetes", cfg.Orchestrator)
	}
	if cfg.ReplicaBinary == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the replica binary: %w", err)
		}
		cfg.ReplicaBinary = filepath.Join(filepath.Dir(self), "replica")
	}
	if cfg.DataDir == "" {
		return nil, errors.New("--data-dir must not be empty")
	}
	return cfg, nil
}

// parseParamDefaults parses "name=value,name=value".
func parseParamDefaults(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		name, value, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("--system-parameter-default: %q: want name=value", kv)
		}
		out[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	return out, nil
}
