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
		if r.tandem != nil && len(r.tandem.stages) > 0 {
			fmt.Fprintf(w, "\nTandem, mean time per read in each stage (tandem_read_stage_seconds):\n")
			var parts []string
			for _, s := range r.tandem.stages {
				parts = append(parts, fmt.Sprintf("%s %.2f ms", s.stage, float64(s.mean)/float64(time.Millisecond)))
			}
			fmt.Fprintf(w, "  %s\n", strings.Join(parts, ", "))
		}
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

// fetchProfile saves a CPU profile of secs seconds from a pprof server.
func fetchProfile(ctx context.Context, addr string, secs int, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
