package rollout

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Condition types and reasons this package publishes. The types match the ComputeReplica
// API; they are repeated here so that the policy does not depend on the API package.
const (
	TypeAvailable   = "Available"
	TypeProgressing = "Progressing"
	TypeDegraded    = "Degraded"

	ReasonCreating                 = "Creating"
	ReasonRolloutStarted           = "RolloutStarted"
	ReasonRollingPods              = "RollingPods"
	ReasonWaitingForAvailable      = "WaitingForAvailable"
	ReasonWaitingForHydration      = "WaitingForHydration"
	ReasonWaitingForTurn           = "WaitingForTurn"
	ReasonPaused                   = "RolloutPaused"
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	ReasonRolloutComplete          = "RolloutComplete"
	ReasonUpToDate                 = "UpToDate"
	ReasonProcessesReady           = "ProcessesReady"
	ReasonProcessesNotReady        = "ProcessesNotReady"
	ReasonAsExpected               = "AsExpected"
)

// ConditionStatus mirrors metav1.ConditionStatus.
type ConditionStatus string

// Condition statuses.
const (
	True    ConditionStatus = "True"
	False   ConditionStatus = "False"
	Unknown ConditionStatus = "Unknown"
)

// Condition is a condition to publish; the caller stamps observedGeneration and the
// transition time.
type Condition struct {
	Type    string
	Status  ConditionStatus
	Reason  string
	Message string
}

// Pod is what the policy needs to know about one pod of a replica.
type Pod struct {
	Name string
	// Hash is the pod's pod-template-hash label.
	Hash string
	// Ready is the pod's Ready condition; ReadySince is its last transition time.
	Ready      bool
	ReadySince time.Time
	// Terminating is true once the pod has a deletion timestamp.
	Terminating bool
}

// Replica is what the reconciler observed about one replica.
type Replica struct {
	Name       string
	Generation int64
	// Processes is the desired number of processes (pods).
	Processes int
	// DesiredHash is the hash of the pod template rendered from the current spec.
	DesiredHash string
	// AppliedHash is the hash on the existing StatefulSet's template; empty when there is
	// no StatefulSet yet.
	AppliedHash string
	Pods        []Pod
	// RolloutStart is the start of the rollout under way, from status; nil when none.
	RolloutStart     *time.Time
	Paused           bool
	MinReady         time.Duration
	ProgressDeadline time.Duration
	// Managed is true when a controller manages the cluster: rollouts then also wait for
	// Hydrated.
	Managed bool
	// Hydrated is the controller's Hydrated condition is True and its observedGeneration.
	Hydrated           bool
	HydratedGeneration int64
	// Changes are why the desired template differs from the applied one (empty when
	// they agree); Reasons are the causes of the rollout under way, from status.
	Changes []Change
	Reasons []string
}

// Change is one reason the pod template changed (ImageChanged, SizeChanged, ...) and what
// changed; the reconciler computes them from the applied and desired templates.
type Change struct {
	Reason  string
	Message string
}

// Peer summarises another replica of the same cluster for the one-at-a-time rule.
type Peer struct {
	Name string
	// Rolling is true while the peer has a rollout under way (or stuck).
	Rolling bool
	// Available is the peer's Available condition.
	Available bool
}

// State is the phase of a replica relative to its desired pod template.
type State int

// States, in the order a rollout goes through them.
const (
	// StateMissing: no StatefulSet exists yet.
	StateMissing State = iota
	// StateOutdated: the StatefulSet's template is not the desired one and no rollout has
	// been recorded.
	StateOutdated
	// StateRolling: a rollout is recorded and some pods (or the StatefulSet's template) do
	// not have the desired template yet.
	StateRolling
	// StateStarting: every pod has the desired template but not all are ready long enough.
	StateStarting
	// StateHydrating: Available, but the managing controller has not reported Hydrated.
	StateHydrating
	// StateCurrent: Available (and Hydrated when managed) with the desired template.
	StateCurrent
)

