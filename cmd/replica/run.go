package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
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

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/mesh"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/server"
	"github.com/tandemdb/tandem/pkg/compute/sink"
	"github.com/tandemdb/tandem/pkg/placement"
	"github.com/tandemdb/tandem/pkg/pprofserver"
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
	fatal := make(chan error, 1)
	onFatal := func(err error) {
		select {
		case fatal <- err:
		default:
		}
	}

	processes := max(1, len(cfg.ComputePeers))
	serverRole := runtime.Solo
	if twoRuntimes {
		serverRole = runtime.Maintenance
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
	if cfg.PprofListenAddr != "" {
		addr, stopPprof, err := pprofserver.Serve(ctx, cfg.PprofListenAddr)
		if err != nil {
			return err
		}
		defer stopPprof()
		log.Info("Serving profiles on loopback", "addr", addr)
	}

	baseLog := log
	log = log.WithValues("role", serverRole.String())

	var srv *server.Server
	eng := server.NewEngine(func(ev server.Event) { srv.Deliver(ev) }, log.WithName("engine"))
	guard := &server.MemoryGuard{Limit: memoryLimit(cfg.MemoryLimit, os.ReadFile), Fraction: server.DefaultMemoryFraction}
	log.Info("Memory guard", "limit", guard.String())
	srv = server.New(server.Config{Runtime: eng, Codec: server.PlanCodec{}, Log: log.WithName("server"), Metrics: serverMetrics{m},
		Memory: guard})
	sources := render.SourceKinds{plan.SourceLoadGen: render.LoadGenerators{}}
	// Materialized views write their storage shards through the same
	// storage service tables are read from. Only the Solo or maintenance
	// runtime renders them (placement), so their series carry its role.
	var sinks render.StorageSinkFactory
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
		sources[plan.SourceTable] = &tablesource.Factory{Client: client, Log: log.WithName("tables")}
		sinks = &sink.Factory{Storage: tablesource.SinkShards{Storage: client}, Log: log.WithName("sinks"), Metrics: sinkMetrics{m}}
	}
	newRuntime := func(role runtime.Role, peers []string, listen string, respond func(runtime.Response), pub runtime.Publisher, shared render.SharedImports, rm *metrics) (*runtime.Runtime, func(), error) {
		fabric, closeFabric, err := connectMesh(ctx, cfg, peers, listen, onFatal, baseLog.WithName("mesh").WithValues("role", role.String()))
		if err != nil {
			return nil, nil, err
		}
		rt, err := runtime.New(runtime.Config{
			Workers: cfg.Workers, Processes: processes, Process: cfg.Process, Role: role, Fabric: fabric,
			Sources: sources, StorageSinks: sinks, Respond: respond, Metrics: runtimeMetrics{rm}, OnFatal: onFatal, Publisher: pub, Shared: shared,
		})
		if err != nil {
			closeFabric()
			return nil, nil, fmt.Errorf("create %s runtime: %w", role, err)
		}
		return rt, closeFabric, nil
	}
	rtCtx, rtCancel := context.WithCancel(context.Background())
	defer rtCancel()
	var runtimes []*runtime.Runtime
	if !twoRuntimes {
		rt, closeFabric, err := newRuntime(runtime.Solo, cfg.ComputePeers, cfg.ComputeListenAddr, eng.Respond, nil, nil, m)
		if err != nil {
			return err
		}
		defer closeFabric()
		eng.Attach(rt)
		runtimes = append(runtimes, rt)
		registerWalkCounters(reg, runtime.Solo.String(), rt.WalkCounts)
		registerImportCounters(reg, runtime.Solo.String(), rt.ImportCounts)
	} else {
		shared := sharing.NewRegistry()
		var inter *placement.Interactive
		mux := placement.NewMultiplexer(eng.Respond, placement.RouteSealedHint,
			func(id plan.GlobalID, t frontier.Time) bool { return inter.Sealed(id, t) })
		maint := placement.NewMaintenance(shared)
		mrt, closeM, err := newRuntime(runtime.Maintenance, cfg.ComputePeers, cfg.ComputeListenAddr, mux.ResponderFor(runtime.Maintenance), maint, nil, m)
		if err != nil {
			return err
		}
		defer closeM()
		maint.SetInner(mrt)
		inter = placement.NewInteractive(placement.InteractiveConfig{
			Registry: shared, Workers: cfg.Workers, Process: cfg.Process,
			Respond: mux.ResponderFor(runtime.Interactive), Metrics: runtimeMetrics{im},
		})
		defer inter.Close()
		irt, closeI, err := newRuntime(runtime.Interactive, cfg.InteractivePeers, cfg.InteractiveListenAddr, mux.ResponderFor(runtime.Interactive), nil, inter, im)
		if err != nil {
			return err
		}
		defer closeI()
		inter.SetInner(irt)
		mux.Attach(maint, inter)
		eng.Attach(mux)
		runtimes = append(runtimes, mrt, irt)
		registerWalkCounters(reg, runtime.Maintenance.String(), mrt.WalkCounts)
		registerImportCounters(reg, runtime.Maintenance.String(), mrt.ImportCounts)
		registerWalkCounters(reg, runtime.Interactive.String(), irt.WalkCounts)
		registerImportCounters(reg, runtime.Interactive.String(), irt.ImportCounts)
		sm := newSharingMetrics(reg, mux.Routed)
		go reportHoldGaps(rtCtx, shared, sm, holdGapInterval)
	}
	for _, rt := range runtimes {
		rt.Start(rtCtx)
	}
	stopRuntimes := func() {
		for _, rt := range runtimes {
			rt.Stop()
		}
	}

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
		creds, err := internalServerCreds(cfg, reg, log)
		if err != nil {
			return err
		}
		gopts = append(gopts, grpc.Creds(creds))
	}
	gs := grpc.NewServer(gopts...)
	computepb.RegisterComputeServer(gs, srv)
	serveErr := make(chan error, 1)
	go func() { serveErr <- gs.Serve(grpcLis) }()
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
		stopRuntimes()
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
	stopRuntimes()
	log.Info("Shut down")
	return nil
}

// internalMux serves /metrics, /healthz, /readyz and POST
// /api/reset-max-step (the maxima of maxSteps). Profiles are not here:
// --pprof-listen-addr serves them on loopback only (pkg/pprofserver).
func internalMux(reg *prometheus.Registry, ready *atomic.Bool, maxSteps ...*maxStep) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/reset-max-step", resetMaxStepHandler(maxSteps...))
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
		m.holdGap.WithLabelValues("maintenance").Set(float64(g.MaxGapMillis))
		m.held.WithLabelValues("maintenance").Set(float64(g.Held))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// connectMesh connects this process to its peers on one runtime's worker
// port; a one-process runtime needs no mesh.
func connectMesh(ctx context.Context, cfg *config, peers []string, listen string, onLost func(error), log logr.Logger) (runtime.Fabric, func(), error) {
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
	if err := meshTLS(cfg, &mcfg, log); err != nil {
		lis.Close()
		return nil, nil, err
	}
	msh, err := mesh.Connect(mctx, mcfg)
	if err != nil {
		return nil, nil, fmt.Errorf("connect mesh: %w", err)
	}
	return msh, func() { msh.Close() }, nil
}
