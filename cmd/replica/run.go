package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
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
	role := runtime.Solo
	log = log.WithValues("role", role.String())
	reg := prometheus.NewRegistry()
	m := newMetrics(reg, role.String())
	fatal := make(chan error, 1)
	onFatal := func(err error) {
		select {
		case fatal <- err:
		default:
		}
	}

	// The internal HTTP endpoint comes first, so /healthz answers while the
	// process waits for its peers.
	var ready atomic.Bool
	httpLis, err := net.Listen("tcp", cfg.InternalHTTPListenAddr)
	if err != nil {
		return fmt.Errorf("listen for internal HTTP: %w", err)
	}
	httpSrv := &http.Server{Handler: internalMux(reg, &ready), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = httpSrv.Serve(httpLis) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = httpSrv.Shutdown(sctx)
	}()

	processes := max(1, len(cfg.ComputePeers))
	var fabric runtime.Fabric
	if processes > 1 {
		lis, err := net.Listen("tcp", cfg.ComputeListenAddr)
		if err != nil {
			return fmt.Errorf("listen for compute peers: %w", err)
		}
		mctx, cancel := context.WithTimeout(ctx, cfg.PeerConnectTimeout)
		msh, err := mesh.Connect(mctx, mesh.Config{
			Process: cfg.Process, Peers: cfg.ComputePeers, Workers: cfg.Workers, Listener: lis,
			OnLost: onFatal, Log: log.WithName("mesh"),
		})
		cancel()
		if err != nil {
			return fmt.Errorf("connect compute mesh: %w", err)
		}
		defer msh.Close()
		fabric = msh
	}

	var srv *server.Server
	eng := server.NewEngine(func(ev server.Event) { srv.Deliver(ev) }, log.WithName("engine"))
	srv = server.New(server.Config{Runtime: eng, Codec: server.PlanCodec{}, Log: log.WithName("server"), Metrics: serverMetrics{m}})
	rt, err := runtime.New(runtime.Config{
		Workers: cfg.Workers, Processes: processes, Process: cfg.Process, Role: role, Fabric: fabric,
		Sources: render.SourceKinds{plan.SourceLoadGen: render.LoadGenerators{}},
		Respond: eng.Respond, Metrics: runtimeMetrics{m}, OnFatal: onFatal,
	})
	if err != nil {
		return fmt.Errorf("create runtime: %w", err)
	}
	eng.Attach(rt)
	rtCtx, rtCancel := context.WithCancel(context.Background())
	defer rtCancel()
	rt.Start(rtCtx)

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
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(64 << 20))
	computepb.RegisterComputeServer(gs, srv)
	serveErr := make(chan error, 1)
	go func() { serveErr <- gs.Serve(grpcLis) }()
	ready.Store(true)
	log.Info("Serving compute protocol", "controller_addr", grpcLis.Addr().String(),
		"internal_http_addr", httpLis.Addr().String(), "workers", cfg.Workers, "processes", processes)

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
		rt.Stop()
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
	rt.Stop()
	log.Info("Shut down")
	return nil
}

// internalMux serves /metrics, /healthz, /readyz and /debug/pprof.
func internalMux(reg *prometheus.Registry, ready *atomic.Bool) *http.ServeMux {
	mux := http.NewServeMux()
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
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
