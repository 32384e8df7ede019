package dataflow

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock advances only when told to, so step attribution is checked
// without depending on how fast anything really ran.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// TestStepProfileNamesTheLongestPart: every step's profile names the one
// command (a build, a drop, a broadcast), operator schedule or step hook
// that took longest, with its dataflow and operator, and splits the step
// into its phases. The clock is fake: each part advances it by a known
// amount.
func TestStepProfileNamesTheLongestPart(t *testing.T) {
	clk := &fakeClock{}
	profiles := make(chan StepProfile, 1024)
	var hookCost atomic.Int64 // the next hook run advances the clock by this
	ws, err := New(Config{Workers: 1, Now: clk.now,
		OnStep: func(*Worker) bool {
			clk.advance(time.Duration(hookCost.Swap(0)))
			return false
		},
		ProfileStep: func(p StepProfile) {
			select {
			case profiles <- p:
			default:
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ws.Start(ctx)
	t.Cleanup(func() { cancel(); ws.Stop() })

	var slowCost atomic.Int64
	var activate func()
	seq := ws.Install("df", func(b *Builder) error {
		clk.advance(70 * time.Millisecond) // building the dataflow
		b.AddOperator("quick", nil, 1, LogicFunc(func(*Operator) { clk.advance(time.Millisecond) }))
		op := b.AddOperator("slow", nil, 1, LogicFunc(func(*Operator) {
			clk.advance(time.Duration(slowCost.Swap(0)))
		}))
		activate = op.Activator()
		b.OnDrop(func() { clk.advance(40 * time.Millisecond) })
		return nil
	}, nil)

	await := func(what string, match func(StepProfile) bool) StepProfile {
		t.Helper()
		timeout := time.After(30 * time.Second) // bounds a failing run only
		for {
			select {
			case p := <-profiles:
				if match(p) {
					return p
				}
			case <-timeout:
				t.Fatalf("no step profile with %s", what)
			}
		}
	}

	p := await("a build", func(p StepProfile) bool { return p.Longest == PartCommand })
	if p.Command != "build" || p.Dataflow != "df" || p.DataflowSeq != seq || p.LongestTime != 70*time.Millisecond {
		t.Errorf("build step: %v, want command build of dataflow df for 70ms", p)
	}
	if p.Inbox < 70*time.Millisecond || p.Total < p.Inbox+p.Operators+p.Hook {
		t.Errorf("build step phases: %v, want the inbox phase to hold the build and the total to hold the phases", p)
	}

	slowCost.Store(int64(100 * time.Millisecond))
	activate()
	p = await("the slow operator", func(p StepProfile) bool { return p.Longest == PartOperator && p.LongestTime > time.Millisecond })
	if p.Operator != "slow" || p.OperatorIndex != 1 || p.Dataflow != "df" || p.LongestTime != 100*time.Millisecond || p.Operators < 100*time.Millisecond {
		t.Errorf("operator step: %v, want operator slow (#1) of df for 100ms", p)
	}

	hookCost.Store(int64(30 * time.Millisecond))
	ws.Broadcast(func(*Worker) {})
	p = await("the hook", func(p StepProfile) bool { return p.Longest == PartHook })
	if p.LongestTime != 30*time.Millisecond || p.Hook != 30*time.Millisecond || p.Dataflow != "" || p.Operator != "" {
		t.Errorf("hook step: %v, want the step hook for 30ms", p)
	}

	ws.Drop(seq)
	p = await("a drop", func(p StepProfile) bool { return p.Longest == PartCommand && p.Command == "drop" })
	if p.Dataflow != "df" || p.LongestTime != 40*time.Millisecond {
		t.Errorf("drop step: %v, want command drop of dataflow df for 40ms", p)
	}
	if w := p.Where(); w != `command drop of dataflow "df" (1) for 40ms` {
		t.Errorf("Where() = %q", w)
	}
}

// TestOperatorStatsKeepLongestSchedule: an operator's statistics keep its
// longest single schedule (introspection's max_schedule_ns), not the last
// or the mean; the clock is fake.
func TestOperatorStatsKeepLongestSchedule(t *testing.T) {
	clk := &fakeClock{}
	ws, err := New(Config{Workers: 1, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ws.Start(ctx)
	t.Cleanup(func() { cancel(); ws.Stop() })
	costs := make(chan time.Duration, 4)
	ran := make(chan struct{}, 4)
	activators := make(chan func(), 1)
	ws.Install("df", func(b *Builder) error {
		op := b.AddOperator("work", nil, 1, LogicFunc(func(*Operator) {
			select {
			case d := <-costs:
				clk.advance(d)
				ran <- struct{}{}
			default:
			}
		}))
		activators <- op.Activator()
		return nil
	}, nil)
	activate := <-activators
	for _, d := range []time.Duration{30 * time.Millisecond, 90 * time.Millisecond, 10 * time.Millisecond} {
		costs <- d
		activate()
		<-ran
	}
	stats := make(chan []OperatorStats, 1)
	ws.Broadcast(func(w *Worker) { stats <- w.Operators() })
	for _, s := range <-stats {
		if s.Name == "work" {
			if s.Longest != 90*time.Millisecond || s.Elapsed < 130*time.Millisecond {
				t.Fatalf("operator stats %+v: want the longest schedule 90ms of 130ms", s)
			}
			return
		}
	}
	t.Fatal("operator work not in the worker's statistics")
}