func (s State) String() string {
	switch s {
	case StateMissing:
		return "Missing"
	case StateOutdated:
		return "Outdated"
	case StateRolling:
		return "Rolling"
	case StateStarting:
		return "Starting"
	case StateHydrating:
		return "Hydrating"
	case StateCurrent:
		return "Current"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Event is a Kubernetes event to record on the replica.
type Event struct {
	Warning bool
	Reason  string
	Message string
}

// Decision is what to do for one replica.
type Decision struct {
	State State
	// ApplyStatefulSet says whether to apply the desired StatefulSet. It is false while a
	// rollout waits (the StatefulSet keeps its old template so that a pod that dies comes
	// back with the template its peers run).
	ApplyStatefulSet bool
	// DeletePods names the pods to delete, all of them at once.
	DeletePods []string
	// RolloutStart is the value for status.rolloutStartTime (nil clears it). When a
	// rollout starts it must be written before any pod is deleted.
	RolloutStart *time.Time
	// Reasons is the value for status.rolloutReasons: why the replica rolls or waits to
	// (nil clears it).
	Reasons []string
	// Rolling is true when the replica now counts as rolling for its peers.
	Rolling bool
	// Available is the replica's availability after this decision (for its peers).
	Available  bool
	Conditions []Condition
	Events     []Event
	// RequeueAfter asks to look again after this long even if nothing changes (min-ready
	// elapsing, progress deadline); zero means only on change.
	RequeueAfter time.Duration
}

// Observe classifies a replica and reports whether it is Available (every desired process
// has a live pod, of any template, that has been ready for min-ready seconds) and, when all
// that is missing is time, how long until it will be.
func Observe(now time.Time, r Replica) (s State, available bool, availableIn time.Duration) {
	live, outdated, readyLongEnough, readyWaiting := 0, 0, 0, 0
	var wait time.Duration
	for _, p := range r.Pods {
		if p.Terminating {
			continue
		}
		live++
		if p.Hash != r.DesiredHash {
			outdated++
		}
		if !p.Ready {
			continue
		}
		if left := p.ReadySince.Add(r.MinReady).Sub(now); left > 0 {
			readyWaiting++
			wait = max(wait, left)
			continue
		}
		readyLongEnough++
	}
	available = live == r.Processes && readyLongEnough == r.Processes
	if live == r.Processes && readyWaiting > 0 && readyLongEnough+readyWaiting == r.Processes {
		availableIn = wait
	}
	switch {
	case r.AppliedHash == "":
		return StateMissing, available, availableIn
	case r.AppliedHash != r.DesiredHash && r.RolloutStart == nil:
		return StateOutdated, available, availableIn
	case r.AppliedHash != r.DesiredHash || outdated > 0:
		// A recorded rollout whose template is not (visibly) applied yet: the operator
		// stopped between recording it and applying, or the cache lags the apply. Either
		// way the replica is already being rolled; carry on.
		return StateRolling, available, availableIn
	case !available:
		return StateStarting, available, availableIn
	case r.Managed && !(r.Hydrated && r.HydratedGeneration >= r.Generation):
		return StateHydrating, available, availableIn
	default:
		return StateCurrent, available, availableIn
	}
}

// Decide says what to do for replica r of a cluster whose other replicas are peers.
func Decide(now time.Time, r Replica, peers []Peer) Decision {
	state, available, availableIn := Observe(now, r)
	d := Decision{State: state, Available: available, RolloutStart: r.RolloutStart, Rolling: r.RolloutStart != nil,
		Reasons: r.Reasons}
	d.Conditions = append(d.Conditions, AvailableCondition(r, available))
	deadline := func() (Condition, bool) {
		if r.RolloutStart == nil {
			return Condition{}, false
		}
		left := r.RolloutStart.Add(r.ProgressDeadline).Sub(now)
		if left > 0 {
			d.RequeueAfter = minPositive(d.RequeueAfter, left)
			return Condition{}, false
		}
		return Condition{TypeProgressing, False, ReasonProgressDeadlineExceeded,
			// No elapsed time in the message: a message that changes on every pass would
			// rewrite status, and so trigger another pass, forever.
			because(d.Reasons) + fmt.Sprintf("rollout started at %s has not completed within %s", r.RolloutStart.UTC().Format(time.RFC3339), r.ProgressDeadline)}, true
	}
	progressing := func(reason, msg string) {
		if c, exceeded := deadline(); exceeded {
			d.Conditions = append(d.Conditions, c, Condition{TypeDegraded, True, ReasonProgressDeadlineExceeded, c.Message})
			return
		}
		d.Conditions = append(d.Conditions, Condition{TypeProgressing, True, reason, because(d.Reasons) + msg},
			Condition{TypeDegraded, False, ReasonAsExpected, ""})
	}
	if availableIn > 0 {
		d.RequeueAfter = availableIn
	}

	switch state {
	case StateMissing:
		d.Reasons = nil
		if d.RolloutStart == nil {
			start := now
			d.RolloutStart = &start
		}
		d.ApplyStatefulSet, d.Rolling = true, true
		d.Conditions = append(d.Conditions,
			Condition{TypeProgressing, True, ReasonCreating, fmt.Sprintf("creating %d processes", r.Processes)},
			Condition{TypeDegraded, False, ReasonAsExpected, ""})
		d.Events = append(d.Events, Event{Reason: "Creating", Message: fmt.Sprintf("Created StatefulSet with %d processes", r.Processes)})

	case StateOutdated:
		blocker := blockingPeer(peers, available)
		d.Reasons = reasonsOf(r.Changes)
		switch {
		case r.Paused:
			d.Conditions = append(d.Conditions,
				Condition{TypeProgressing, False, ReasonPaused, because(d.Reasons) + "rollout to pod template " + r.DesiredHash + " is paused"},
				Condition{TypeDegraded, False, ReasonAsExpected, ""})
		case blocker != "":
			d.Conditions = append(d.Conditions,
				Condition{TypeProgressing, True, ReasonWaitingForTurn, because(d.Reasons) + "waiting for " + blocker + " before rolling"},
				Condition{TypeDegraded, False, ReasonAsExpected, ""})
		default:
			start := now
			d.ApplyStatefulSet, d.RolloutStart, d.Rolling, d.Available = true, &start, true, false
			d.DeletePods = livePods(r, func(Pod) bool { return true })
			msg := fmt.Sprintf("rolling all %d processes from pod template %s to %s", len(d.DeletePods), r.AppliedHash, r.DesiredHash)
			d.Conditions = append(d.Conditions[:0], AvailableCondition(r, false),
				Condition{TypeProgressing, True, ReasonRolloutStarted, because(d.Reasons) + msg},
				Condition{TypeDegraded, False, ReasonAsExpected, ""})
			d.Events = append(d.Events, changeEvents(r.Changes, nil)...)
			d.Events = append(d.Events, Event{Reason: "RolloutStarted", Message: "Started " + because(d.Reasons) + msg})
		}

	case StateRolling:
		// The template was applied when the rollout started; finish deleting what is left
		// of the old pods (the operator may have stopped in between).
		if d.RolloutStart == nil {
			start := now
			d.RolloutStart = &start
		}
		d.Rolling, d.ApplyStatefulSet = true, true
		// The spec may have changed again since the rollout started: add the new causes.
		d.Events = append(d.Events, changeEvents(r.Changes, r.Reasons)...)
		d.Reasons = mergeReasons(r.Reasons, reasonsOf(r.Changes))
		d.DeletePods = livePods(r, func(p Pod) bool { return p.Hash != r.DesiredHash })
		progressing(ReasonRollingPods, fmt.Sprintf("deleting %d pods with an old pod template", len(d.DeletePods)))

	case StateStarting:
		d.ApplyStatefulSet = true
		if r.RolloutStart == nil {
			// Not in a rollout: processes failed on their own.
			d.Reasons = nil
			d.Conditions = append(d.Conditions,
				Condition{TypeProgressing, False, ReasonUpToDate, "pods run pod template " + r.DesiredHash},
				Condition{TypeDegraded, True, ReasonProcessesNotReady, notReadyMessage(now, r)})
			break
		}
		progressing(ReasonWaitingForAvailable, notReadyMessage(now, r))

	case StateHydrating:
		d.ApplyStatefulSet = true
		if r.RolloutStart == nil {
			d.Reasons = nil
			d.Conditions = append(d.Conditions,
				Condition{TypeProgressing, False, ReasonUpToDate, "pods run pod template " + r.DesiredHash},
				Condition{TypeDegraded, False, ReasonAsExpected, ""})
			break
		}
		progressing(ReasonWaitingForHydration, fmt.Sprintf("waiting for the controller to report Hydrated for generation %d", r.Generation))

	case StateCurrent:
		d.ApplyStatefulSet = true
		// Every replica gets here through a rollout (creation counts as one), so the
		// reason stays RolloutComplete until the next rollout.
		reason, msg := ReasonRolloutComplete, "pods run pod template "+r.DesiredHash
		if r.RolloutStart != nil {
			d.Events = append(d.Events, Event{Reason: "RolloutCompleted", Message: fmt.Sprintf("%sRolled to pod template %s in %s", because(r.Reasons), r.DesiredHash, now.Sub(*r.RolloutStart).Round(time.Second))})
		}
		d.RolloutStart, d.Rolling, d.Reasons = nil, false, nil
		d.Conditions = append(d.Conditions,
			Condition{TypeProgressing, False, reason, msg},
			Condition{TypeDegraded, False, ReasonAsExpected, ""})

	default:
		// Unreachable: Observe returns only the states above. Hold rather than act.
		d.Conditions = append(d.Conditions, Condition{TypeDegraded, True, "InternalError", "unhandled rollout state " + state.String()})
	}
	for _, c := range d.Conditions {
		if c.Reason == ReasonProgressDeadlineExceeded && c.Type == TypeProgressing {
			d.Events = append(d.Events, Event{Warning: true, Reason: ReasonProgressDeadlineExceeded, Message: c.Message})
		}
	}
	return d
}

// because prefixes a message with the causes of a rollout ("ImageChanged, SizeChanged: ").
func because(reasons []string) string {
	if len(reasons) == 0 {
		return ""
	}
	return strings.Join(reasons, ", ") + ": "
}

func reasonsOf(changes []Change) []string {
	var out []string
	for _, c := range changes {
		out = append(out, c.Reason)
	}
	return out
}

// mergeReasons appends to have the reasons it lacks, keeping order.
func mergeReasons(have, more []string) []string {
	out := append([]string(nil), have...)
	for _, r := range more {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// changeEvents are one event per change whose reason is not in recorded: the reason of
// the event is the change's (ImageChanged, SizeChanged, ...).
func changeEvents(changes []Change, recorded []string) []Event {
	var out []Event
	for _, c := range changes {
		if !slices.Contains(recorded, c.Reason) {
			out = append(out, Event{Reason: c.Reason, Message: "Rolling: " + c.Message})
		}
	}
	return out
}

// blockingPeer names a peer that forbids starting a rollout now, or "" when none does.
// A rolling peer always blocks; an unavailable peer blocks unless this replica is itself
// unavailable (rolling it then takes nothing down that is up).
func blockingPeer(peers []Peer, selfAvailable bool) string {
	sorted := append([]Peer(nil), peers...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, p := range sorted {
		if p.Rolling {
			return p.Name + " (rolling)"
		}
	}
	if !selfAvailable {
		return ""
	}
	for _, p := range sorted {
		if !p.Available {
			return p.Name + " (unavailable)"
		}
	}
	return ""
}

// AvailableCondition is the Available condition of a replica whose availability is known.
func AvailableCondition(r Replica, available bool) Condition {
	if available {
		return Condition{TypeAvailable, True, ReasonProcessesReady, fmt.Sprintf("all %d processes ready", r.Processes)}
	}
	return Condition{TypeAvailable, False, ReasonProcessesNotReady, fmt.Sprintf("%d of %d processes ready", readyCount(r), r.Processes)}
}

func readyCount(r Replica) int {
	n := 0
	for _, p := range r.Pods {
		if !p.Terminating && p.Ready {
			n++
		}
	}
	return n
}

func notReadyMessage(now time.Time, r Replica) string {
	var waiting []string
	for _, p := range r.Pods {
		switch {
		case p.Terminating:
			waiting = append(waiting, p.Name+" terminating")
		case !p.Ready:
			waiting = append(waiting, p.Name+" not ready")
		case p.ReadySince.Add(r.MinReady).After(now):
			waiting = append(waiting, p.Name+" ready for less than min-ready seconds")
		}
	}
	if missing := r.Processes - len(r.Pods); missing > 0 {
		waiting = append(waiting, fmt.Sprintf("%d pods missing", missing))
	}
	return fmt.Sprintf("%d of %d processes ready: %s", readyCount(r), r.Processes, strings.Join(waiting, ", "))
}

func livePods(r Replica, keep func(Pod) bool) []string {
	var names []string
	for _, p := range r.Pods {
		if !p.Terminating && keep(p) {
			names = append(names, p.Name)
		}
	}
	sort.Strings(names)
	return names
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || b < a {
		return b
	}
	return a
}
