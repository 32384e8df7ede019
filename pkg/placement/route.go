package placement

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
)

// Policy routes fast-path peeks on maintained indexes between the runtimes
// of a two-runtime replica. Peeks on indexes the interactive runtime renders
// (transient one-shot indexes) always go to it.
type Policy int

const (
	// RouteMaintenance serves every maintained-index peek on the
	// maintenance runtime, with its budgeted walk and offload.
	RouteMaintenance Policy = iota
	// RouteInteractive serves every maintained-index peek from the
	// published copy on the interactive runtime.
	RouteInteractive
	// RouteSealedHint serves a peek on the interactive runtime only when
	// its time is already sealed in the published upper on every worker of
	// this process (it can be answered at once), and on maintenance
	// otherwise, where it would wait for the same seal anyway.
	RouteSealedHint
)

func (p Policy) String() string {
	switch p {
	case RouteMaintenance:
		return "maintenance"
	case RouteInteractive:
		return "interactive"
	case RouteSealedHint:
		return "sealed_hint"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// ParsePolicy parses the system parameter value.
func ParsePolicy(s string) (Policy, error) {
	for _, p := range []Policy{RouteMaintenance, RouteInteractive, RouteSealedHint} {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("unknown peek routing policy %q (want maintenance, interactive or sealed_hint)", s)
}

// SealedFunc reports whether index id's published copy is sealed at t on
// every worker of this process.
type SealedFunc func(id plan.GlobalID, t frontier.Time) bool

// Route picks the runtime for a peek on a maintained index.
func Route(p Policy, id plan.GlobalID, t frontier.Time, sealed SealedFunc) runtime.Role {
	switch p {
	case RouteInteractive:
		return runtime.Interactive
	case RouteSealedHint:
		if sealed != nil && sealed(id, t) {
			return runtime.Interactive
		}
	}
	return runtime.Maintenance
}
