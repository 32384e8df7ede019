package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxStepGauge is the replica's true longest worker step per runtime since
// the process started or POST /api/reset-max-step.
const maxStepGauge = "tandem_compute_worker_max_step_seconds"

// gaugeByRole reads a gauge from Prometheus text exposition, per "role"
// label ("" for a series without one).
func gaugeByRole(r io.Reader, metric string) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, metric)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		labels, value := "", strings.TrimSpace(rest)
		if strings.HasPrefix(rest, "{") {
			var ok bool
			labels, value, ok = strings.Cut(rest[1:], "} ")
			if !ok {
				return nil, fmt.Errorf("malformed sample %q", line)
			}
		}
		role := ""
		for _, kv := range strings.Split(labels, ",") {
			if k, v, _ := strings.Cut(kv, "="); k == "role" {
				role = strings.Trim(v, `"`)
			}
		}
		f, err := strconv.ParseFloat(strings.Fields(value)[0], 64)
		if err != nil {
			return nil, fmt.Errorf("sample %q: %w", line, err)
		}
		out[role] = max(out[role], f)
	}
	return out, sc.Err()
}

// phaseMaxSteps records the true longest maintenance step of each phase:
// it resets every replica process's maxima when a phase starts and reads
// them when it ends. Replicas without the gauge leave it empty.
type phaseMaxSteps struct {
	mu           sync.Mutex
	quiet, churn map[string]time.Duration // per role, max over phases
	missing      bool
	// where is each phase's GET /api/max-step answer (what took longest
	// in each runtime's longest step), in phase order, for the log.
	where []string
}

// watch follows run's phases (a runChurnTimeline watch function).
func (m *phaseMaxSteps) watch(ctx context.Context, addrs []string, run *churnRun) error {
	phases := append(append([]phase(nil), run.quiet...), run.churn...)
	sort.Slice(phases, func(i, j int) bool { return phases[i].start.Before(phases[j].start) })
	m.quiet, m.churn = map[string]time.Duration{}, map[string]time.Duration{}
	for _, ph := range phases {
		if err := sleepUntil(ctx, ph.start); err != nil {
			return nil // the run ended early; keep what was read
		}
		if err := postAll(ctx, addrs, "/api/reset-max-step"); err != nil {
			m.missing = true
			return nil
		}
		if err := sleepUntil(ctx, ph.end); err != nil {
			return nil
		}
		got, err := scrapeGauge(ctx, addrs, maxStepGauge)
		if err != nil || len(got) == 0 {
			m.missing = true
			return nil
		}
		where := getAll(ctx, addrs, "/api/max-step")
		m.mu.Lock()
		m.where = append(m.where, ph.name+" phase:\n"+where)
		into := m.quiet
		if ph.name == "churn" {
			into = m.churn
		}
		for role, s := range got {
			into[role] = max(into[role], time.Duration(s*float64(time.Second)))
		}
		m.mu.Unlock()
	}
	return nil
}

func postAll(ctx context.Context, addrs []string, path string) error {
	for _, addr := range addrs {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("POST %s%s: %s", addr, path, resp.Status)
		}
	}
	return nil
}

// scrapeGauge reads metric from every address, max per role.
func scrapeGauge(ctx context.Context, addrs []string, metric string) (map[string]float64, error) {
	out := map[string]float64{}
	for _, addr := range addrs {
		resp, err := getMetrics(ctx, addr)
		if err != nil {
			return nil, err
		}
		got, err := gaugeByRole(resp.Body, metric)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("%s metrics: %w", addr, err)
		}
		for role, v := range got {
			out[role] = max(out[role], v)
		}
	}
	return out, nil
}

// getMetrics GETs addr's /metrics; the caller closes the body.
func getMetrics(ctx context.Context, addr string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	return http.DefaultClient.Do(req)
}

// getAll concatenates GET path's answers from every address; an error is
// part of the text (the attribution is for the log only).
func getAll(ctx context.Context, addrs []string, path string) string {
	var b strings.Builder
	for _, addr := range addrs {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", addr, err)
			continue
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", addr, err)
			continue
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			fmt.Fprintf(&b, "%s: %s %v\n", addr, resp.Status, err)
			continue
		}
		b.Write(body)
	}
	return b.String()
}
