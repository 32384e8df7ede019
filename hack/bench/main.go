package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/tandemdb/tandem/hack/bench/internal/report"
	"github.com/tandemdb/tandem/hack/internal/proc"
)

// figure is one SVG a scenario produces, written as DIR/SCENARIO-name.svg.
type ioWriter = io.Writer

type figure struct {
	name  string
	write func(io.Writer) error
}

// result is a scenario's report and figures.
type result struct {
	report  *report.Report
	figures []figure
}

// scenarioFunc runs one scenario; it returns a *missingError when the
// system lacks a feature the scenario needs.
type scenarioFunc func(ctx context.Context, e *env) (*result, error)

func scenarios() map[string]scenarioFunc {
	return map[string]scenarioFunc{
		"isolation": runIsolation,
		"scans":     runScans,
		"skew":      runSkew,
		"routing":   runRouting,
		"postgres":  runPostgres,
		"temporary": runTemporary,
		"memory":    runMemory,
		"subscribe": runSubscribe,
		"adhoc":     runAdhoc,
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	all := scenarios()
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)

	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quick := fs.Bool("quick", false, "short phases and one repeat (every scenario in under 15 minutes in total)")
	out := fs.String("out", ".bench", "directory for SCENARIO.json and SCENARIO-*.svg")
	keep := fs.Bool("keep", false, "keep the controller's data directory (logs) after the run")
	memKeys := fs.Int("memory-keys", 0, "memory scenario: keys of 1 KiB to index (0: 20,000 with --quick, else 1,050,000)")
	memArms := fs.String("memory-arms", "", "memory scenario: comma-separated arms to run (default: solo,two_runtime)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./hack/bench SCENARIO [--quick] [--out DIR] [--keep]\nscenarios: %s\n", strings.Join(names, ", "))
		fs.PrintDefaults()
	}
	// The scenario may come before or after the flags.
	var scenario string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		scenario, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if scenario == "" && fs.NArg() == 1 {
		scenario = fs.Arg(0)
	} else if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	fn, ok := all[scenario]
	if !ok {
		fs.Usage()
		return fmt.Errorf("%w: unknown scenario %q (want one of %s)", errUsage, scenario, strings.Join(names, ", "))
	}
	root, err := proc.RepoRoot()
	if err != nil {
		return err
	}
	e := &env{
		quick: *quick, outDir: *out, keep: *keep, repoRoot: root, memoryKeys: *memKeys,
		binDir: filepath.Join(root, "bin"), stderr: stderr, began: time.Now(),
	}
	if *memArms != "" {
		e.memoryArms = strings.Split(*memArms, ",")
	}
	e.logf("scenario %s (quick=%v), results in %s", scenario, e.quick, e.outDir)
	res, err := fn(ctx, e)
	if err != nil {
		if res != nil && res.report != nil && len(res.report.Arms) > 0 {
			// Arms that completed before the failure, for the reader; no
			// JSON is written, since the document promises every arm.
			res.report.Scenario, res.report.Quick = scenario+" (incomplete: "+err.Error()+")", e.quick
			fmt.Fprintln(stdout, "Incomplete run: the arms below completed, then the scenario failed; no JSON written.")
			_ = res.report.WriteMarkdown(stdout)
		}
		return fmt.Errorf("scenario %s: %w", scenario, err)
	}
	res.report.Scenario, res.report.Quick, res.report.Machine = scenario, e.quick, report.Machine()
	if err := writeResult(e.outDir, scenario, res); err != nil {
		return err
	}
	if err := res.report.WriteMarkdown(stdout); err != nil {
		return err
	}
	e.logf("wrote %s", filepath.Join(e.outDir, scenario+".json"))
	return nil
}

// writeResult writes the JSON and every figure into dir.
func writeResult(dir, scenario string, res *result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("output dir: %w", err)
	}
	write := func(name string, fn func(io.Writer) error) error {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
		return f.Close()
	}
	if err := write(scenario+".json", res.report.WriteJSON); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, f := range res.figures {
		if seen[f.name] || slices.Contains([]string{"", "json"}, f.name) {
			return fmt.Errorf("scenario %s: bad or duplicate figure name %q", scenario, f.name)
		}
		seen[f.name] = true
		if err := write(scenario+"-"+f.name+".svg", f.write); err != nil {
			return err
		}
	}
	return nil
}
