package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tandemdb/tandem/hack/bench/internal/plot"
	"github.com/tandemdb/tandem/hack/bench/internal/report"
	"github.com/tandemdb/tandem/hack/bench/internal/stats"
	"github.com/tandemdb/tandem/hack/internal/proc"
)

// runMemory measures whether one-shot dataflows that import a published
// index copy it: 48 concurrent clients run an aggregate over the index
// (each execution builds a one-shot dataflow importing it) while the
// replica's resident set is sampled. The growth is reported against the
// index's own size, taken as the resident growth its hydration caused.
func runMemory(ctx context.Context, e *env) (*result, error) {
	keys := pick(e, 20_000, 200_000)
	const valueSize = 1024
	clientsN := 48
	runFor := pick(e, 20*time.Second, 60*time.Second)

	c, admin, stop, err := e.startWithAdmin(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	if err := require(ctx, admin, "KEY VALUE load generator source",
		fmt.Sprintf("CREATE SOURCE big FROM LOAD GENERATOR KEY VALUE (KEYS %d, VALUE SIZE %d)", keys, valueSize)); err != nil {
		return nil, err
	}
	pid, err := replicaPID(ctx, c)
	if err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second) // let the unindexed source settle
	before, err := rssBytes(pid)
	if err != nil {
		return nil, err
	}
	e.logf("memory: replica pid %d at %d MiB; indexing %d keys of %d bytes", pid, before>>20, keys, valueSize)
	if err := require(ctx, admin, "CREATE INDEX on a source", "CREATE INDEX big_idx ON big (key)"); err != nil {
		return nil, err
	}
	if err := waitQuery(ctx, admin, "point read through a hydrated index", "SELECT value FROM big WHERE key = 1", 1, pick(e, 2*time.Minute, 10*time.Minute)); err != nil {
		return nil, err
	}
	time.Sleep(3 * time.Second) // hydration's transient allocations settle
	after, err := rssBytes(pid)
	if err != nil {
		return nil, err
	}
	indexBytes := after - before
	e.logf("memory: index hydrated, replica at %d MiB (index ~%d MiB)", after>>20, indexBytes>>20)
	if indexBytes <= 0 {
		return nil, fmt.Errorf("resident set did not grow when the index hydrated (%d -> %d bytes): cannot size the index", before, after)
	}

	readers, err := openClients(ctx, clientsN, serializable(c))
	if err != nil {
		return nil, err
	}
	defer readers.close()
	const query = "SELECT count(*) FROM big"
	if _, err := readers.query(ctx, 0, query); err != nil {
		return nil, &missingError{feature: "aggregate over an indexed source (one-shot dataflow)", cause: err}
	}

	runCtx, cancel := context.WithTimeout(ctx, runFor)
	defer cancel()
	var (
		mu      sync.Mutex
		lat     stats.Series
		errs    int
		first   error
		peak    = after
		samples []plot.Point
	)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range clientsN {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for runCtx.Err() == nil {
				begin := time.Now()
				_, err := readers.query(runCtx, w, query)
				mu.Lock()
				switch {
				case err == nil:
					lat.Record(time.Since(begin))
				case runCtx.Err() != nil:
					// Cut off by the end of the run: a lower bound.
					lat.RecordCensored(time.Since(begin))
				default:
					errs++
					if first == nil {
						first = err
					}
				}
				mu.Unlock()
			}
		}()
	}
	tick := time.NewTicker(100 * time.Millisecond)
	for runCtx.Err() == nil {
		select {
		case <-tick.C:
			rss, err := rssBytes(pid)
			if err != nil {
				break
			}
			mu.Lock()
			peak = max(peak, rss)
			samples = append(samples, plot.Point{T: time.Since(start).Seconds(), Ms: float64(rss) / (1 << 20)})
			mu.Unlock()
		case <-runCtx.Done():
		}
	}
	tick.Stop()
	wg.Wait()
	if lat.Count() == 0 {
		return nil, fmt.Errorf("no one-shot query completed: %d errors, first: %v", errs, first)
	}
	growth := peak - after
	e.logf("memory: %d queries, peak %d MiB, growth %d MiB", lat.Count(), peak>>20, growth>>20)
	arm := report.NewArm("solo").
		Int("index_bytes", indexBytes).
		Int("rss_growth_bytes", growth).
		Float("rss_growth_ratio", round(float64(growth)/float64(indexBytes), 4)).
		Int("concurrent_dataflows", int64(clientsN)).
		Latency("oneshot_query", lat.Summary()).
		Int("errors", int64(errs))
	rep := &report.Report{Arms: []*report.Arm{arm}}
	return &result{report: rep, figures: []figure{{"rss", func(w ioWriter) error {
		// Resident MiB over time, drawn on the timeline (its y axis is
		// labelled in ms; the title says what is plotted).
		return plot.Timeline(w, fmt.Sprintf("memory: replica resident MiB under %d concurrent one-shot dataflows (index ~%d MiB)", clientsN, indexBytes>>20),
			[]plot.Series{{Name: "resident MiB", Points: samples}}, nil)
	}}}}, nil
}

// replicaPID is the process id of the (single) replica process.
func replicaPID(ctx context.Context, c *proc.Controller) (int, error) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		procs, err := replicaProcesses(ctx, c)
		if err != nil {
			return 0, err
		}
		for _, r := range procs {
			for _, p := range r.Processes {
				if p.PID > 0 && p.State == "running" {
					return p.PID, nil
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return 0, errors.New("no running replica process in /api/status")
}

// rssBytes reads VmRSS from /proc/PID/status.
func rssBytes(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("replica resident set: %w", err)
	}
	defer f.Close()
	return parseVmRSS(f)
}

func parseVmRSS(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 3 && f[0] == "VmRSS:" && f[2] == "kB" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmRSS %q: %w", f[1], err)
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("no VmRSS line in /proc status")
}
