package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tandemdb/tandem/hack/internal/proc"
)

// stepMetric is the replica's worker-step histogram (Prometheus text).
const stepMetric = "tandem_compute_worker_step_duration_seconds"

// maxStepByRole reads a Prometheus histogram from text exposition and
// returns, per "role" label, an upper bound on the largest observation:
// the smallest bucket bound whose cumulative count equals the total.
// Roles with no observations are left out.
func maxStepByRole(r io.Reader, metric string) (map[string]time.Duration, error) {
	type hist struct {
		bounds []float64
		counts []float64
		total  float64
	}
	by := map[string]*hist{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, metric+"_bucket{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			return nil, fmt.Errorf("malformed sample %q", line)
		}
		var le, role string
		for _, kv := range strings.Split(labels, ",") {
			k, v, _ := strings.Cut(kv, "=")
			v = strings.Trim(v, `"`)
			switch k {
			case "le":
				le = v
			case "role":
				role = v
			}
		}
		count, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
		if err != nil {
			return nil, fmt.Errorf("sample %q: %w", line, err)
		}
		h := by[role]
		if h == nil {
			h = &hist{}
			by[role] = h
		}
		if le == "+Inf" {
			h.total = count
			continue
		}
		bound, err := strconv.ParseFloat(le, 64)
		if err != nil {
			return nil, fmt.Errorf("sample %q: %w", line, err)
		}
		h.bounds = append(h.bounds, bound)
		h.counts = append(h.counts, count)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := map[string]time.Duration{}
	for role, h := range by {
		if h.total == 0 {
			continue
		}
		max := math.Inf(1)
		for i, b := range h.bounds {
			if h.counts[i] >= h.total && b < max {
				max = b
			}
		}
		if math.IsInf(max, 1) {
			// Only the +Inf bucket holds the maximum: report the largest
			// finite bound as a floor rather than invent a value.
			if len(h.bounds) == 0 {
				continue
			}
			max = h.bounds[len(h.bounds)-1]
		}
		out[role] = time.Duration(max * float64(time.Second))
	}
	return out, nil
}

// replicaProcess is the part of /api/status naming replica processes.
type replicaProcess struct {
	Cluster   string `json:"cluster"`
	Replica   string `json:"replica"`
	Processes []struct {
		State            string
		PID              int
		Restarts         int
		LastExit         string
		InternalHTTPAddr string
	} `json:"processes"`
}

// replicaProcesses reads the orchestrator section of /api/status.
func replicaProcesses(ctx context.Context, c *proc.Controller) ([]replicaProcess, error) {
	b, err := c.Get(ctx, "/api/status")
	if err != nil {
		return nil, err
	}
	var st struct {
		Orchestrator []replicaProcess `json:"orchestrator"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("decode /api/status: %w", err)
	}
	return st.Orchestrator, nil
}

// replicaMaxSteps scrapes every replica process's /metrics and returns
// the largest step bound per runtime role across them.
func replicaMaxSteps(ctx context.Context, c *proc.Controller) (map[string]time.Duration, error) {
	procs, err := replicaProcesses(ctx, c)
	if err != nil {
		return nil, err
	}
	out := map[string]time.Duration{}
	for _, r := range procs {
		for _, p := range r.Processes {
			if p.InternalHTTPAddr == "" {
				continue
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.InternalHTTPAddr+"/metrics", nil)
			if err != nil {
				return nil, err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return nil, fmt.Errorf("replica %s/%s metrics: %w", r.Cluster, r.Replica, err)
			}
			steps, err := maxStepByRole(resp.Body, stepMetric)
			resp.Body.Close()
			if err != nil {
				return nil, fmt.Errorf("replica %s/%s metrics: %w", r.Cluster, r.Replica, err)
			}
			for role, d := range steps {
				out[role] = max(out[role], d)
			}
		}
	}
	if len(out) == 0 {
		return nil, &missingError{feature: "replica metric " + stepMetric}
	}
	return out, nil
}

// scrapeCounter reads counter metric from every replica process's
// /metrics and sums its samples by the value of label (across processes
// and any other labels). A replica exporting no sample of the metric is
// the missing feature.
func scrapeCounter(ctx context.Context, c *proc.Controller, metric, label string) (map[string]float64, error) {
	addrs, err := replicaMetricsAddrs(ctx, c)
	if err != nil {
		return nil, err
	}
	return scrapeCounterAt(ctx, addrs, metric, label)
}

// replicaMetricsAddrs lists the internal HTTP address of every replica
// process, from the controller's /api/status.
func replicaMetricsAddrs(ctx context.Context, c *proc.Controller) ([]string, error) {
	procs, err := replicaProcesses(ctx, c)
	if err != nil {
		return nil, err
	}
	var addrs []string
	for _, r := range procs {
		for _, pr := range r.Processes {
			if pr.InternalHTTPAddr != "" {
				addrs = append(addrs, pr.InternalHTTPAddr)
			}
		}
	}
	return addrs, nil
}

// scrapeCounterAt is scrapeCounter on known replica addresses, without
// asking the controller (whose status endpoint may wait behind DDL).
func scrapeCounterAt(ctx context.Context, addrs []string, metric, label string) (map[string]float64, error) {
	out := map[string]float64{}
	found := false
	for _, addr := range addrs {
		resp, err := getMetrics(ctx, addr)
		if err != nil {
			return nil, fmt.Errorf("replica %s metrics: %w", addr, err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			if v, n, ok := parseCounterSample(sc.Text(), metric, label); ok {
				out[v] += n
				found = true
			}
		}
		err = sc.Err()
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("replica %s metrics: %w", addr, err)
		}
	}
	if !found {
		return nil, &missingError{feature: "replica metric " + metric}
	}
	return out, nil
}

// parseCounterSample reads one Prometheus text line of metric and returns
// the value of its label and the sample's value; lines of other metrics,
// comments and samples without the label are not samples of it.
func parseCounterSample(line, metric, label string) (string, float64, bool) {
	rest, ok := strings.CutPrefix(line, metric+"{")
	if !ok {
		return "", 0, false
	}
	labels, value, ok := strings.Cut(rest, "} ")
	if !ok {
		return "", 0, false
	}
	var lv string
	for _, kv := range strings.Split(labels, ",") {
		k, v, _ := strings.Cut(kv, "=")
		if k == label {
			lv = strings.Trim(v, `"`)
		}
	}
	f, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
	if err != nil || lv == "" {
		return "", 0, false
	}
	return lv, f, true
}
