package replica

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/server"
	"github.com/tandemdb/tandem/pkg/placement"
	"github.com/tandemdb/tandem/pkg/sharing"
)

// Config is what a replica process is assembled from.
type Config struct {
	// Workers per runtime, this process's index and the replica's
	// process count.
	Workers, Process, Processes int
	// TwoRuntimes runs a maintenance and an interactive runtime instead of
	// one Solo runtime.
	TwoRuntimes bool
	// Sources and StorageSinks are the runtimes' table sources and
	// materialized-view sinks (StorageSinks may be nil).
	Sources      render.SourceKinds
	StorageSinks render.StorageSinkFactory
	// Fabric connects the runtime of role to its peers (nil fabric for a
	// one-process runtime); the returned func closes it.
	Fabric func(role runtime.Role) (runtime.Fabric, func(), error)
	// Metrics returns the recorder of the runtime of role (the
	// interactive runtime's also records the peeks its wrapper answers
	// from the maintenance runtime's indexes).
	Metrics func(role runtime.Role) runtime.Metrics
	// ServerMetrics and Memory configure the protocol server.
	ServerMetrics server.Metrics
	Memory        *server.MemoryGuard
	// LaneAddress is the peek lane the process serves, advertised to the
	// controller (server.Config.LaneAddress); empty for none.
	LaneAddress string
	// MaintenanceNice, if positive, lowers the OS scheduling priority of
	// the maintenance runtime's worker threads by that much in a
	// two-runtime process (Linux; runtime.Config.WorkerNice), so reads win
	// a core over index maintenance. A Solo runtime is not reniced: its
	// reads run on the same workers.
	MaintenanceNice int
	// OnFatal is told of a runtime failure (the process must exit).
	OnFatal func(error)
	Log     logr.Logger
}

// Process is one assembled replica process.
type Process struct {
	// Server serves the compute protocol (register it on a gRPC server
	// and Run it).
	Server *server.Server
	// Runtimes are the process's runtimes: the Solo one, or maintenance
	// then interactive.
	Runtimes []*runtime.Runtime
	// Registry and Multiplexer are those of a two-runtime process (nil
	// for Solo): the published indexes and the peek router.
	Registry    *sharing.Registry
	Multiplexer *placement.Multiplexer

	closers []func()
}

// Role is the role the process's server-side series and logs carry: Solo,
// or Maintenance for a two-runtime process (the interactive runtime's
// series carry Interactive).
func (c Config) Role() runtime.Role {
	if c.TwoRuntimes {
		return runtime.Maintenance
	}
	return runtime.Solo
}

// New assembles the process: the server, its engine and the runtimes,
// wired to each other. The runtimes are not started (Start).
//
// Every piece is built after what it calls back into and before what it
// calls down to, so each takes a factory of the pieces below it (see the
// package documentation for the order).
func New(cfg Config) (_ *Process, err error) {
	if cfg.Fabric == nil || cfg.Metrics == nil {
		return nil, errors.New("replica: Config.Fabric and Config.Metrics are required")
	}
	p := &Process{}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	scfg := server.Config{Codec: server.PlanCodec{}, Log: cfg.Log.WithName("server"), Metrics: cfg.ServerMetrics, Memory: cfg.Memory, LaneAddress: cfg.LaneAddress}
	p.Server, err = server.NewWithBackend(scfg, func(deliver func(server.Event)) (server.Backend, error) {
		eng, err := server.NewEngine(deliver, cfg.Log.WithName("engine"), func(respond func(runtime.Response)) (runtime.Commands, error) {
			if cfg.TwoRuntimes {
				return p.twoRuntimes(cfg, respond)
			}
			return p.newRuntime(cfg, runtime.Solo, respond, nil, nil)
		})
		if err != nil {
			return nil, err
		}
		return eng, nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// twoRuntimes builds the maintenance and interactive runtimes behind the
// multiplexer and returns the multiplexer.
func (p *Process) twoRuntimes(cfg Config, respond func(runtime.Response)) (runtime.Commands, error) {
	shared := sharing.NewRegistry()
	mux, err := placement.NewMultiplexer(respond, placement.RouteSealedHint, func(respondFor func(runtime.Role) func(runtime.Response)) (placement.Runtimes, error) {
		maint, err := placement.NewMaintenance(shared, func(pub runtime.Publisher) (runtime.Commands, error) {
			return p.newRuntime(cfg, runtime.Maintenance, respondFor(runtime.Maintenance), pub, nil)
		})
		if err != nil {
			return placement.Runtimes{}, err
		}
		inter, err := placement.NewInteractive(placement.InteractiveConfig{
			Registry: shared, Workers: cfg.Workers, Process: cfg.Process,
			Respond: respondFor(runtime.Interactive), Metrics: cfg.Metrics(runtime.Interactive),
		}, func(si render.SharedImports) (runtime.Commands, error) {
			return p.newRuntime(cfg, runtime.Interactive, respondFor(runtime.Interactive), nil, si)
		})
		if err != nil {
			return placement.Runtimes{}, err
		}
		p.closers = append(p.closers, inter.Close)
		return placement.Runtimes{Maintenance: maint, Interactive: inter, Sealed: inter.Sealed}, nil
	})
	if err != nil {
		return nil, err
	}
	p.Registry, p.Multiplexer = shared, mux
	return mux, nil
}

// newRuntime connects the mesh of role and creates its runtime.
func (p *Process) newRuntime(cfg Config, role runtime.Role, respond func(runtime.Response), pub runtime.Publisher, shared render.SharedImports) (runtime.Commands, error) {
	nice := 0
	if role == runtime.Maintenance {
		nice = cfg.MaintenanceNice
	}
	fabric, closeFabric, err := cfg.Fabric(role)
	if err != nil {
		return nil, fmt.Errorf("connect the %s runtime's mesh: %w", role, err)
	}
	rt, err := runtime.New(runtime.Config{
		Workers: cfg.Workers, Processes: cfg.Processes, Process: cfg.Process, Role: role, Fabric: fabric,
		Sources: cfg.Sources, StorageSinks: cfg.StorageSinks, Respond: respond, Metrics: cfg.Metrics(role),
		OnFatal: cfg.OnFatal, Publisher: pub, Shared: shared,
		WorkerNice: nice, OnWorkerNiceError: func(w int, err error) {
			cfg.Log.Error(err, "Worker runs at the default priority", "worker", w)
		},
		// The engine and the multiplexer call Peek holding no lock their
		// Respond takes, and queue what Respond gives them.
		RespondInline: true,
	})
	if err != nil {
		closeFabric()
		return nil, fmt.Errorf("create %s runtime: %w", role, err)
	}
	p.closers = append(p.closers, closeFabric)
	p.Runtimes = append(p.Runtimes, rt)
	return rt, nil
}

// Start starts every runtime's workers until ctx ends or Stop.
func (p *Process) Start(ctx context.Context) {
	for _, rt := range p.Runtimes {
		rt.Start(ctx)
	}
}

// Stop stops every runtime.
func (p *Process) Stop() {
	for _, rt := range p.Runtimes {
		rt.Stop()
	}
}

// Close releases the meshes and the interactive wrapper's reads, last
// acquired first. Call it after Stop (or after a failed New, which calls
// it itself).
func (p *Process) Close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
	p.closers = nil
}
