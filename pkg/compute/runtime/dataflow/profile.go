package dataflow

import (
	"fmt"
	"time"
)

// StepPart names what the longest piece of a worker step was.
type StepPart uint8

// Parts of a worker step.
const (
	// PartNone: the step did nothing measurable.
	PartNone StepPart = iota
	// PartCommand: one command from the inbox (building or dropping a
	// dataflow, a broadcast such as a peek or a compaction).
	PartCommand
	// PartOperator: one operator's Schedule.
	PartOperator
	// PartHook: the step hook (frontier reports, peeks).
	PartHook
)

func (p StepPart) String() string {
	switch p {
	case PartCommand:
		return "command"
	case PartOperator:
		return "operator"
	case PartHook:
		return "step hook"
	}
	return "none"
}

// StepProfile attributes one worker step: how long its three phases took
// and which single piece (one command, one operator schedule, the hook) took
// longest. It names that piece without formatting anything, so building one
// per step costs no allocation; Where formats it.
type StepProfile struct {
	Worker int
	// Total is the step's duration; Inbox, Operators and Hook are its
	// phases (draining and handling the inbox, scheduling operators, the
	// step hook).
	Total, Inbox, Operators, Hook time.Duration
	// CPU is the CPU time the worker's thread used in the step (Linux
	// only, else 0): Total minus CPU is time spent waiting for a core
	// (other threads, the garbage collector's, other processes).
	CPU time.Duration
	// Longest is the part that took LongestTime; for an operator, Dataflow
	// and Operator name it; for a command, Command says what it did
	// ("build", "drop", "command") and Dataflow which dataflow, if any.
	Longest             StepPart
	LongestTime         time.Duration
	Dataflow, Operator  string
	Command             string
	DataflowSeq         uint64
	OperatorIndex       int
	OperatorInvocations int64 // schedules of that operator so far
}

// Where describes the step's longest part, e.g. `operator "Arrange kv"
// (#2) of dataflow "kv_idx" (3) for 340ms`.
func (p StepProfile) Where() string {
	switch p.Longest {
	case PartOperator:
		return fmt.Sprintf("operator %q (#%d, schedule %d) of dataflow %q (%d) for %v",
			p.Operator, p.OperatorIndex, p.OperatorInvocations, p.Dataflow, p.DataflowSeq, p.LongestTime)
	case PartCommand:
		if p.Dataflow != "" {
			return fmt.Sprintf("command %s of dataflow %q (%d) for %v", p.Command, p.Dataflow, p.DataflowSeq, p.LongestTime)
		}
		return fmt.Sprintf("command %s for %v", p.Command, p.LongestTime)
	case PartHook:
		return fmt.Sprintf("step hook for %v", p.LongestTime)
	}
	return "nothing"
}

// String is the whole profile in one line.
func (p StepProfile) String() string {
	return fmt.Sprintf("worker %d step %v, cpu %v (inbox %v, operators %v, hook %v): longest %s",
		p.Worker, p.Total, p.CPU, p.Inbox, p.Operators, p.Hook, p.Where())
}

// stepTimer accumulates a StepProfile during one step on its worker.
type stepTimer struct {
	p StepProfile
	// cmd names the command being handled ("build", "drop"); commands set
	// it (and cmdDataflow) so the timer can attribute their time.
	cmd         string
	cmdDataflow *instance
}

func (t *stepTimer) reset(worker int) {
	t.p = StepProfile{Worker: worker}
	t.cmd, t.cmdDataflow = "", nil
}

// command records one handled command that took d.
func (t *stepTimer) command(d time.Duration) {
	if d <= t.p.LongestTime {
		return
	}
	t.p.Longest, t.p.LongestTime = PartCommand, d
	t.p.Command, t.p.Dataflow, t.p.DataflowSeq, t.p.Operator = t.cmd, "", 0, ""
	if t.cmd == "" {
		t.p.Command = "command"
	}
	if df := t.cmdDataflow; df != nil {
		t.p.Dataflow, t.p.DataflowSeq = df.name, df.seq
	}
}

// operator records one schedule of op that took d.
func (t *stepTimer) operator(op *Operator, d time.Duration) {
	t.p.Operators += d
	if d <= t.p.LongestTime {
		return
	}
	t.p.Longest, t.p.LongestTime = PartOperator, d
	t.p.Command = ""
	t.p.Dataflow, t.p.DataflowSeq = op.df.name, op.df.seq
	t.p.Operator, t.p.OperatorIndex, t.p.OperatorInvocations = op.name, op.index, op.schedules
}

// hook records the step hook's time.
func (t *stepTimer) hook(d time.Duration) {
	t.p.Hook = d
	if d > t.p.LongestTime {
		t.p.Longest, t.p.LongestTime = PartHook, d
		t.p.Command, t.p.Dataflow, t.p.Operator = "", "", ""
	}
}
