package placement

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/sharing"
)

// newTestMaintenance wraps inner, a fake that publishes nothing.
func newTestMaintenance(t testing.TB, reg *sharing.Registry, inner runtime.Commands) *Maintenance {
	t.Helper()
	x, err := NewMaintenance(reg, func(runtime.Publisher) (runtime.Commands, error) { return inner, nil })
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// newTestInteractive wraps inner, a fake that imports nothing.
func newTestInteractive(t testing.TB, cfg InteractiveConfig, inner runtime.Commands) *Interactive {
	t.Helper()
	return newInteractiveRuntime(t, cfg, func(render.SharedImports) (runtime.Commands, error) { return inner, nil })
}

// newInteractiveRuntime wraps the runtime newInner builds.
func newInteractiveRuntime(t testing.TB, cfg InteractiveConfig, newInner func(render.SharedImports) (runtime.Commands, error)) *Interactive {
	t.Helper()
	x, err := NewInteractive(cfg, newInner)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// runtimeWith returns a factory of a runtime built from cfg with the
// wrapper's shared imports, storing it in *rt.
func runtimeWith(cfg runtime.Config, rt **runtime.Runtime) func(render.SharedImports) (runtime.Commands, error) {
	return func(shared render.SharedImports) (runtime.Commands, error) {
		cfg.Shared = shared
		r, err := runtime.New(cfg)
		if err != nil {
			return nil, err
		}
		*rt = r
		return r, nil
	}
}

// mustMultiplexer returns m; the fakes' build never fails.
func mustMultiplexer(m *Multiplexer, err error) *Multiplexer {
	if err != nil {
		panic(err)
	}
	return m
}

// testProcess is a two-runtime process assembled as pkg/replica does.
type testProcess struct {
	mux      *Multiplexer
	mrt, irt *runtime.Runtime
	inter    *Interactive
}

// newTestProcess builds the maintenance and interactive runtimes (from
// rcfg of their role) behind a multiplexer answering to respond; sealed
// says whether the interactive wrapper's Sealed is the routing hint.
func newTestProcess(t testing.TB, workers int, policy Policy, sealed bool, respond func(runtime.Response), rcfg func(runtime.Role) runtime.Config) *testProcess {
	t.Helper()
	reg := sharing.NewRegistry()
	p := &testProcess{}
	mux, err := NewMultiplexer(respond, policy, func(respondFor func(runtime.Role) func(runtime.Response)) (Runtimes, error) {
		maint, err := NewMaintenance(reg, func(pub runtime.Publisher) (runtime.Commands, error) {
			c := rcfg(runtime.Maintenance)
			c.Role, c.Respond, c.Publisher = runtime.Maintenance, respondFor(runtime.Maintenance), pub
			mrt, err := runtime.New(c)
			p.mrt = mrt
			return mrt, err
		})
		if err != nil {
			return Runtimes{}, err
		}
		ic := rcfg(runtime.Interactive)
		ic.Role, ic.Respond = runtime.Interactive, respondFor(runtime.Interactive)
		p.inter, err = NewInteractive(InteractiveConfig{Registry: reg, Workers: workers, Respond: ic.Respond}, runtimeWith(ic, &p.irt))
		if err != nil {
			return Runtimes{}, err
		}
		rts := Runtimes{Maintenance: maint, Interactive: p.inter}
		if sealed {
			rts.Sealed = p.inter.Sealed
		}
		return rts, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p.mux = mux
	return p
}
