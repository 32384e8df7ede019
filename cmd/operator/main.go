package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
	"github.com/tandemdb/tandem/operator/certs"
	"github.com/tandemdb/tandem/operator/reconciler"
	"github.com/tandemdb/tandem/operator/render"
)

type config struct {
	metricsAddr     string
	probeAddr       string
	leaderElect     bool
	leaderElectNS   string
	watchNamespaces string
	clusterDomain   string
	storageAddr     string
	logLevel        string
	tls             tlsConfig
}

// tlsConfig is where the operator keeps the internal TLS certificates.
type tlsConfig struct {
	enabled          bool
	namespace        string
	caSecret         string
	controllerSecret string
	certValidity     time.Duration
}

func main() {
	if err := run(ctrl.SetupSignalHandler(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "operator:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	fs.StringVar(&c.metricsAddr, "metrics-bind-address", ":8080", "address of the /metrics endpoint")
	fs.StringVar(&c.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.BoolVar(&c.leaderElect, "leader-elect", true, "elect a leader so that only one operator acts")
	fs.StringVar(&c.leaderElectNS, "leader-election-namespace", "", "namespace of the leader election lease (default: the pod's)")
	fs.StringVar(&c.watchNamespaces, "watch-namespaces", "", "comma-separated namespaces to watch (default: all)")
	fs.StringVar(&c.clusterDomain, "cluster-domain", "", "cluster DNS domain for fully qualified peer names (default: rely on the search path)")
	fs.StringVar(&c.storageAddr, "replica-storage-addr", "", "address (host:port) of the controller's table storage service, passed to every replica pod")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.BoolVar(&c.tls.enabled, "internal-tls", false, "issue internal TLS certificates: a CA Secret, a Secret per replica mounted into its pods (mutual TLS on every internal link), and the controller's Secret; rotated before expiry")
	fs.StringVar(&c.tls.namespace, "internal-tls-namespace", "", "namespace of the CA and controller Secrets (default: the leader election namespace, else the pod's)")
	fs.StringVar(&c.tls.caSecret, "internal-tls-ca-secret", "tandem-internal-ca", "name of the Secret holding the internal CA")
	fs.StringVar(&c.tls.controllerSecret, "internal-tls-controller-secret", "", "name of the Secret holding the controller's internal certificate (empty: none)")
	fs.DurationVar(&c.tls.certValidity, "internal-tls-cert-validity", certs.DefaultLeafValidity, "validity of the internal certificates issued; each is renewed when two thirds of it have passed")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	// Environment fallbacks for flags not given on the command line.
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		env := "TANDEM_OPERATOR_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok && !set[f.Name] {
			if err := f.Value.Set(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", env, v, err))
			}
		}
	})
	if c.tls.enabled && c.tls.certValidity < 3*time.Minute {
		errs = append(errs, fmt.Errorf("--internal-tls-cert-validity=%s: want at least 3m", c.tls.certValidity))
	}
	return c, errors.Join(errs...)
}

// serviceAccountNamespace is where Kubernetes mounts the pod's namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// tlsNamespace is where the CA and controller Secrets live.
func (c config) tlsNamespace() (string, error) {
	for _, ns := range []string{c.tls.namespace, c.leaderElectNS} {
		if ns != "" {
			return ns, nil
		}
	}
	b, err := os.ReadFile(serviceAccountNamespace)
	if err != nil {
		return "", fmt.Errorf("--internal-tls-namespace not set and no service account namespace: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func newLogger(level string) (logr.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return logr.Logger{}, fmt.Errorf("log level %q: %w", level, err)
	}
	h := slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l})
	return logr.FromSlogHandler(h), nil
}

func run(ctx context.Context, args []string) error {
	c, err := parseFlags(args)
	if err != nil {
		return err
	}
	logger, err := newLogger(c.logLevel)
	if err != nil {
		return err
	}
	ctrl.SetLogger(logger)

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return fmt.Errorf("register client-go types: %w", err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return fmt.Errorf("register compute.tandem.dev types: %w", err)
	}
	cacheOpts := cache.Options{
		// Cache only the pods the operator renders, not every pod of the cluster.
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {Label: labels.SelectorFromSet(labels.Set{render.LabelName: render.AppName})},
			// Only the Secrets the operator issues, never the cluster's others.
			&corev1.Secret{}: {Label: labels.SelectorFromSet(labels.Set{render.LabelManagedBy: render.ManagerName})},
		},
	}
	if c.watchNamespaces != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range strings.Split(c.watchNamespaces, ",") {
			cacheOpts.DefaultNamespaces[strings.TrimSpace(ns)] = cache.Config{}
		}
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubernetes client config: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Cache:                         cacheOpts,
		Metrics:                       metricsserver.Options{BindAddress: c.metricsAddr},
		HealthProbeBindAddress:        c.probeAddr,
		LeaderElection:                c.leaderElect,
		LeaderElectionID:              "tandem-operator.compute.tandem.dev",
		LeaderElectionNamespace:       c.leaderElectNS,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       ptr(30 * time.Second),
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	metrics, err := reconciler.NewMetrics(ctrlmetrics.Registry)
	if err != nil {
		return err
	}
	r := &reconciler.Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder(reconciler.FieldOwner),
		Clock:     wallClock{},
		Render:    render.Options{ClusterDomain: c.clusterDomain, StorageAddr: c.storageAddr, InternalTLS: c.tls.enabled},
		Metrics:   metrics,
	}
	if c.tls.enabled {
		issuer, err := newIssuer(c, mgr)
		if err != nil {
			return err
		}
		r.TLS = issuer
		if err := mgr.Add(issuer); err != nil {
			return fmt.Errorf("add the internal TLS issuer: %w", err)
		}
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up computereplica reconciler: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add healthz check: %w", err)
	}
	if err := mgr.AddReadyzCheck("cache", func(req *http.Request) error {
		if !mgr.GetCache().WaitForCacheSync(req.Context()) {
			return errors.New("cache not synced")
		}
		return nil
	}); err != nil {
		return fmt.Errorf("add readyz check: %w", err)
	}
	logger.Info("Starting operator", "version", v1alpha1.GroupVersion().String(), "leaderElect", c.leaderElect)
	return mgr.Start(ctx)
}

// newIssuer is the internal TLS issuer of the operator's configuration.
func newIssuer(c config, mgr ctrl.Manager) (*certs.Issuer, error) {
	ns, err := c.tlsNamespace()
	if err != nil {
		return nil, err
	}
	return &certs.Issuer{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Clock: wallClock{},
		Namespace: ns, CASecret: c.tls.caSecret, ControllerSecret: c.tls.controllerSecret,
		Labels:       map[string]string{render.LabelManagedBy: render.ManagerName},
		LeafValidity: c.tls.certValidity,
	}, nil
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func ptr[T any](v T) *T { return &v }
