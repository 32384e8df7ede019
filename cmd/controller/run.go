package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/environment"
	"github.com/tandemdb/tandem/pkg/orchestrator"
	"github.com/tandemdb/tandem/pkg/pprofserver"
	"github.com/tandemdb/tandem/pkg/readtrace"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/storage"
)

// storageTick is how often table uppers advance without writes; it bounds
// how stale a serializable read of an idle table may be.
const storageTick = 100 * time.Millisecond

// run starts every part, prints where to connect, and serves until ctx
// ends; then it stops the replicas and closes the data directory.
func run(ctx context.Context, cfg *config, stdout, stderr io.Writer) error {
	handler := slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel})
	log := logr.FromSlogHandler(handler)

	cat, err := catalog.Open(cfg.DataDir)
	if err != nil {
		return err
	}
	defer cat.Close()
	reg := prometheus.NewRegistry()
	sopts := storage.Options{Log: log.WithName("storage"), Metrics: storage.NewMetrics(reg)}
	var faults *storage.FaultFS
	if cfg.StorageFaultInjection {
		faults = storage.NewFaultFS(nil)
		sopts.FS = faults
	}
	store, err := storage.Open(filepath.Join(cfg.DataDir, "storage"), sopts)
	if err != nil {
		return err
	}
	registerDiskSpace(reg, filepath.Join(cfg.DataDir, "storage"), statfsUsage)
	defer store.Close()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go store.Run(runCtx, storageTick)

	storageLis, err := net.Listen("tcp", cfg.StorageListenAddr)
	if err != nil {
		return fmt.Errorf("storage listener: %w", err)
	}
	tlsSetup, err := setUpInternalTLS(cfg, reg, log.WithName("internal-tls"))
	if err != nil {
		return err
	}
	go tlsSetup.maintain(runCtx, log.WithName("internal-tls"))
	grpcSrv := grpc.NewServer(tlsSetup.storageOptions...)
	storage.NewService(store).Register(grpcSrv)
	go grpcSrv.Serve(storageLis)
	defer grpcSrv.Stop()

	orch, err := newOrchestrator(runCtx, cfg, log.WithName("orchestrator"), storageLis.Addr().String(), tlsSetup.replicaEnv, cat)
	if err != nil {
		return err
	}
	defer orch.close()

	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ctl := controller.New(controller.Config{
		Log:          log.WithName("compute"),
		Orchestrator: orch.Orchestrator,
		Storage:      store,
		Oracle:       store.Oracle(),
		Metrics:      controller.NewMetrics(reg),
		Dialer:       cmp.Or[controller.Dialer](cfg.dialer, tlsSetup.dialer),
	})
	ctl.Start()
	defer ctl.Close()
	// The kubernetes orchestrator publishes hydration as the Hydrated
	// condition, which the operator waits for before rolling the next
	// replica of a cluster.
	rep, orchestratorRolls := orch.Orchestrator.(controller.HydrationReporter)
	if orchestratorRolls {
		hctx, stopReports := context.WithCancel(runCtx)
		reported := make(chan struct{})
		go func() { defer close(reported); ctl.ReportHydration(hctx, rep, cfg.hydrationInterval) }()
		defer func() { stopReports(); <-reported }()
	}

	env, err := environment.Open(ctx, environment.Config{
		Log: log.WithName("environment"), Catalog: cat, Storage: store, Compute: ctl, ReplicaLogLevel: cfg.ReplicaLogLevel,
		ParamDefaults: cfg.ParamDefaults, SpillDir: filepath.Join(cfg.DataDir, "spill"),
		Superuser: cfg.FrontDoor.Superuser,
		// The operator sequences every pod-template change of a cluster's
		// replicas on the Hydrated condition the reporter publishes.
		OrchestratorRollsReplicas: orchestratorRolls,
	})
	if err != nil {
		return err
	}

	httpLis, err := net.Listen("tcp", cfg.HTTPListenAddr)
	if err != nil {
		return fmt.Errorf("http listener: %w", err)
	}
	// /healthz reports the SQL listener once it started below (before,
	// the controller is starting, which a liveness probe must not punish).
	var pgwireHealth atomic.Pointer[func() error]
	health := func() error {
		if h := pgwireHealth.Load(); h != nil {
			return (*h)()
		}
		return nil
	}
	httpHandler := newHTTPHandler(ctl, orch.Orchestrator, reg, health)
	if faults != nil {
		httpHandler = withStorageFaults(httpHandler, faults, log.WithName("faults"))
	}
	httpSrv := &http.Server{Handler: httpHandler, ReadHeaderTimeout: 10 * time.Second}
	go httpSrv.Serve(httpLis)
	defer httpSrv.Close()
	stopPprof, err := pprofserver.ServeConfigured(ctx, cfg.PprofListenAddr, log)
	if err != nil {
		return err
	}
	defer stopPprof()

	var backend sql.Backend = env
	// Replicas users applied for the catalog's clusters join the catalog: once before
	// serving SQL, then periodically.
	if lister, ok := orch.Orchestrator.(adoptedLister); ok {
		a := newAdopter(lister, cat, env, log.WithName("adopt"))
		if err := a.importOnce(ctx); err != nil {
			return fmt.Errorf("import user-applied replicas: %w", err)
		}
		actx, stopAdopting := context.WithCancel(runCtx)
		adopting := make(chan struct{})
		go func() { defer close(adopting); a.run(actx, cmp.Or(cfg.adoptInterval, defaultAdoptInterval)) }()
		defer func() { stopAdopting(); <-adopting }()
		backend = droppingBackend{Environment: env, a: a}
	}

	stopPgwire, pgwireHealthy, pgwireAddr, err := servePgwire(runCtx, cfg.PgwireListenAddr, backend, cfg.FrontDoor, cfg.MaxCopyBytes, slog.New(handler).With("logger", "pgwire"),
		readtrace.NewHistogram(reg))
	if err != nil {
		return err
	}
	defer stopPgwire()
	pgwireHealth.Store(&pgwireHealthy)

	fmt.Fprintf(stdout, "Tandem controller is running.\n")
	host, port, _ := net.SplitHostPort(pgwireAddr)
	fmt.Fprintf(stdout, "  SQL:      psql -h %s -p %s -U tandem tandem\n", host, port)
	fmt.Fprintf(stdout, "  HTTP:     http://%s/api/status  (also /healthz, /readyz, /metrics)\n", httpLis.Addr())
	fmt.Fprintf(stdout, "  Storage:  %s (gRPC, read by replicas)\n", storageLis.Addr())
	if orch.banner == "" {
		fmt.Fprintf(stdout, "  Data:     %s (replica logs in %s)\n", cfg.DataDir, filepath.Join(cfg.DataDir, "logs"))
	} else {
		fmt.Fprintf(stdout, "  Data:     %s\n", cfg.DataDir)
		fmt.Fprintf(stdout, "  Replicas: %s\n", orch.banner)
	}
	fmt.Fprintf(stdout, "Press Ctrl-C to stop.\n")

	<-ctx.Done()
	log.Info("Shutting down")
	return nil
}

