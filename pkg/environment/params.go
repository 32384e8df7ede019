package environment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/offload"
	"github.com/tandemdb/tandem/pkg/orchestrator"
	"github.com/tandemdb/tandem/pkg/pgwire"
	"github.com/tandemdb/tandem/pkg/placement"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// params are the system parameters the environment knows, with defaults.
// It is never written to.
var params = map[string]string{
	controller.ParamInteractiveDataflows: "off",
	// Whether point reads take the peek lanes to replicas that offer one
	// (docs/design/read-path.md, "The peek lane"); off: the command stream.
	controller.ParamEnablePeekLane: "on",
	// Where index peek walks run on a replica (inline, budgeted, offload)
	// and how many records a worker walks before offloading.
	"peek_walk_mode":   "budgeted",
	"peek_walk_budget": "10000",
	// Which runtime of a two-runtime replica serves fast-path peeks on
	// maintained indexes (docs/design/read-routing.md).
	"peek_routing": "sealed_hint",
	// Bounds of one read and of the server (docs/user-guide.md): bytes of
	// a read's answer (replicas and the controller refuse more, 54000),
	// bytes a statement may hold in the controller's memory (53200) and
	// concurrent client connections (53300).
	controller.ParamMaxResultSize: strconv.Itoa(controller.DefaultMaxResultSize),
	sql.ParamMaxQueryMemory:       strconv.Itoa(sql.DefaultMaxQueryMemory),
	pgwire.MaxConnectionsParam:    "100",
	// How many items (a load generator's keys, ...) a source produces in
	// one worker step before it yields; 0 turns the bound off
	// (docs/design/runtime.md, "Bounded steps").
	"source_step_items": "8192",
	// How many updates an arrangement's batch build sorts or merges in one
	// worker step before it yields; 0 turns the bound off
	// (docs/design/runtime.md, "Bounded steps").
	"arrange_step_updates": "16384",
	// How long a worker step schedules operators before it ends, so that
	// commands, peeks and frontier reports wait for at most one more
	// operator schedule; 0 turns the bound off (docs/design/runtime.md,
	// "Bounded steps").
	"worker_step_budget_ms": "10",
	// Read admission per cluster (docs/design/controller.md, "Read
	// admission"): reads running at once by kind (0: unbounded) and reads
	// waiting per kind before a read is refused with 53000.
	controller.ParamMaxConcurrentPeeks:        strconv.Itoa(controller.DefaultMaxConcurrentPeeks),
	controller.ParamMaxConcurrentOneShotReads: strconv.Itoa(controller.DefaultMaxConcurrentOneShotReads),
	controller.ParamMaxQueuedReads:            strconv.Itoa(controller.DefaultMaxQueuedReads),
}

// replicaParams are the parameters replicas need even at their default,
// so they are sent to the controller (and by it to every replica) at
// start.
var replicaParams = []string{controller.ParamMaxResultSize}

// maxConnectionsLimit is the largest max_connections, PostgreSQL's.
const maxConnectionsLimit = 262143

