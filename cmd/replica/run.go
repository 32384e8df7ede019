package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/tandemdb/tandem/pkg/compute/batch"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	goruntime "runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"

	"github.com/tandemdb/tandem/pkg/compute/mesh"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/server"
	"github.com/tandemdb/tandem/pkg/compute/sink"
	"github.com/tandemdb/tandem/pkg/pprofserver"
	"github.com/tandemdb/tandem/pkg/replica"
	"github.com/tandemdb/tandem/pkg/sharing"
	"github.com/tandemdb/tandem/pkg/storage/tablesource"
)

func run(args []string, getenv func(string) string) error {
	host, _ := os.Hostname()
	cfg, err := parseConfig(args, getenv, host, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	handler := slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel})
	log := logr.FromSlogHandler(handler).WithValues("process", cfg.Process)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return serve(ctx, cfg, log)
}

// serve runs the replica process until ctx ends (graceful shutdown, nil
// error) or something fatal happens (a lost peer, a runtime failure: an
// error, so the process exits non-zero and the orchestrator restarts the
// replica).
func serve(ctx context.Context, cfg *config, log logr.Logger) error {
	twoRuntimes := len(cfg.InteractivePeers) > 0
	reg := prometheus.NewRegistry()
	registerProcessCollectors(reg)
	refused := newRefusedCounter(reg)
	meshRefused := refused.WithLabelValues("mesh")
	fatal := make(chan error, 1)
	// A fatal error while the meshes still connect (a peer lost on one
	// runtime's mesh while the other's waits for that peer) must end the
	// process at once, not after the peer-connect timeout: the orchestrator
	// restarts every process with fresh peer addresses only once each has
	// exited.
	connecting, stopConnecting := context.WithCancel(ctx)
	defer stopConnecting()
	onFatal := func(err error) {
		select {
		case fatal <- err:
		default:
		}
		stopConnecting()
	}

	processes := max(1, len(cfg.ComputePeers))
	serverRole := replica.Config{TwoRuntimes: twoRuntimes}.Role()
	if twoRuntimes {
		// Both runtimes' workers run on locked OS threads; give each a P
		// plus headroom so an interactive worker never queues for a
		// processor behind a busy maintenance worker (docs/design/two-runtimes.md).
		if want := 2*cfg.Workers + 2; goruntime.GOMAXPROCS(0) < want {
			goruntime.GOMAXPROCS(want)
		}
	}
	// Every runtime's series are registered before /metrics answers, so a
	// scrape never sees a process with fewer runtimes than it runs.
	m := newMetrics(reg, serverRole.String())
	var im *metrics
	if twoRuntimes {
		im = newMetrics(reg, runtime.Interactive.String())
	}

	// The internal HTTP endpoint comes first, so /healthz answers while the
	// process waits for its peers.
	var ready atomic.Bool
	httpLis, err := net.Listen("tcp", cfg.InternalHTTPListenAddr)
	if err != nil {
		return fmt.Errorf("listen for internal HTTP: %w", err)
	}
	resets := []*maxStep{m.maxStep}
	if im != nil {
		resets = append(resets, im.maxStep)
	}
	httpSrv := &http.Server{Handler: internalMux(reg, &ready, resets...), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = httpSrv.Serve(httpLis) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = httpSrv.Shutdown(sctx)
	}()
	stopPprof, err := pprofserver.ServeConfigured(ctx, cfg.PprofListenAddr, log)
	if err != nil {
		return err
	}
	defer stopPprof()

	baseLog := log
	log = log.WithValues("role", serverRole.String())

	// New dataflows are refused near the limit by a one-process replica
	// itself; the processes of a larger replica must agree on every
	// dataflow they build, so each reports its memory and the controller
	// holds new dataflows back (MemoryGuard.Dataflows, Report).
	guard := &server.MemoryGuard{Limit: memoryLimit(cfg.MemoryLimit, os.ReadFile), Fraction: server.DefaultMemoryFraction,
		Dataflows: processes == 1, Report: processes > 1, Used: memoryInUse}
	log.Info("Memory guard", "limit", guard.String())
	batch.SetOffHeap(cfg.OffHeapArrangements)
	if !cfg.OffHeapArrangements {
		log.Info("Arrangement batches kept on the Go heap (--offheap-arrangements=false)")
	}
	if batch.PoisonEnabled() {
		log.Info("Released arrangement arenas poisoned, not unmapped: a debugging mode", "env", batch.PoisonEnv)
	}
	if twoRuntimes {
		log.Info("Maintenance worker threads' nice value raised", "by", cfg.MaintenanceNice)
	}
	lane, err := listenPeekLane(cfg, refused.WithLabelValues("peeklane"), log)
	if err != nil {
		return err
	}
	defer lane.close()
	rcfg := replica.Config{
		LaneAddress: lane.advertised,
		Workers:     cfg.Workers, Process: cfg.Process, Processes: processes, TwoRuntimes: twoRuntimes,
		MaintenanceNice: cfg.MaintenanceNice,
		Sources:         render.SourceKinds{plan.SourceLoadGen: render.LoadGenerators{}},
		ServerMetrics:   serverMetrics{m}, Memory: guard, OnFatal: onFatal, Log: log,
		Fabric: func(role runtime.Role) (runtime.Fabric, func(), error) {
			peers, listen := cfg.ComputePeers, cfg.ComputeListenAddr
			if role == runtime.Interactive {
				peers, listen = cfg.InteractivePeers, cfg.InteractiveListenAddr
			}
			return connectMesh(connecting, cfg, peers, listen, onFatal, meshRefused.Inc, baseLog.WithName("mesh").WithValues("role", role.String()))
		},
		Metrics: func(role runtime.Role) runtime.Metrics {
			if role == runtime.Interactive {
				return runtimeMetrics{im}
			}
			return runtimeMetrics{m}
		},
	}
	// Materialized views write their storage shards through the same
	// storage service tables are read from. Only the Solo or maintenance
	// runtime renders them (placement), so their series carry its role.
	if cfg.StorageAddr != "" {
		storageTLS, err := internalClientTLS(cfg)
		if err != nil {
			return err
		}
		client, closeStorage, err := tablesource.DialStorage(cfg.StorageAddr, storageTLS)
		if err != nil {
			return err
		}
		defer closeStorage.Close()
		rcfg.Sources[plan.SourceTable] = &tablesource.Factory{Client: client, Log: log.WithName("tables")}
		rcfg.StorageSinks = &sink.Factory{Storage: tablesource.SinkShards{Storage: client}, Log: log.WithName("sinks"), Metrics: sinkMetrics{m}}
	}
	proc, err := replica.New(rcfg)
	if err != nil {
		select {
		case ferr := <-fatal:
			log.Error(ferr, "Exiting after a fatal error while connecting; the replica must be restarted")
			return fmt.Errorf("fatal: %w", ferr)
		default:
		}
		return err
	}
	defer proc.Close()
	srv := proc.Server
	for _, rt := range proc.Runtimes {
		registerWalkCounters(reg, rt.Role().String(), rt.WalkCounts)
		registerSealedPeeks(reg, rt.Role().String(), rt.SealedPeeks)
		registerImportCounters(reg, rt.Role().String(), rt.ImportCounts)
		registerLiveImports(reg, rt.Role().String(), rt.LiveImports)
	}
	rtCtx, rtCancel := context.WithCancel(context.Background())
	defer rtCancel()
	if proc.Multiplexer != nil {
		sm := newSharingMetrics(reg, proc.Multiplexer.Routed)
		go reportHoldGaps(rtCtx, proc.Registry, sm, holdGapInterval)
	}
	proc.Start(rtCtx)

	loopCtx, loopCancel := context.WithCancel(context.Background())
	defer loopCancel()
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		_ = srv.Run(loopCtx)
	}()

	grpcLis, err := net.Listen("tcp", cfg.ControllerListenAddr)
	if err != nil {
		return fmt.Errorf("listen for the controller: %w", err)
	}
	gopts := []grpc.ServerOption{grpc.MaxRecvMsgSize(64 << 20)}
	if cfg.InternalTLS.Cert != "" {
		creds, err := internalServerCreds(cfg, refused, log)
		if err != nil {
			return err
		}
		gopts = append(gopts, grpc.Creds(creds))
	}
	gs := grpc.NewServer(gopts...)
	computepb.RegisterComputeServer(gs, srv)
	serveErr := make(chan error, 1)
	go func() { serveErr <- gs.Serve(grpcLis) }()
	go lane.serve(loopCtx, srv)
	ready.Store(true)
	log.Info("Serving compute protocol", "controller_addr", grpcLis.Addr().String(),
		"internal_http_addr", httpLis.Addr().String(), "workers", cfg.Workers, "processes", processes,
		"interactive_runtime", twoRuntimes, "gomaxprocs", goruntime.GOMAXPROCS(0))

	select {
	case err := <-fatal:
		if ctx.Err() != nil {
			// Shutting down anyway: a peer that went first is no failure.
			log.Info("Lost a peer while shutting down", "error", err.Error())
			break
		}
		// Shared fate: no graceful anything, the replica's state is lost.
		ready.Store(false)
		gs.Stop()
		log.Error(err, "Exiting after a fatal error; the replica must be restarted")
		return fmt.Errorf("fatal: %w", err)
	case err := <-serveErr:
		proc.Stop()
		return fmt.Errorf("serve compute protocol: %w", err)
	case <-ctx.Done():
	}
	log.Info("Shutting down")
	ready.Store(false)
	// Ending the loop ends every stream with UNAVAILABLE; GracefulStop then
	// has nothing left to wait for but in-flight handlers.
	loopCancel()
	<-loopDone
	stopped := make(chan struct{})
	go func() {
		gs.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(cfg.ShutdownTimeout):
		gs.Stop()
	}
	proc.Stop()
	log.Info("Shut down")
	return nil
}

