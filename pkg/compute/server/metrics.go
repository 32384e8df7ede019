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

type nopMetrics struct{}

func (nopMetrics) CommandReceived(string)             {}
func (nopMetrics) PeekFinished(string, time.Duration) {}
func (nopMetrics) Reconciled(int, int, int)           {}
func (nopMetrics) Collections(int, int)               {}
