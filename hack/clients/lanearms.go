package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tandemdb/tandem/hack/internal/proc"
)

// laneArm is one pgbench -S run with enable_peek_lane set to lane.
type laneArm struct {
	lane  string // "on" or "off"
	run   pgbenchRun
	cpuMs float64 // controller and replica CPU per transaction, ms
	// roundTripMs is the mean of the controller's readtrace stage
	// "replica" (send to answer); lanePeeks the peeks sent on lanes.
	roundTripMs float64
	lanePeeks   float64
}

// runLaneArms runs pgbench -S rounds times with the peek lane off and on,
// alternating which goes first, on the tables pgbench -i made: both arms
// in one run on one machine, so their ratio means something on a loaded
// machine where their absolute numbers do not.
func runLaneArms(ctx context.Context, o options, c *proc.Controller, t target, logf func(string, ...any)) ([]laneArm, error) {
	conn, err := c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	var arms []laneArm
	for round := range o.laneRounds {
		order := []string{"off", "on"}
		if round%2 == 1 {
			order = []string{"on", "off"}
		}
		for _, lane := range order {
			if _, err := conn.Exec(ctx, "ALTER SYSTEM SET enable_peek_lane = "+lane); err != nil {
				return arms, fmt.Errorf("set enable_peek_lane: %w", err)
			}
			time.Sleep(time.Second) // the lanes re-open (on) or drain (off)
			meter := replicaMeter(c)
			cpu0, before := processCPU(meter), scrapeStages(ctx, c)
			lane0 := lanePeeksSent(ctx, c)
			out, err := runTool(ctx, o.bench.pgbench, o.bench.runArgs(t)...)
			cpu := processCPU(meter) - cpu0
			after := scrapeStages(ctx, c)
			lanePeeks := lanePeeksSent(ctx, c) - lane0
			if err != nil {
				return arms, fmt.Errorf("pgbench -S with enable_peek_lane %s: %w", lane, err)
			}
			run, err := parsePgbench(out)
			if err != nil {
				return arms, err
			}
			a := laneArm{lane: lane, run: run, lanePeeks: lanePeeks}
			if b, e := before.controller["replica"], after.controller["replica"]; e[1] > b[1] {
				a.roundTripMs = (e[0] - b[0]) / (e[1] - b[1]) * 1000
			}
			if run.Transactions > 0 {
				a.cpuMs = float64(cpu.Microseconds()) / 1000 / float64(run.Transactions)
			}
			logf("tandem: enable_peek_lane %s: %.1f tps, %.2f ms average latency, %.3f ms CPU per transaction, replica round trip %.3f ms, %.0f peeks on lanes (load %s)",
				lane, run.TPS, run.LatencyMs, a.cpuMs, a.roundTripMs, a.lanePeeks, readLoadAvg())
			arms = append(arms, a)
		}
	}
	return arms, nil
}

var reLanePeeks = regexp.MustCompile(`^tandem_controller_peek_lane_commands_total\{type="peek"\} (\S+)$`)

// lanePeeksSent reads how many peeks the controller sent on lanes.
func lanePeeksSent(ctx context.Context, c *proc.Controller) float64 {
	b, err := c.Get(ctx, "/metrics")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if m := reLanePeeks.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			return v
		}
	}
	return 0
}

// replicaMeter meters the CPU of the controller and its replicas.
func replicaMeter(c *proc.Controller) cpuMeter {
	return tandemCPU(c.Pid, func() ([]int, error) { return c.Children("replica") })
}

// printLaneArms prints the arms and the ratio of their means.
func printLaneArms(w io.Writer, arms []laneArm) {
	if len(arms) == 0 {
		return
	}
	fmt.Fprintf(w, "\npeek lane arms (pgbench -S, alternating, same tables)\n")
	fmt.Fprintf(w, "| enable_peek_lane | tps | latency avg (ms) | CPU per transaction (ms) | replica round trip (ms) | peeks on lanes |\n|---|---|---|---|---|---|\n")
	var sum = map[string][3]float64{}
	for _, a := range arms {
		fmt.Fprintf(w, "| %s | %.1f | %.3f | %.3f | %.3f | %.0f |\n", a.lane, a.run.TPS, a.run.LatencyMs, a.cpuMs, a.roundTripMs, a.lanePeeks)
		s := sum[a.lane]
		sum[a.lane] = [3]float64{s[0] + a.run.TPS, s[1] + a.cpuMs, s[2] + 1}
	}
	on, off := sum["on"], sum["off"]
	if on[2] > 0 && off[2] > 0 && off[0] > 0 && off[1] > 0 {
		fmt.Fprintf(w, "lane on / off: tps %.2fx, CPU per transaction %.2fx\n", (on[0]/on[2])/(off[0]/off[2]), (on[1]/on[2])/(off[1]/off[2]))
	}
}
