//go:build k8s

package tests

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// ruleGroups is the spec of a PrometheusRule: what promtool checks as a rule file.
type ruleGroups struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			For         string            `json:"for,omitempty"`
			Labels      map[string]string `json:"labels,omitempty"`
			Annotations map[string]string `json:"annotations,omitempty"`
		} `json:"rules"`
	} `json:"groups"`
}

func renderRules(t *testing.T) ruleGroups {
	t.Helper()
	out, err := helm(t, "template", "tandem", "..", "--namespace", "tandem", "--kube-version", "1.37.2",
		"-f", "testdata/all-enabled.values.yaml", "--show-only", "templates/monitoring.yaml")
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	for _, doc := range strings.Split(out, "\n---\n") {
		var obj struct {
			Kind string
			Spec ruleGroups
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("parse rendered document: %v\n%s", err, doc)
		}
		if obj.Kind == "PrometheusRule" {
			return obj.Spec
		}
	}
	t.Fatal("no PrometheusRule rendered with monitoring.prometheusRule.enabled")
	return ruleGroups{}
}

// TestAlertRules checks the chart's alerts: the ones issue 18 asks for are there, each names a
// runbook that exists in docs/runbooks, every Tandem metric an expression reads is exported by
// some binary, and promtool accepts the rules.
func TestAlertRules(t *testing.T) {
	rules := renderRules(t)
	repo := filepath.Join("..", "..", "..")
	exported := exportedMetrics(t, repo)
	metricRe := regexp.MustCompile(`\btandem_[a-z_]+\b`)
	alerts := map[string]bool{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			alerts[r.Alert] = true
			book, ok := r.Annotations["runbook_url"]
			if !ok {
				t.Errorf("%s: no runbook_url annotation", r.Alert)
			} else if _, err := os.Stat(filepath.Join(repo, book)); err != nil {
				t.Errorf("%s: runbook %s: %v", r.Alert, book, err)
			}
			for _, m := range metricRe.FindAllString(r.Expr, -1) {
				if !exported[m] {
					t.Errorf("%s: expression reads %s, which no binary exports", r.Alert, m)
				}
			}
		}
	}
	for _, want := range []string{"TandemReplicaDisconnected", "TandemCrashLooping", "TandemMaterializedViewFrontierLag", "TandemSharedArrangementHoldGap", "TandemReplicaRolloutStuck",
		"TandemHydrationStuck", "TandemStorageDiskFilling", "TandemInternalTLSRefusals"} {
		if !alerts[want] {
			t.Errorf("alert %s not rendered (have %v)", want, alerts)
		}
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("TANDEM_PROMTOOL_REQUIRED") != "" {
			t.Fatal("promtool not on PATH (Debian package prometheus)")
		}
		t.Skip("promtool not on PATH (Debian package prometheus); set TANDEM_PROMTOOL_REQUIRED=1 to fail instead")
	}
	body, err := yaml.Marshal(rules)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s\n%s", err, out, body)
	}
}

// exportedMetrics returns the tandem_* names that appear as string literals in the
// repository's non-test Go files: the metrics some binary registers.
func exportedMetrics(t *testing.T, repo string) map[string]bool {
	t.Helper()
	lit := regexp.MustCompile(`"(tandem_[a-z_]+)"`)
	names := map[string]bool{}
	for _, dir := range []string{"cmd", "pkg", "operator"} {
		err := filepath.WalkDir(filepath.Join(repo, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range lit.FindAllStringSubmatch(string(src), -1) {
				names[m[1]] = true
			}
			return nil
		})
		if err != nil {
			t.Fatalf("scan %s: %v", dir, err)
		}
	}
	return names
}

// TestAlertRulesFire runs promtool's rule unit tests (testdata/alerts.promtest.yaml) on the
// rendered rules: each alert tested there fires on its input, after its `for`, and not on
// the inputs that should not fire it.
func TestAlertRulesFire(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("TANDEM_PROMTOOL_REQUIRED") != "" {
			t.Fatal("promtool not on PATH (Debian package prometheus)")
		}
		t.Skip("promtool not on PATH (Debian package prometheus); set TANDEM_PROMTOOL_REQUIRED=1 to fail instead")
	}
	rules := renderRules(t)
	for g := range rules.Groups {
		for r := range rules.Groups[g].Rules {
			rules.Groups[g].Rules[r].Annotations = nil
		}
	}
	body, err := yaml.Marshal(rules)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join("testdata", "alerts.promtest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "alerts.promtest.yaml")
	if err := os.WriteFile(file, append([]byte("rule_files: [rules.yaml]\n"), tests...), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "test", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}
