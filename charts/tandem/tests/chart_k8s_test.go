//go:build k8s

package tests

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv("TANDEM_KUBE_BIN")
	if bin == "" {
		t.Fatal("TANDEM_KUBE_BIN is not set: run these tests with `make test-k8s`")
	}
	cmd := exec.Command(filepath.Join(bin, "helm"), args...)
	// Keep helm away from the user's config and caches.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home, "HELM_DATA_HOME="+home)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String() + errb.String(), err
	}
	return out.String(), nil
}

func TestLint(t *testing.T) {
	for _, values := range []string{"", "testdata/all-enabled.values.yaml"} {
		args := []string{"lint", "--strict", ".."}
		if values != "" {
			args = append(args, "-f", values)
		}
		if out, err := helm(t, args...); err != nil {
			t.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func TestGolden(t *testing.T) {
	for _, name := range []string{"default", "all-enabled"} {
		t.Run(name, func(t *testing.T) {
			args := []string{"template", "tandem", "..", "--namespace", "tandem", "--kube-version", "1.37.2"}
			if name != "default" {
				args = append(args, "-f", "testdata/"+name+".values.yaml")
			}
			got, err := helm(t, args...)
			if err != nil {
				t.Fatalf("helm template: %v\n%s", err, got)
			}
			path := filepath.Join("testdata", name+".golden.yaml")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden file (run with -update to create it): %v", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from `helm template`; rerun with -update and review the diff", path)
			}
		})
	}
}

func TestSchemaRejects(t *testing.T) {
	tests := map[string][]string{
		"bad log level":         {"--set", "operator.logLevel=loud"},
		"unknown key":           {"--set", "operator.replicass=2"},
		"no replicas":           {"--set", "operator.replicas=0"},
		"bad storage size":      {"--set", "controller.storage.size=lots"},
		"bad pull policy":       {"--set", "image.pullPolicy=Sometimes"},
		"bad alert pending":     {"--set", "monitoring.prometheusRule.holdGapFor=soon"},
		"bad network peer":      {"--set", "networkPolicy.pgwire.from[0].cidr=10.0.0.0/8"},
		"bad cert validity":     {"--set", "internalTLS.certValidity=90d"},
		"bad api server port":   {"--set", "networkPolicy.egress.apiServer.ports={0}"},
		"empty dashboard label": {"--set", "monitoring.grafanaDashboard.label="},
		"bad disk horizon":      {"--set", "monitoring.prometheusRule.diskFillingHorizonSeconds=10"},
	}
	for name, set := range tests {
		t.Run(name, func(t *testing.T) {
			out, err := helm(t, append([]string{"template", "tandem", "..", "--kube-version", "1.37.2"}, set...)...)
			if err == nil || !strings.Contains(out, "values don't meet the specifications of the schema") {
				t.Errorf("helm template %v: err %v, output:\n%s", set, err, out)
			}
		})
	}
}