// internalMux serves /metrics, /healthz, /readyz, POST
// /api/reset-max-step and GET /api/max-step (the maxima of maxSteps and
// what took longest in them). Profiles are not here:
// --pprof-listen-addr serves them on loopback only (pkg/pprofserver).
func internalMux(reg *prometheus.Registry, ready *atomic.Bool, maxSteps ...*maxStep) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/reset-max-step", resetMaxStepHandler(maxSteps...))
	mux.HandleFunc("/api/max-step", maxStepHandler(maxSteps...))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// holdGapInterval is how often the hold-gap gauges are recomputed: coarse,
// because a scrape reads them every few seconds at most and computing them
// takes every published point's lock.
const holdGapInterval = 5 * time.Second

// reportHoldGaps recomputes the hold-gap gauges until ctx ends. Only the
// maintenance runtime publishes; the interactive runtime reports zero so a
// max or sum over role stays right.
func reportHoldGaps(ctx context.Context, reg *sharing.Registry, m *sharingMetrics, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		g := reg.HoldGaps(runtime.Maintenance.String())
		m.holdGap.WithLabelValues(runtime.Maintenance.String()).Set(float64(g.MaxGapMillis))
		m.held.WithLabelValues(runtime.Maintenance.String()).Set(float64(g.Held))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// connectMesh connects this process to its peers on one runtime's worker
// port; a one-process runtime needs no mesh.
func connectMesh(ctx context.Context, cfg *config, peers []string, listen string, onLost func(error), onRefused func(), log logr.Logger) (runtime.Fabric, func(), error) {
	if len(peers) <= 1 {
		return nil, func() {}, nil
	}
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, nil, fmt.Errorf("listen for peers on %s: %w", listen, err)
	}
	mctx, cancel := context.WithTimeout(ctx, cfg.PeerConnectTimeout)
	defer cancel()
	mcfg := mesh.Config{Process: cfg.Process, Peers: peers, Workers: cfg.Workers, Listener: lis, OnLost: onLost, Log: log}
	if err := meshTLS(cfg, &mcfg, onRefused, log); err != nil {
		lis.Close()
		return nil, nil, err
	}
	msh, err := mesh.Connect(mctx, mcfg)
	if err != nil {
		return nil, nil, fmt.Errorf("connect mesh: %w", err)
	}
	return msh, func() { msh.Close() }, nil
}
