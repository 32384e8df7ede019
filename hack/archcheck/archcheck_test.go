package archcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRepositoryFollowsTheMap lists every package's (non-test) imports and
// fails on each import docs/design/architecture.md forbids.
func TestRepositoryFollowsTheMap(t *testing.T) {
	cmd := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	graph := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 0 {
			graph[f[0]] = f[1:]
		}
	}
	if len(graph) < 20 {
		t.Fatalf("go list found only %d packages; is the test running at the repository root?", len(graph))
	}
	for _, v := range Check(graph, Rules()) {
		t.Errorf("forbidden import: %v", v)
	}
}

// TestCheckFindsForbiddenImports shows the check has teeth: each import
// below crosses a line of the map and must be reported.
func TestCheckFindsForbiddenImports(t *testing.T) {
	tests := []struct {
		pkg, imp string
		bad      bool
	}{
		{"pkg/compute/row", "pkg/sql", true},
		{"pkg/compute/render", "pkg/storage", true},
		{"pkg/compute/runtime", "google.golang.org/grpc", true},
		{"pkg/compute/operators", "k8s.io/api/core/v1", true},
		{"pkg/compute/render", "pkg/compute/protocol/computepb", true},
		{"pkg/placement", "pkg/compute/protocol", true},
		{"pkg/replica", "pkg/compute/protocol/computepb", true},
		{"pkg/replica", "pkg/storage/tablesource", true},
		{"pkg/replica", "pkg/placement", false},
		{"pkg/sql/planner", "pkg/environment", true},
		{"pkg/storage", "pkg/sql", true},
		{"operator/render", "pkg/compute/plan", true},
		{"pkg/sql", "cmd/controller", true},
		{"pkg/compute/controller", "pkg/compute/runtime", true},
		{"pkg/flagenv", "pkg/sql", true},
		// Allowed arrows.
		{"pkg/compute/controller", "pkg/orchestrator", false},
		{"pkg/compute/server", "pkg/sharing", false},
		{"pkg/compute/server", "google.golang.org/grpc/status", false},
		{"pkg/compute/protocol/computepb", "google.golang.org/grpc", false},
		{"pkg/sql/planner", "pkg/compute/plan", false},
		{"pkg/placement", "pkg/compute/runtime", false},
		{"pkg/environment", "pkg/sql", false},
		{"pkg/sqlish", "pkg/environment", false}, // whole path segments only
	}
	for _, tt := range tests {
		graph := map[string][]string{Module + tt.pkg: {fullPath(tt.imp)}}
		got := len(Check(graph, Rules())) > 0
		if got != tt.bad {
			t.Errorf("%s -> %s: reported=%v, want %v", tt.pkg, tt.imp, got, tt.bad)
		}
	}
}

func fullPath(p string) string {
	if strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
		return p
	}
	return Module + p
}
