package server

import "time"

// Peek results, as metric labels.
const (
	resultRows     = "rows"
	resultStashed  = "stashed"
	resultError    = "error"
	resultCanceled = "canceled"
)

// Metrics receives the server's measurements. cmd/replica implements it with
// Prometheus; a nil Metrics in Config records nothing.
type Metrics interface {
	// CommandReceived counts one command of the given kind.
	CommandReceived(kind string)
	// PeekFinished records a peek's duration from command to terminal
	// response, by result (rows, stashed, error, canceled).
	PeekFinished(result string, d time.Duration)
	// Reconciled counts the outcome of one reconciliation.
	Reconciled(reused, replaced, dropped int)
	// Collections reports how many live collections are hydrated and not.
	Collections(hydrated, hydrating int)
}

// StageMetrics is implemented by a Metrics that also times the stages of
// a read on the replica: "command" (from the peek coming off the gRPC
// stream to its hand-over to the runtime: the server's command queue,
// decoding and checks) and "runtime" (from there to the runtime's answer:
// routing, waiting for the time to be sealed, the walk). The controller
// times the whole round trip (pkg/readtrace, stage "replica").
type StageMetrics interface {
	ReadStage(stage string, d time.Duration)
}

// LaneMetrics is implemented by a Metrics that also counts the commands
// that came over peek lanes (lane.go); CommandReceived counts them too.
type LaneMetrics interface {
	LaneCommand(kind string)
}

// Read stages on the replica, as metric labels.
const (
	stageCommand = "command"
	stageRuntime = "runtime"
)

// readStage records a stage when the metrics time stages.
func (s *Server) readStage(stage string, d time.Duration) {
	if sm, ok := s.metrics.(StageMetrics); ok {
		sm.ReadStage(stage, d)
	}
}

type nopMetrics struct{}

func (nopMetrics) CommandReceived(string)             {}
func (nopMetrics) PeekFinished(string, time.Duration) {}
func (nopMetrics) Reconciled(int, int, int)           {}
func (nopMetrics) Collections(int, int)               {}
