package runtime

import (
	"time"

	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// Fabric carries exchange messages between the processes of a runtime; see
// dataflow.Fabric. pkg/compute/mesh implements it over TCP and
// dataflow.NewLocalFabrics in memory.
type Fabric = dataflow.Fabric

// Role labels a runtime within its replica process (metrics, logs,
// introspection); it decides nothing inside the engine.
type Role int

// Roles of a runtime (docs/design/two-runtimes.md).
const (
	// Solo renders every dataflow and publishes nothing.
	Solo Role = iota
	// Maintenance renders Maintained dataflows and publishes their indexes.
	Maintenance
	// Interactive renders OneShotRead dataflows.
	Interactive
)

func (r Role) String() string {
	switch r {
	case Solo:
		return "solo"
	case Maintenance:
		return "maintenance"
	case Interactive:
		return "interactive"
	}
	return "unknown"
}

// Metrics receives the runtime's measurements; the replica implements it
// with Prometheus. Methods are called from worker goroutines and must be
// cheap and safe for concurrent use.
type Metrics interface {
	// WorkerStep observes the duration of one run-loop step of a worker.
	WorkerStep(worker int, d time.Duration)
	// Command counts a received command by type ("create_dataflow",
	// "allow_compaction", "peek", "cancel_peek", "update_configuration").
	Command(kind string)
	// PeekFinished observes a peek by result ("rows", "error", "canceled").
	PeekFinished(result string, d time.Duration)
	// ArrangementMaintenance adds time a worker spent maintaining
	// arrangements (sealing batches, merging spines) since its last report.
	ArrangementMaintenance(worker int, d time.Duration)
}

// StepProfile attributes one worker step: its phases and the command,
// operator schedule or step hook that took longest (dataflow.StepProfile).
type StepProfile = dataflow.StepProfile

// StepProfiler is implemented by Metrics that also want every worker
// step's attribution (to name the longest step's operator). Called on
// worker goroutines; it must be cheap.
type StepProfiler interface {
	StepProfile(p StepProfile)
}

type noMetrics struct{}

func (noMetrics) WorkerStep(int, time.Duration)             {}
func (noMetrics) Command(string)                            {}
func (noMetrics) PeekFinished(string, time.Duration)        {}
func (noMetrics) ArrangementMaintenance(int, time.Duration) {}
