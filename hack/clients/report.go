package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// report is the run's outcome, printed at the end.
type report struct {
	bench            benchConfig
	tandem, postgres *benchResult
	scripts          []scriptResult
	laneArms         []laneArm
}

type scriptResult struct {
	system, name string
	ok           bool
	output       string
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "\n== clients (%d CPUs, %s)\n", runtime.NumCPU(), time.Now().UTC().Format(time.RFC3339))
	if r.tandem != nil || r.postgres != nil {
		fmt.Fprintf(w, "\npgbench -S -n -c %d -T %d (after pgbench -i -n -s %d), run one system after the other:\n\n",
			r.bench.clients, int(r.bench.duration.Seconds()), r.bench.scale)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "system\ttps\tlatency avg\ttransactions\tfailed\tload avg before\tload avg after\tpgbench -i")
		for _, x := range []struct {
			name string
			res  *benchResult
		}{{"tandem", r.tandem}, {"postgres", r.postgres}} {
			if x.res == nil {
				fmt.Fprintf(tw, "%s\t(failed)\n", x.name)
				continue
			}
			fmt.Fprintf(tw, "%s\t%.1f\t%.2f ms\t%d\t%d\t%s\t%s\t%s\n", x.name, x.res.run.TPS, x.res.run.LatencyMs,
				x.res.run.Transactions, x.res.run.Failed, x.res.loadBefore, x.res.loadAfter, x.res.initLine)
		}
		tw.Flush()
		if r.tandem != nil {
			fmt.Fprintf(w, "\nTandem: its indexes finished hydrating %.1f s after pgbench -i returned; pgbench -S started then.\n", r.tandem.hydration.Seconds())
			printStages(w, "Tandem controller, mean time per read in each stage (tandem_read_stage_seconds)", r.tandem.stages)
			printStages(w, "Tandem replica, mean time per read in each stage (tandem_compute_read_stage_seconds)", r.tandem.replicaStages)
		}
		printCPU(w, "Tandem", r.tandem)
		printCPU(w, "PostgreSQL", r.postgres)
		printLaneArms(w, r.laneArms)
	}
	if len(r.scripts) > 0 {
		fmt.Fprintf(w, "\ndriver scripts:\n")
		for _, s := range r.scripts {
			status := "ok"
			if !s.ok {
				status = "FAILED"
			}
			first, _, _ := strings.Cut(s.output, "\n")
			fmt.Fprintf(w, "  %-9s %-14s %-6s %s\n", s.system, s.name, status, first)
		}
	}
}

func printStages(w io.Writer, title string, stages []stageTime) {
	if len(stages) == 0 {
		return
	}
	parts := make([]string, 0, len(stages))
	for _, s := range stages {
		parts = append(parts, fmt.Sprintf("%s %.2f ms", s.stage, float64(s.mean)/float64(time.Millisecond)))
	}
	fmt.Fprintf(w, "\n%s, over %.0f reads:\n  %s\n", title, stages[0].count, strings.Join(parts, ", "))
}

// httpGet fetches a URL and returns its body; a status other than 200 is
// an error.
func httpGet(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return b, nil
}

// fetchTo saves the body of a GET (a profile or a trace) in path.
func fetchTo(ctx context.Context, url, path string) error {
	b, err := httpGet(ctx, url)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