// newHTTPHandler serves health, metrics and status. /healthz fails (503)
// while health does: the SQL listener stopped accepting connections (an
// accept error it cannot retry), so a liveness probe restarts a
// controller no client can reach.
func newHTTPHandler(ctl *controller.Controller, orch orchestrator.Orchestrator, reg *prometheus.Registry, health func() error) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := health(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		// Ready once every cluster with replicas has one connected: reads
		// can then be answered.
		for _, cl := range ctl.Status().Clusters {
			connected := len(cl.Replicas) == 0
			for _, rs := range cl.Replicas {
				connected = connected || rs.Connected
			}
			if !connected {
				http.Error(w, fmt.Sprintf("cluster %s has no connected replica", cl.Name), http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprintln(w, "ok")
	})
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		ctl.Status() // refreshes the derived gauges
		metrics.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /api/status", func(w http.ResponseWriter, r *http.Request) {
		type replicaProcesses struct {
			Cluster   string                       `json:"cluster"`
			Replica   string                       `json:"replica"`
			Processes []orchestrator.ProcessStatus `json:"processes"`
		}
		out := struct {
			controller.Status
			Orchestrator []replicaProcesses `json:"orchestrator"`
		}{Status: ctl.Status()}
		ids, _ := orch.ListReplicas(r.Context())
		for _, id := range ids {
			st, err := orch.Status(r.Context(), id)
			if err != nil {
				continue
			}
			out.Orchestrator = append(out.Orchestrator, replicaProcesses{Cluster: id.Cluster, Replica: id.Replica, Processes: st.Processes})
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil && !errors.Is(err, http.ErrHandlerTimeout) {
			return
		}
	})
	return mux
}
