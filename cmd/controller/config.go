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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/flagenv"
	"github.com/tandemdb/tandem/pkg/internaltls"
	"github.com/tandemdb/tandem/pkg/pgwire"
	"github.com/tandemdb/tandem/pkg/pprofserver"
	"github.com/tandemdb/tandem/pkg/sql"
)

// config is the controller's parsed command line.
type config struct {
	DataDir           string
	PgwireListenAddr  string
	HTTPListenAddr    string
	StorageListenAddr string
	// PprofListenAddr, when set, is the loopback address of /debug/pprof.
	PprofListenAddr string
	// InternalTLS authenticates the storage service and the compute
	// protocol connections with mutual TLS under a CA in the data
	// directory (the process orchestrator's replicas get its files).
	InternalTLS bool
	// InternalTLSFiles, when set, are the controller's certificate, key
	// and authority bundle (on Kubernetes, the Secret the operator issues
	// and rotates), used instead of a CA in the data directory and
	// reloaded when they change.
	InternalTLSFiles internaltls.Files
	// MaxCopyBytes bounds the rows one COPY FROM holds for its atomic write.
	MaxCopyBytes    int
	Orchestrator    string
	ReplicaBinary   string
	LogLevel        slog.Level
	ReplicaLogLevel string
	// ParamDefaults are system parameter defaults for a fresh data
	// directory, from --system-parameter-default name=value,...
	ParamDefaults map[string]string
	// Kubernetes configures --orchestrator=kubernetes.
	Kubernetes kubernetesConfig
	// FrontDoor is how SQL clients are let in.
	FrontDoor frontDoorConfig
	// StorageFaultInjection lets a test fill the storage directory's disk
	// (POST /debug/storage/space); never for production.
	StorageFaultInjection bool

	// Set only by in-process tests: the API server to use instead of a
	// kubeconfig, how replica processes are dialled (nil: gRPC), and how
	// often hydration is reported and user-applied replicas are looked for (0: defaults).
	restConfig        *rest.Config
	dialer            controller.Dialer
	hydrationInterval time.Duration
	adoptInterval     time.Duration
}

// kubernetesConfig is where and how the kubernetes orchestrator creates
// ComputeReplicas.
type kubernetesConfig struct {
	// Namespace holds the replicas; default the pod's own namespace.
	Namespace string
	// Kubeconfig is a kubeconfig file; empty means in-cluster credentials.
	Kubeconfig string
	// ControllerName is the managed-by label value of this controller's
	// replicas (two environments may share a namespace).
	ControllerName string
	// ReplicaImage and ReplicaImagePullPolicy go into every replica created.
	ReplicaImage           string
	ReplicaImagePullPolicy corev1.PullPolicy
}

// frontDoorConfig is the SQL endpoint's authentication and TLS.
type frontDoorConfig struct {
	// TLSCert and TLSKey are PEM files served to clients that ask for TLS,
	// reloaded when they change; RequireTLS refuses clients that do not.
	TLSCert, TLSKey string
	RequireTLS      bool
	// Superuser is the user SuperuserPassword lets in with SCRAM-SHA-256.
	// Without a password only loopback clients are accepted (trusted).
	Superuser         string
	SuperuserPassword string
}

// envSuperuserPassword holds the superuser's password (e.g. from a
// Kubernetes Secret); a flag would show it in the process list.
const envSuperuserPassword = "TANDEM_SUPERUSER_PASSWORD"

// serviceAccountNamespace is where Kubernetes mounts the pod's namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	return parseConfigIn(args, getenv, stderr, os.ReadFile)
}

