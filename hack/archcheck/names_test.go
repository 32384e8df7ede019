package archcheck

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestMapNamesEveryPackage fails when docs/design/architecture.md does not
// name a package of the repository (go list ./...), so a new package is
// placed on the map when it is added.
func TestMapNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("../../docs/design/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-e", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for line := range strings.Lines(string(out)) {
		pkgs = append(pkgs, strings.TrimPrefix(strings.TrimSpace(line), Module))
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found only %d packages; is the test running at the repository root?", len(pkgs))
	}
	for _, p := range Unnamed(string(doc), pkgs) {
		t.Errorf("package %s is not on the map (docs/design/architecture.md): name it with what it may import", p)
	}
}

func TestUnnamed(t *testing.T) {
	doc := "```\ncmd ──> `pkg/compute/newthing`\n```\n| `pkg/compute/batch`, `spine` | x |\n| `operator/{render,rollout}` | y |\n| `hack/bench` (+ `internal/{load,plot}`) | z |\n| `operator/...` | w |"
	tests := []struct {
		pkg   string
		named bool
	}{
		{"pkg/compute/batch", true},
		{"pkg/compute/spine", true},
		{"operator/render", true},
		{"operator/rollout", true},
		{"operator", true},
		{"hack/bench/internal/load", true},
		{"hack/bench/internal/stats", false},
		{"pkg/compute/newthing", false}, // only in a drawing
		{"pkg/compute/batchx", false},   // whole segments only
	}
	for _, tt := range tests {
		got := !slices.Contains(Unnamed(doc, []string{tt.pkg}), tt.pkg)
		if got != tt.named {
			t.Errorf("%s named = %v, want %v", tt.pkg, got, tt.named)
		}
	}
}
