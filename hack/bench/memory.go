package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/hack/bench/internal/plot"
	"github.com/tandemdb/tandem/hack/bench/internal/report"
	"github.com/tandemdb/tandem/hack/bench/internal/stats"
	"github.com/tandemdb/tandem/hack/internal/proc"
)

// runMemory measures whether one-shot dataflows that import a published
// index copy it: 48 concurrent clients run count(*) over the index (each
// execution builds a one-shot dataflow importing it) while the replica's
// resident set and Go heap are sampled. The growth is reported against
// the index's logical size (introspection.arrangements) and, as before,
// against the resident growth its hydration caused. Arms: solo (one
// runtime renders everything) and two_runtime (enable_compute_interactive_
// dataflows on: the interactive runtime renders the readers over the
// index the maintenance runtime publishes). The one-shot admission limit
// is raised to 48 so that all readers run at once.
func runMemory(ctx context.Context, e *env) (*result, error) {
	rep := &report.Report{}
	var figs []figure
	for _, arm := range []struct {
		name        string
		interactive bool
	}{{"solo", false}, {"two_runtime", true}} {
		if len(e.memoryArms) > 0 && !slices.Contains(e.memoryArms, arm.name) {
			continue
		}
		a, samples, err := memoryArm(ctx, e, arm.name, arm.interactive)
		if err != nil {
			return nil, fmt.Errorf("arm %s: %w", arm.name, err)
		}
		rep.Arms = append(rep.Arms, a)
		name := arm.name
		figs = append(figs, figure{"rss-" + name, func(w ioWriter) error {
			// Resident MiB over time, drawn on the timeline (its y axis is
			// labelled in ms; the title says what is plotted).
			return plot.Timeline(w, fmt.Sprintf("memory (%s): replica resident MiB under 48 concurrent one-shot dataflows", name),
				[]plot.Series{{Name: "resident MiB", Points: samples}}, nil)
		}})
	}
	return &result{report: rep, figures: figs}, nil
}

