//go:build k8s

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// renderNotes renders templates/NOTES.txt as `helm install` prints it. helm template skips
// NOTES.txt and a client-side `helm install --dry-run` still needs a cluster, so the chart is
// copied with NOTES.txt moved out of templates/ and rendered through tpl by a manifest.
func renderNotes(t *testing.T, set ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tandem")
	if err := os.CopyFS(dir, os.DirFS("..")); err != nil {
		t.Fatalf("copy chart: %v", err)
	}
	if err := os.Rename(filepath.Join(dir, "templates", "NOTES.txt"), filepath.Join(dir, "notes.src")); err != nil {
		t.Fatalf("move NOTES.txt: %v", err)
	}
	manifest := "notes: {{ tpl (.Files.Get \"notes.src\") . | toJson }}\n"
	if err := os.WriteFile(filepath.Join(dir, "templates", "zz-notes.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"template", "tandem", dir, "--namespace", "tandem", "--kube-version", "1.37.2",
		"--show-only", "templates/zz-notes.yaml"}, set...)
	out, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	var doc struct{ Notes string }
	if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("parse rendered notes: %v\n%s", err, out)
	}
	return doc.Notes
}

// TestNotes checks what `helm install` prints: how to reach SQL, where the password lives,
// how to apply a ComputeReplica, turn the interactive runtime on, and find the metrics.
func TestNotes(t *testing.T) {
	tests := []struct {
		name string
		set  []string
		want []string
	}{
		{
			name: "default",
			want: []string{
				"kubectl -n tandem port-forward svc/tandem-controller 6875:6875",
				`psql "host=127.0.0.1 port=6875 user=tandem dbname=tandem"`,
				"No superuser password is set",
				"kind: ComputeReplica",
				"kubectl -n tandem apply -f replica.yaml",
				"image: tandem/tandem:0.1.0",
				"ALTER SYSTEM SET enable_compute_interactive_dataflows = on",
				`"interactiveRuntime":true`,
				"svc/tandem-controller port 6876",
				"Set monitoring.serviceMonitor.enabled=true",
				"pods of namespace tandem",
			},
		},
		{
			name: "all-enabled",
			set:  []string{"-f", "testdata/all-enabled.values.yaml"},
			want: []string{
				"get secret tandem-superuser -o jsonpath='{.data.password}' | base64 -d",
				"sslmode=require",
				"key `password` of Secret\n  tandem/tandem-superuser",
				"plaintext clients are refused",
				"NetworkPolicy admits pgwire only from networkPolicy.pgwire.from",
				"The operator runs replicas only in: tandem, team-a.",
				"ServiceMonitors tandem-operator, -controller and -replicas",
				"PrometheusRule tandem/tandem; runbooks in docs/runbooks",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := renderNotes(t, tt.set...)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("NOTES lack %q:\n%s", w, got)
				}
			}
			if strings.Contains(got, "<no value>") || strings.Contains(got, "\n\n\n") {
				t.Errorf("NOTES have an unset value or stray blank lines:\n%s", got)
			}
			path := filepath.Join("testdata", tt.name+".notes.txt")
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
				t.Errorf("%s differs from the rendered NOTES; rerun with -update and review the diff", path)
			}
		})
	}
}
