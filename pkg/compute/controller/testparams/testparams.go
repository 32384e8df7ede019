package testparams

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// EnvVar names the environment variable holding the parameters.
const EnvVar = "TANDEM_TEST_SYSTEM_PARAMETERS"

// interactiveParam is the controller's flag for the interactive runtime
// (controller.ParamInteractiveDataflows; restated to keep this package
// importable from the controller's own internal tests).
const interactiveParam = "enable_compute_interactive_dataflows"

// Parse parses name=value,... into a map. Empty input is an empty map.
func Parse(s string) (map[string]string, error) {
	out := map[string]string{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		name, value = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(value)
		if !ok || name == "" || value == "" {
			return nil, fmt.Errorf("%s: %q is not name=value", EnvVar, part)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s: parameter %q given twice", EnvVar, name)
		}
		out[name] = value
	}
	return out, nil
}

// Parameters returns the parameters of this test run (empty when the
// variable is unset), the interactive flag spelled "on" or "off" as the
// controller stores it. It fails the test when the variable is malformed.
func Parameters(t testing.TB) map[string]string {
	t.Helper()
	ps, err := Parse(os.Getenv(EnvVar))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := ps[interactiveParam]; ok {
		on, err := parseBool(v)
		if err != nil {
			t.Fatalf("%s: %s=%q: %v", EnvVar, interactiveParam, v, err)
		}
		ps[interactiveParam] = map[bool]string{true: "on", false: "off"}[on]
	}
	return ps
}

// Flag returns the parameters as a --system-parameter-default argument
// for the controller binary, or nil when there are none.
func Flag(t testing.TB) []string {
	t.Helper()
	ps := Parameters(t)
	if len(ps) == 0 {
		return nil
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(ps)) {
		parts = append(parts, name+"="+ps[name])
	}
	return []string{"--system-parameter-default=" + strings.Join(parts, ",")}
}

// Interactive reports whether this run has
// enable_compute_interactive_dataflows on, i.e. whether replicas are to
// be provisioned with the interactive runtime.
func Interactive(t testing.TB) bool {
	t.Helper()
	return Parameters(t)[interactiveParam] == "on"
}

// Expected returns the value SHOW should report for the interactive flag
// in this run: "on" or "off".
func Expected(t testing.TB) string {
	t.Helper()
	if Interactive(t) {
		return "on"
	}
	return "off"
}

// parseBool accepts the spellings the controller accepts.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "on", "true", "yes", "1":
		return true, nil
	case "off", "false", "no", "0":
		return false, nil
	}
	return false, errors.New("not a Boolean")
}

// Runtimes scrapes a replica process's metrics endpoint (internalHTTPAddr
// is host:port) and returns the runtimes the process runs, by role, each
// with the number of peeks its runtime finished. A Solo replica's series
// carry no role label and it is reported as "solo"; a two-runtime replica
// reports "maintenance" and "interactive". One-shot reads placed on the
// interactive runtime count under "interactive".
func Runtimes(ctx context.Context, internalHTTPAddr string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+internalHTTPAddr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape replica metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape replica metrics: %s", resp.Status)
	}
	return parseRuntimes(resp.Body)
}

// Series the replica registers once per runtime (cmd/replica/metrics.go).
const (
	stepCount = "tandem_compute_worker_step_duration_seconds_count"
	peekCount = "tandem_compute_runtime_peek_duration_seconds_count"
)

// parseRuntimes reads Prometheus text: every runtime has a worker step
// histogram; its peeks are summed over results.
func parseRuntimes(r io.Reader) (map[string]float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	out := map[string]float64{}
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, labels, value, ok := splitSample(line)
		if !ok || (name != stepCount && name != peekCount) {
			continue
		}
		role := labelValue(labels, "role")
		if role == "" {
			role = "solo"
		}
		if name == stepCount {
			out[role] += 0 // the runtime exists
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("replica metrics: %q: %w", line, err)
		}
		out[role] += v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read replica metrics: %w", err)
	}
	return out, nil
}

// splitSample splits `name{labels} value` (labels optional).
func splitSample(line string) (name, labels, value string, ok bool) {
	head, value, ok := strings.Cut(line, " ")
	if !ok {
		return "", "", "", false
	}
	name, labels, _ = strings.Cut(head, "{")
	return name, strings.TrimSuffix(labels, "}"), strings.TrimSpace(value), true
}

// labelValue returns a label's value from `a="x",b="y"` (label values the
// replica emits contain no commas or quotes).
func labelValue(labels, name string) string {
	for kv := range strings.SplitSeq(labels, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}