// parseConfigIn is parseConfig reading files (the service account's
// namespace) through readFile.
func parseConfigIn(args []string, getenv func(string) string, stderr io.Writer, readFile func(string) ([]byte, error)) (*config, error) {
	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &config{}
	var logLevel string
	fs.StringVar(&cfg.DataDir, "data-dir", "data", "directory of the catalog, table storage and replica logs")
	fs.StringVar(&cfg.PgwireListenAddr, "pgwire-listen-addr", "127.0.0.1:6875", "address of the PostgreSQL wire protocol endpoint")
	fs.StringVar(&cfg.HTTPListenAddr, "http-listen-addr", "127.0.0.1:6876", "address of /healthz, /readyz, /metrics and /api/status")
	fs.StringVar(&cfg.StorageListenAddr, "storage-listen-addr", "127.0.0.1:6877", "address of the table storage gRPC service replicas read from")
	fs.IntVar(&cfg.MaxCopyBytes, "max-copy-bytes", sql.DefaultMaxCopyBytes, "largest COPY FROM (encoded rows held for its one atomic write), in bytes")
	fs.StringVar(&cfg.Orchestrator, "orchestrator", "process", "where replicas run: process (local child processes) or kubernetes")
	fs.StringVar(&cfg.ReplicaBinary, "replica-binary", "", "path of the replica binary (default: `replica` beside this binary)")
	fs.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&cfg.ReplicaLogLevel, "replica-log-level", "info", "log level passed to replicas")
	k := &cfg.Kubernetes
	fs.StringVar(&k.Namespace, "kubernetes-namespace", "", "kubernetes orchestrator: namespace of the ComputeReplicas (default: this pod's namespace)")
	fs.StringVar(&k.Kubeconfig, "kubeconfig", "", "kubernetes orchestrator: kubeconfig file (default: in-cluster service account credentials)")
	fs.StringVar(&k.ControllerName, "kubernetes-controller-name", "tandem-controller", "kubernetes orchestrator: managed-by label value of this controller's ComputeReplicas")
	fs.StringVar(&k.ReplicaImage, "replica-image", "", "kubernetes orchestrator: container image of the replicas it creates (required)")
	var pullPolicy string
	fs.StringVar(&pullPolicy, "replica-image-pull-policy", "", "kubernetes orchestrator: Always, IfNotPresent or Never (default: the ComputeReplica default)")
	fd := &cfg.FrontDoor
	fs.StringVar(&fd.TLSCert, "tls-cert", "", "PEM certificate served to SQL clients that ask for TLS (reloaded when it changes); needs --tls-key")
	fs.StringVar(&fd.TLSKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.BoolVar(&fd.RequireTLS, "require-tls", false, "refuse SQL clients that do not use TLS (needs --tls-cert)")
	fs.StringVar(&fd.Superuser, "superuser", "tandem", "user name the superuser password lets in")
	var passwordFile string
	fs.StringVar(&passwordFile, "superuser-password-file", "", "file holding the superuser's password (or set "+envSuperuserPassword+"); with a password every SQL client authenticates with SCRAM-SHA-256, without one only loopback clients are accepted")
	var internalTLS string
	fs.StringVar(&internalTLS, "internal-tls", "auto", "mutual TLS on the storage service and the connections to replicas: on, off, or auto (on with the process orchestrator, or when --internal-tls-cert is set); without --internal-tls-cert the CA is generated in the data directory (process orchestrator only)")
	tf := &cfg.InternalTLSFiles
	fs.StringVar(&tf.CA, "internal-tls-ca", "", "CA bundle of the deployment's internal links (on Kubernetes, the operator's Secret); with --internal-tls-cert and --internal-tls-key replaces the CA in the data directory; all three are reloaded when they change")
	fs.StringVar(&tf.Cert, "internal-tls-cert", "", "the controller's internal certificate (see --internal-tls-ca)")
	fs.StringVar(&tf.Key, "internal-tls-key", "", "key of --internal-tls-cert")
	fs.StringVar(&cfg.PprofListenAddr, "pprof-listen-addr", "", "loopback address serving /debug/pprof (e.g. 127.0.0.1:6060; default: profiles off)")
	fs.BoolVar(&cfg.StorageFaultInjection, "storage-fault-injection", false, "testing only: storage writes go through a layer that POST /debug/storage/space?bytes=N on the HTTP port can make fail with ENOSPC")
	var paramDefaults string
	fs.StringVar(&paramDefaults, "system-parameter-default", "", "comma-separated name=value system parameter defaults applied when the data directory is new (e.g. enable_compute_interactive_dataflows=on)")
	if err := flagenv.Parse(fs, args, getenv); err != nil {
		return nil, err
	}
	var err error
	if cfg.ParamDefaults, err = parseParamDefaults(paramDefaults); err != nil {
		return nil, err
	}
	if err := cfg.LogLevel.UnmarshalText([]byte(logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	switch cfg.Orchestrator {
	case "process":
	case "kubernetes":
		if err := k.complete(pullPolicy, readFile); err != nil {
			return nil, err
		}
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
	if err := cfg.completeInternalTLS(internalTLS); err != nil {
		return nil, err
	}
	if cfg.PprofListenAddr != "" {
		if err := pprofserver.CheckAddr(cfg.PprofListenAddr); err != nil {
			return nil, fmt.Errorf("--pprof-listen-addr: %w", err)
		}
	}
	if err := fd.complete(passwordFile, getenv(envSuperuserPassword), readFile); err != nil {
		return nil, err
	}
	return cfg, nil
}

// completeInternalTLS decides InternalTLS from --internal-tls and the
// certificate files: a CA in the data directory serves only the process
// orchestrator, whose replicas get its files; Kubernetes replicas get the
// operator's certificates, so the controller must be given its own.
func (cfg *config) completeInternalTLS(mode string) error {
	t := cfg.InternalTLSFiles
	files := t.Cert != ""
	if (t.CA != "") != files || (t.Key != "") != files {
		return errors.New("--internal-tls-ca, --internal-tls-cert and --internal-tls-key go together")
	}
	switch mode {
	case "auto":
		cfg.InternalTLS = files || cfg.Orchestrator == "process"
	case "on":
		if !files && cfg.Orchestrator != "process" {
			return errors.New("--internal-tls=on with --orchestrator=kubernetes needs --internal-tls-ca, --internal-tls-cert and --internal-tls-key (the operator's Secret)")
		}
		cfg.InternalTLS = true
	case "off":
		if files {
			return errors.New("--internal-tls=off contradicts --internal-tls-cert")
		}
	default:
		return fmt.Errorf("--internal-tls=%q: want on, off or auto", mode)
	}
	return nil
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

// complete validates the kubernetes settings and fills the namespace from
// the service account when none was given.
func (k *kubernetesConfig) complete(pullPolicy string, readFile func(string) ([]byte, error)) error {
	switch p := corev1.PullPolicy(pullPolicy); p {
	case "", corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		k.ReplicaImagePullPolicy = p
	default:
		return fmt.Errorf("--replica-image-pull-policy=%q: want Always, IfNotPresent or Never", pullPolicy)
	}
	if k.ReplicaImage == "" {
		return errors.New("--orchestrator=kubernetes needs --replica-image (or TANDEM_REPLICA_IMAGE)")
	}
	if k.ControllerName == "" {
		return errors.New("--kubernetes-controller-name must not be empty")
	}
	if k.Namespace == "" {
		b, err := readFile(serviceAccountNamespace)
		if err != nil {
			return fmt.Errorf("--orchestrator=kubernetes: no --kubernetes-namespace and no service account namespace: %w", err)
		}
		k.Namespace = strings.TrimSpace(string(b))
	}
	if errs := validation.IsDNS1123Label(k.Namespace); len(errs) > 0 {
		return fmt.Errorf("--kubernetes-namespace=%q: %s", k.Namespace, strings.Join(errs, "; "))
	}
	return nil
}

// complete checks the front door's flags and reads the password.
func (fd *frontDoorConfig) complete(passwordFile, envPassword string, readFile func(string) ([]byte, error)) error {
	if (fd.TLSCert == "") != (fd.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if fd.RequireTLS && fd.TLSCert == "" {
		return errors.New("--require-tls needs --tls-cert and --tls-key")
	}
	fd.SuperuserPassword = envPassword
	if passwordFile != "" {
		b, err := readFile(passwordFile)
		if err != nil {
			return fmt.Errorf("--superuser-password-file: %w", err)
		}
		fd.SuperuserPassword = strings.TrimRight(string(b), "\r\n")
	}
	if passwordFile != "" && fd.SuperuserPassword == "" {
		return fmt.Errorf("--superuser-password-file %s is empty", passwordFile)
	}
	if fd.SuperuserPassword != "" && fd.Superuser == "" {
		return errors.New("--superuser must not be empty when a password is set")
	}
	return nil
}

// pgwireConfig is the SQL server's configuration for the front door.
func (fd frontDoorConfig) pgwireConfig() (pgwire.Config, error) {
	var c pgwire.Config
	if fd.TLSCert != "" {
		r, err := newCertReloader(fd.TLSCert, fd.TLSKey)
		if err != nil {
			return c, err
		}
		c.TLS, c.RequireTLS = r.tlsConfig(), fd.RequireTLS
	}
	if fd.SuperuserPassword != "" {
		c.Passwords = map[string]string{fd.Superuser: fd.SuperuserPassword}
	}
	return c, nil
}