// memoryArm runs the memory scenario on a fresh controller with the
// interactive runtime on or off.
func memoryArm(ctx context.Context, e *env, name string, interactive bool) (*report.Arm, []plot.Point, error) {
	// 1,050,000 x 1 KiB: at least 1 GiB of arrangement data (the logical
	// size); 1,000,000 keys came to 1,018 MiB.
	keys := pick(e, 20_000, 1_050_000)
	if e.memoryKeys > 0 {
		keys = e.memoryKeys
	}
	const valueSize = 1024
	clientsN := 48
	runFor := pick(e, 20*time.Second, 60*time.Second)

	c, admin, stop, err := e.startWithAdmin(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer stop()
	if err := setInteractive(ctx, e, c, admin, interactive); err != nil {
		return nil, nil, err
	}
	// Admit every reader at once (the default admits 8 one-shot reads per
	// cluster and queues the rest).
	if err := require(ctx, admin, "ALTER SYSTEM SET max_concurrent_one_shot_reads",
		fmt.Sprintf("ALTER SYSTEM SET max_concurrent_one_shot_reads = %d", clientsN)); err != nil {
		return nil, nil, err
	}
	if err := require(ctx, admin, "KEY VALUE load generator source",
		fmt.Sprintf("CREATE SOURCE big FROM LOAD GENERATOR KEY VALUE (KEYS %d, VALUE SIZE %d)", keys, valueSize)); err != nil {
		return nil, nil, err
	}
	pid, err := replicaPID(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	addrs, err := replicaMetricsAddrs(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	time.Sleep(2 * time.Second) // let the unindexed source settle
	before, err := rssBytes(pid)
	if err != nil {
		return nil, nil, err
	}
	e.logf("memory %s: replica pid %d at %d MiB; indexing %d keys of %d bytes", name, pid, before>>20, keys, valueSize)
	if err := require(ctx, admin, "CREATE INDEX on a source", "CREATE INDEX big_idx ON big (key)"); err != nil {
		return nil, nil, err
	}
	if err := waitQuery(ctx, admin, "point read through a hydrated index", "SELECT value FROM big WHERE key = 1", 1, pick(e, 2*time.Minute, 20*time.Minute)); err != nil {
		return nil, nil, err
	}
	if err := waitIndexComplete(ctx, e, admin, int64(keys), pick(e, 2*time.Minute, 20*time.Minute)); err != nil {
		return nil, nil, err
	}
	time.Sleep(3 * time.Second) // hydration's transient allocations settle
	after, err := rssBytes(pid)
	if err != nil {
		return nil, nil, err
	}
	heapAfter, err := heapInUse(ctx, addrs)
	if err != nil {
		return nil, nil, err
	}
	indexBytes := after - before
	logical, err := indexLogicalBytes(ctx, admin)
	if err != nil {
		return nil, nil, err
	}
	arenaAfter, err := arenaBytes(ctx, addrs)
	if err != nil {
		return nil, nil, err
	}
	e.logf("memory %s: index hydrated, replica at %d MiB (resident growth %d MiB, logical size %d MiB, heap in use %d MiB, off-heap arenas %d MiB)",
		name, after>>20, indexBytes>>20, logical>>20, heapAfter>>20, arenaAfter>>20)
	logArrangements(ctx, e, admin, name)
	liveAfter, err := liveHeap(ctx, addrs)
	if err != nil {
		return nil, nil, err
	}
	imports0, _ := scrapeCounterAt(ctx, addrs, "tandem_compute_index_imports_total", "read")

	readers, err := openClients(ctx, clientsN, serializable(c))
	if err != nil {
		return nil, nil, err
	}
	defer readers.close()
	if err := checkCount(ctx, readers, 0, int64(keys)); err != nil {
		return nil, nil, err
	}

	runCtx, cancel := context.WithTimeout(ctx, runFor)
	defer cancel()
	var (
		mu       sync.Mutex
		lat      stats.Series
		errs     int
		wrong    int
		first    error
		peak     = after
		peakHeap = heapAfter
		peakLive = liveAfter
		// Arenas (off-heap batches) and the resident set outside them: a
		// merge of the index, which its generator keeps rewriting, grows
		// the first whatever the readers do.
		peakArena   = arenaAfter
		arena       = arenaAfter
		peakOutside = after - arenaAfter
		// Of the arenas: parts written by merges in progress, and batches
		// merged away but still mapped (held by a reader or awaiting a
		// collection).
		states, _   = arenaStates(ctx, addrs)
		peakMerging = states.merging
		peakRetired = states.retired
		samples     []plot.Point
	)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range clientsN {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for runCtx.Err() == nil {
				begin := time.Now()
				err := checkCount(runCtx, readers, w, int64(keys))
				mu.Lock()
				var we *wrongAnswer
				switch {
				case err == nil:
					lat.Record(time.Since(begin))
				case runCtx.Err() != nil:
					// Cut off by the end of the run: a lower bound.
					lat.RecordCensored(time.Since(begin))
				case errors.As(err, &we):
					wrong++
					first = err
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
	for i := 0; runCtx.Err() == nil; i++ {
		select {
		case <-tick.C:
			rss, err := rssBytes(pid)
			if err != nil {
				break
			}
			var heap, live int64
			if i%5 == 0 {
				heap, _ = heapInUse(runCtx, addrs)
				live, _ = liveHeap(runCtx, addrs)
				if a, err := arenaBytes(runCtx, addrs); err == nil {
					arena = a
				}
				if st, err := arenaStates(runCtx, addrs); err == nil {
					states = st
				}
				if i%50 == 0 {
					e.logf("memory %s: rss %d MiB, arenas %d MiB (merging %d MiB, retired %d MiB), heap in use %d MiB",
						name, rss>>20, arena>>20, states.merging>>20, states.retired>>20, heap>>20)
				}
			}
			mu.Lock()
			peak = max(peak, rss)
			peakArena = max(peakArena, arena)
			peakMerging = max(peakMerging, states.merging)
			peakRetired = max(peakRetired, states.retired)
			peakOutside = max(peakOutside, rss-arena)
			peakHeap = max(peakHeap, heap)
			peakLive = max(peakLive, live)
			samples = append(samples, plot.Point{T: time.Since(start).Seconds(), Ms: float64(rss) / (1 << 20)})
			mu.Unlock()
		case <-runCtx.Done():
		}
	}
	tick.Stop()
	wg.Wait()
	if lat.Count() == 0 {
		return nil, nil, fmt.Errorf("no one-shot query completed: %d errors, first: %v", errs, first)
	}
	if wrong > 0 {
		return nil, nil, fmt.Errorf("%d wrong answers: %v", wrong, first)
	}
	imports1, _ := scrapeCounterAt(ctx, addrs, "tandem_compute_index_imports_total", "read")
	growth, heapGrowth, liveGrowth := peak-after, peakHeap-heapAfter, peakLive-liveAfter
	arenaGrowth, outsideGrowth := peakArena-arenaAfter, peakOutside-(after-arenaAfter)
	e.logf("memory %s: %d queries, peak %d MiB, growth %d MiB (%.3f of the logical index; outside arenas %d MiB, arenas %d MiB), heap in use growth %d MiB, live heap %d -> %d MiB",
		name, lat.Count(), peak>>20, growth>>20, float64(growth)/float64(logical), outsideGrowth>>20, arenaGrowth>>20, heapGrowth>>20, liveAfter>>20, peakLive>>20)
	gogc := os.Getenv("GOGC")
	if gogc == "" {
		gogc = "100 (default)"
	}
	arm := report.NewArm(name).
		Int("index_logical_bytes", logical).
		Int("index_rss_bytes", indexBytes).
		Int("rss_growth_bytes", growth).
		Float("rss_growth_ratio", round(float64(growth)/float64(logical), 4)).
		Int("heap_inuse_after_index_bytes", heapAfter).
		Int("arena_after_index_bytes", arenaAfter).
		Int("rss_outside_arenas_growth_bytes", outsideGrowth).
		Float("rss_outside_arenas_growth_ratio", round(float64(outsideGrowth)/float64(logical), 4)).
		Int("arena_growth_bytes", arenaGrowth).
		Int("arena_merging_peak_bytes", peakMerging).
		Int("arena_retired_peak_bytes", peakRetired).
		Int("heap_inuse_growth_bytes", heapGrowth).
		Float("heap_growth_ratio", round(float64(heapGrowth)/float64(logical), 4)).
		Int("live_heap_after_index_bytes", liveAfter).
		Int("live_heap_growth_bytes", liveGrowth).
		Float("live_heap_growth_ratio", round(float64(liveGrowth)/float64(logical), 4)).
		Int("concurrent_dataflows", int64(clientsN)).
		Int("limit_max_concurrent_one_shot_reads", int64(clientsN)).
		Int("cursor_imports", int64(imports1["cursor"]-imports0["cursor"])).
		Int("flattened_imports", int64(imports1["flattened"]-imports0["flattened"])).
		String("gogc", gogc).
		String("offheap_arrangements", offHeapSetting()).
		Latency("oneshot_query", lat.Summary()).
		Int("errors", int64(errs))
	return arm, samples, nil
}

// wrongAnswer is a count(*) that did not return the index's row count.
type wrongAnswer struct{ got, want int64 }

func (w *wrongAnswer) Error() string {
	return fmt.Sprintf("SELECT count(*) FROM big returned %d, want %d", w.got, w.want)
}

// checkCount runs SELECT count(*) FROM big on client w and checks it.
func checkCount(ctx context.Context, cs *clients, w int, want int64) error {
	conn, err := cs.conn(ctx, w)
	if err != nil {
		return err
	}
	var got int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM big").Scan(&got); err != nil {
		return err
	}
	if got != want {
		return &wrongAnswer{got: got, want: want}
	}
	return nil
}

// indexLogicalBytes is the largest arrangement's size in
// introspection.arrangements (summed over workers): the index's.
func indexLogicalBytes(ctx context.Context, admin *pgx.Conn) (int64, error) {
	var b int64
	err := admin.QueryRow(ctx, "SELECT max(b)::bigint FROM (SELECT id, sum(bytes) AS b FROM introspection.arrangements GROUP BY id) t").Scan(&b)
	if err != nil {
		return 0, &missingError{feature: "introspection.arrangements (the index's logical size)", cause: err}
	}
	if b <= 0 {
		return 0, fmt.Errorf("introspection.arrangements reports %d bytes for the largest arrangement", b)
	}
	return b, nil
}

// waitIndexComplete waits until every worker's part of the index is built:
// count(*) returns every key and the index's logical size reads the same
// (within 1%) twice in a row. A point read answers as soon as the worker holding its key
// has hydrated, while another worker may still be building its part.
func waitIndexComplete(ctx context.Context, e *env, admin *pgx.Conn, keys int64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last int64 = -1
	for time.Now().Before(deadline) {
		var n int64
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM big").Scan(&n); err != nil {
			return fmt.Errorf("count the index: %w", err)
		}
		size, err := indexLogicalBytes(ctx, admin)
		if err != nil {
			return err
		}
		// The generator rewrites a key per tick, so the size moves a little
		// even once the index is built.
		if n == keys && last > 0 && abs64(size-last) <= last/100 {
			return nil
		}
		last = size
		e.logf("memory: waiting for the whole index (count %d of %d, logical size %d MiB)", n, keys, size>>20)
		time.Sleep(2 * time.Second)
	}
	return fmt.Errorf("index not complete after %s", timeout)
}

// logArrangements prints the largest arrangements' rows of
// introspection.arrangements (per worker: records, batches, bytes), so a
// merge in progress (two batches where one was expected) shows in the log.
func logArrangements(ctx context.Context, e *env, admin *pgx.Conn, arm string) {
	rows, err := admin.Query(ctx, "SELECT id, worker, records, batches, bytes FROM introspection.arrangements ORDER BY bytes DESC LIMIT 4")
	if err != nil {
		e.logf("memory %s: introspection.arrangements: %v", arm, err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var worker, records, batches, bytes int64
		if err := rows.Scan(&id, &worker, &records, &batches, &bytes); err != nil {
			e.logf("memory %s: introspection.arrangements: %v", arm, err)
			return
		}
		e.logf("memory %s: arrangement %s worker %d: %d records in %d batches, %d MiB", arm, id, worker, records, batches, bytes>>20)
	}
}

// liveHeap is the replica's go_gc_heap_live_bytes: the heap its last
// collection marked live (garbage awaiting a collection excluded).
func liveHeap(ctx context.Context, addrs []string) (int64, error) {
	g, err := scrapeGauge(ctx, addrs, "go_gc_heap_live_bytes")
	if err != nil {
		return 0, err
	}
	return int64(g[""]), nil
}

// arenaBytes is the replica's process_arena_bytes: arrangement
// columns kept outside the Go heap.
func arenaBytes(ctx context.Context, addrs []string) (int64, error) {
	g, err := scrapeGauge(ctx, addrs, "process_arena_bytes")
	if err != nil {
		return 0, err
	}
	return int64(g[""]), nil
}

// arenaState is the replica's arenas by state (process_arena_merging_bytes
// and process_arena_retired_bytes).
type arenaState struct{ merging, retired int64 }

func arenaStates(ctx context.Context, addrs []string) (arenaState, error) {
	m, err := scrapeGauge(ctx, addrs, "process_arena_merging_bytes")
	if err != nil {
		return arenaState{}, err
	}
	r, err := scrapeGauge(ctx, addrs, "process_arena_retired_bytes")
	if err != nil {
		return arenaState{}, err
	}
	return arenaState{merging: int64(m[""]), retired: int64(r[""])}, nil
}

// heapInUse is the replica's go_memstats_heap_inuse_bytes.
func heapInUse(ctx context.Context, addrs []string) (int64, error) {
	g, err := scrapeGauge(ctx, addrs, "go_memstats_heap_inuse_bytes")
	if err != nil {
		return 0, err
	}
	return int64(g[""]), nil
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

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// offHeapSetting is the replicas' --offheap-arrangements as the benchmark
// ran them: local replicas take it from TANDEM_OFFHEAP_ARRANGEMENTS in the
// controller's environment, which is this process's.
func offHeapSetting() string {
	if v := os.Getenv("TANDEM_OFFHEAP_ARRANGEMENTS"); v != "" {
		return v
	}
	return "true (default)"
}