// normalizeParam validates a system parameter value and returns its
// canonical form.
func normalizeParam(name, value string) (string, error) {
	switch name {
	case controller.ParamInteractiveDataflows, controller.ParamEnablePeekLane:
		b, err := parseBool(value)
		if err != nil {
			return "", fmt.Errorf("parameter %q requires a Boolean value", name)
		}
		return map[bool]string{true: "on", false: "off"}[b], nil
	case "peek_walk_mode":
		m, err := offload.ParseMode(value)
		if err != nil {
			return "", err
		}
		return m.String(), nil
	case "peek_walk_budget":
		n, err := strconv.Atoi(value)
		if err != nil || n <= 0 {
			return "", fmt.Errorf("parameter %q requires a positive integer", name)
		}
		return strconv.Itoa(n), nil
	case controller.ParamMaxResultSize, sql.ParamMaxQueryMemory:
		n, err := parseBytes(value)
		if err != nil {
			return "", fmt.Errorf("parameter %q: %w", name, err)
		}
		return strconv.FormatUint(n, 10), nil
	case pgwire.MaxConnectionsParam:
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil || n < 1 || n > maxConnectionsLimit {
			return "", fmt.Errorf("parameter %q requires an integer between 1 and %d", name, maxConnectionsLimit)
		}
		return strconv.Itoa(n), nil
	case "source_step_items", "arrange_step_updates", "worker_step_budget_ms", controller.ParamMaxConcurrentPeeks, controller.ParamMaxConcurrentOneShotReads, controller.ParamMaxQueuedReads:
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			return "", fmt.Errorf("parameter %q requires a non-negative integer", name)
		}
		return strconv.Itoa(n), nil
	case "peek_routing":
		p, err := placement.ParsePolicy(value)
		if err != nil {
			return "", err
		}
		return p.String(), nil
	}
	return value, nil
}

// SystemParameter implements sql.SystemParameters.
func (e *Environment) SystemParameter(ctx context.Context, name string) (string, error) {
	if _, ok := params[name]; !ok {
		return "", sqlerr.Errorf(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	if v := e.cfg.Compute.Parameter(name); v != "" {
		return v, nil
	}
	return params[name], nil
}

// SetSystemParameter implements sql.SystemParameters. Changing
// enable_compute_interactive_dataflows rolls every replica, one at a time:
// the compute controller sequences the roll for local processes, the
// orchestrator on Kubernetes (Config.OrchestratorRollsReplicas).
func (e *Environment) SetSystemParameter(ctx context.Context, name, value string, reset bool) error {
	def, ok := params[name]
	if !ok {
		return sqlerr.Errorf(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	if reset {
		value = def
	}
	value, err := normalizeParam(name, value)
	if err != nil {
		return sqlerr.Errorf(sqlerr.InvalidParameterValue, "%v", err)
	}
	e.ddl.Lock()
	defer e.ddl.Unlock()
	if err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		if reset {
			return tx.ResetParam(name)
		}
		return tx.SetParam(name, value)
	}); err != nil {
		return err
	}
	old := e.cfg.Compute.Parameter(name)
	e.cfg.Compute.SetParameter(name, value)
	if name == controller.ParamInteractiveDataflows && old != value {
		rs, err := e.cfg.Catalog.Replicas("")
		if err != nil {
			return err
		}
		var cfgs []orchestrator.ReplicaConfig
		for _, r := range rs {
			cfgs = append(cfgs, e.replicaConfig(r))
		}
		if e.cfg.OrchestratorRollsReplicas {
			e.rolls.applyAtOnce(e.cfg.Compute, cfgs, e.log)
		} else {
			e.cfg.Compute.RollReplicas(cfgs)
		}
	}
	return nil
}

// byteUnits are PostgreSQL's memory units (powers of 1024).
var byteUnits = []struct {
	suffix string
	mult   uint64
}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}, {"B", 1}}

// parseBytes parses a size in bytes: an integer, optionally followed by
// one of PostgreSQL's memory units (B, kB, MB, GB, TB). 0 means no limit.
func parseBytes(v string) (uint64, error) {
	v = strings.TrimSpace(v)
	mult := uint64(1)
	for _, u := range byteUnits {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = strings.TrimSpace(num), u.mult
			break
		}
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, errors.New("requires a number of bytes, optionally with a unit (B, kB, MB, GB, TB)")
	}
	if n > (1<<63)/mult {
		return 0, errors.New("value is out of range")
	}
	return n * mult, nil
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on", "true", "yes", "1":
		return true, nil
	case "off", "false", "no", "0":
		return false, nil
	}
	return false, errors.New("not a Boolean")
}

// SystemParameterNames implements sql.SystemParameters.
func (e *Environment) SystemParameterNames(ctx context.Context) []string {
	var out []string
	for n := range params {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
