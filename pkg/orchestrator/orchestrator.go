package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNotFound is returned for a replica the orchestrator does not know.
var ErrNotFound = errors.New("replica not found")

// ErrNotSupported is returned by orchestrators that cannot be used yet.
var ErrNotSupported = errors.New("not yet supported")

// ReplicaID names a replica within the environment.
type ReplicaID struct {
	Cluster string
	Replica string
}

// String prints "cluster/replica".
func (id ReplicaID) String() string { return id.Cluster + "/" + id.Replica }

// ReplicaConfig is the desired shape of a replica.
type ReplicaConfig struct {
	ID ReplicaID
	// Processes is the number of replica processes (scale); at least 1.
	Processes int
	// Workers is the number of workers per process; at least 1.
	Workers int
	// Interactive provisions the interactive runtime beside the maintenance
	// runtime (a second worker port per process).
	Interactive bool
	// LogLevel is passed to the replica processes ("info", "debug", ...).
	LogLevel string
}

// Validate reports a config that cannot be provisioned.
func (c ReplicaConfig) Validate() error {
	switch {
	case c.ID.Cluster == "" || c.ID.Replica == "":
		return fmt.Errorf("replica config %q: cluster and replica names are required", c.ID)
	case c.Processes < 1:
		return fmt.Errorf("replica config %s: processes must be >= 1, got %d", c.ID, c.Processes)
	case c.Workers < 1:
		return fmt.Errorf("replica config %s: workers must be >= 1, got %d", c.ID, c.Workers)
	}
	return nil
}

// ProcessState is the lifecycle state of one replica process.
type ProcessState string

const (
	// ProcessStarting means the process is being (re)started.
	ProcessStarting ProcessState = "starting"
	// ProcessRunning means the process is alive.
	ProcessRunning ProcessState = "running"
	// ProcessBackoff means the process died and waits to be restarted.
	ProcessBackoff ProcessState = "backoff"
	// ProcessStopped means the process was stopped on purpose.
	ProcessStopped ProcessState = "stopped"
)

// ProcessStatus describes one process of a replica.
type ProcessStatus struct {
	Index int
	State ProcessState
	PID   int
	// Restarts counts unplanned restarts since the replica was ensured.
	Restarts int
	// LastExit describes the last unplanned exit, empty if none.
	LastExit string
	// ComputeCtlAddr is the host:port of the process's computectl gRPC
	// endpoint; the controller dials it.
	ComputeCtlAddr string
	// InternalHTTPAddr serves the process's metrics and health.
	InternalHTTPAddr string
	// Started is when the current incarnation started.
	Started time.Time
}

// ReplicaStatus describes a replica and its processes.
type ReplicaStatus struct {
	Config    ReplicaConfig
	Processes []ProcessStatus
}

// ComputeCtlAddrs returns the computectl addresses, indexed by process.
func (s ReplicaStatus) ComputeCtlAddrs() []string {
	out := make([]string, len(s.Processes))
	for i, p := range s.Processes {
		out[i] = p.ComputeCtlAddr
	}
	return out
}

// Orchestrator provisions compute replicas.
type Orchestrator interface {
	// EnsureReplica makes the replica exist with the given config.
	EnsureReplica(ctx context.Context, cfg ReplicaConfig) error
	// RemoveReplica stops and forgets a replica; removing an unknown
	// replica is not an error.
	RemoveReplica(ctx context.Context, id ReplicaID) error
	// ListReplicas returns the replicas the orchestrator manages.
	ListReplicas(ctx context.Context) ([]ReplicaID, error)
	// Status returns a replica's processes and their addresses, or
	// ErrNotFound.
	Status(ctx context.Context, id ReplicaID) (ReplicaStatus, error)
}
