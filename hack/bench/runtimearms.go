package main

import (
	"context"
	"fmt"

	"github.com/tandemdb/tandem/hack/bench/internal/plot"
	"github.com/tandemdb/tandem/hack/bench/internal/report"
)

// churnArm runs one arm of a churn scenario with
// enable_compute_interactive_dataflows off (interactive false) or on.
type churnArm func(ctx context.Context, e *env, p isolationParams, name string, interactive bool) (*report.Arm, []plot.Series, []plot.Phase, error)

// oneSeries adapts an arm that draws one series.
func oneSeries(f func(ctx context.Context, e *env, p isolationParams, name string, interactive bool) (*report.Arm, plot.Series, []plot.Phase, error)) churnArm {
	return func(ctx context.Context, e *env, p isolationParams, name string, interactive bool) (*report.Arm, []plot.Series, []plot.Phase, error) {
		a, s, ph, err := f(ctx, e, p, name, interactive)
		return a, []plot.Series{s}, ph, err
	}
}

// runtimeArm is one arm of runRuntimeArms: its name, the flag, and what
// runs it.
type runtimeArm struct {
	name string
	flag bool
	run  churnArm
}

// runRuntimeArms runs arm as `solo` (flag off) and then `two_runtime`
// (flag on), then any extra arms, side by side in one invocation, and
// draws their series as a timeline over the first arm's phases and a CDF.
func runRuntimeArms(ctx context.Context, e *env, scenario, timelineTitle, cdfTitle string, arm churnArm, extra ...runtimeArm) (*result, error) {
	p := isolationSizes(e)
	rep := &report.Report{}
	var series []plot.Series
	var phases []plot.Phase
	arms := append([]runtimeArm{{"solo", false, arm}, {"two_runtime", true, arm}}, extra...)
	for _, a := range arms {
		e.logf("%s/%s: starting", scenario, a.name)
		got, s, ph, err := a.run(ctx, e, p, a.name, a.flag)
		if err != nil {
			// The completed arms are still shown (not written as JSON).
			return &result{report: rep}, fmt.Errorf("arm %s: %w", a.name, err)
		}
		rep.Arms = append(rep.Arms, got)
		series = append(series, s...)
		if phases == nil {
			phases = ph
		}
	}
	return &result{report: rep, figures: []figure{
		{"timeline", func(w ioWriter) error { return plot.Timeline(w, timelineTitle, series, phases) }},
		{"cdf", func(w ioWriter) error { return plot.CDF(w, cdfTitle, series) }},
	}}, nil
}
