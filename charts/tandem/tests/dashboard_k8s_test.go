//go:build k8s

package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// dashboardPanel is the part of a Grafana panel the test reads; rows nest panels.
type dashboardPanel struct {
	Title      string `json:"title"`
	Type       string `json:"type"`
	Datasource *struct{ UID string }
	Targets    []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []dashboardPanel `json:"panels"`
}

type dashboard struct {
	UID        string           `json:"uid"`
	Title      string           `json:"title"`
	Panels     []dashboardPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

// renderDashboard renders the dashboard ConfigMap of the all-enabled values and parses its JSON.
func renderDashboard(t *testing.T) (corev1.ConfigMap, dashboard) {
	t.Helper()
	out, err := helm(t, "template", "tandem", "..", "--namespace", "tandem", "--kube-version", "1.37.2",
		"-f", "testdata/all-enabled.values.yaml", "--show-only", "templates/dashboard.yaml")
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	var cm corev1.ConfigMap
	mustUnmarshal(t, out, &cm)
	var d dashboard
	if err := json.Unmarshal([]byte(cm.Data["tandem.json"]), &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	return cm, d
}

// exprsOf lists the PromQL of every panel (rows included) and of the templating queries.
func exprsOf(t *testing.T, d dashboard) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func([]dashboardPanel)
	walk = func(ps []dashboardPanel) {
		for _, p := range ps {
			if p.Type != "row" && (p.Datasource == nil || p.Datasource.UID != "${datasource}") {
				t.Errorf("panel %q does not use the datasource variable", p.Title)
			}
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for i, tg := range p.Targets {
				out[fmt.Sprintf("%s #%d", p.Title, i)] = tg.Expr
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if q, ok := strings.CutPrefix(v.Definition, "label_values("); ok {
			out["variable "+v.Name] = strings.SplitN(q, ",", 2)[0]
		}
	}
	return out
}

// grafanaVars replaces Grafana's variables by values PromQL accepts.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$namespace", ".*")

// TestDashboard checks the dashboard the chart ships: a ConfigMap labelled for the Grafana
// sidecar, JSON that parses, every query valid PromQL (promtool checks each as a recording
// rule), every metric it reads exported by a Tandem binary, and the panels issue 18 asks for
// (read latency per stage, admission queue, frontier lag, hydration, memory, restarts).
func TestDashboard(t *testing.T) {
	cm, d := renderDashboard(t)
	if cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("dashboard labels %v, want grafana_dashboard=1", cm.Labels)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("dashboard uid %q, title %q", d.UID, d.Title)
	}
	exprs := exprsOf(t, d)
	repo := filepath.Join("..", "..", "..")
	exported := exportedMetrics(t, repo)
	// The process collector of client_golang, which both the controller and the replica register.
	for _, m := range []string{"process_resident_memory_bytes"} {
		exported[m] = true
	}
	metricRe := regexp.MustCompile(`\b((?:tandem|process|go)_[a-z0-9_]+)\b`)
	selectorRe := regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{`)
	read := map[string]bool{}
	type rule struct {
		Record string `json:"record"`
		Expr   string `json:"expr"`
	}
	var rules []rule
	for name, e := range exprs {
		names := map[string]bool{}
		for _, m := range metricRe.FindAllStringSubmatch(e, -1) {
			names[m[1]] = true
		}
		for _, m := range selectorRe.FindAllStringSubmatch(e, -1) {
			names[m[1]] = true
		}
		for n := range names {
			base := n
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if b, ok := strings.CutSuffix(n, suffix); ok && exported[b] {
					base = b
				}
			}
			if !exported[base] {
				t.Errorf("%s reads %s, which no Tandem binary exports", name, n)
			}
			read[base] = true
		}
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard:query_%d", len(rules)), Expr: grafanaVars.Replace(e)})
	}
	for _, want := range []string{"tandem_read_stage_seconds", "tandem_compute_read_stage_seconds",
		"tandem_controller_read_admission_queued", "tandem_compute_sink_write_lag_ms",
		"tandem_controller_replica_hydrated_collections", "tandem_operator_replica_hydrating",
		"process_resident_memory_bytes", "tandem_operator_replica_process_restarts_total"} {
		if !read[want] {
			t.Errorf("no panel reads %s", want)
		}
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("TANDEM_PROMTOOL_REQUIRED") != "" {
			t.Fatal("promtool not on PATH (Debian package prometheus)")
		}
		t.Skip("promtool not on PATH (Debian package prometheus); set TANDEM_PROMTOOL_REQUIRED=1 to fail instead")
	}
	body, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "dashboard-rules.yaml")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on the dashboard's queries: %v\n%s\n%s", err, out, body)
	}
}
