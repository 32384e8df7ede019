package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/tandemdb/tandem/hack/bench/internal/stats"
)

// Report is one scenario's result.
type Report struct {
	Scenario string `json:"scenario"`
	Quick    bool   `json:"quick"`
	Machine  string `json:"machine"`
	Arms     []*Arm `json:"arms"`
}

// Arm is one configuration's metrics, kept in insertion order.
type Arm struct {
	Name    string
	metrics []metric
}

type metric struct {
	key   string
	value any
}

// NewArm starts an arm with no metrics.
func NewArm(name string) *Arm { return &Arm{Name: name} }

// Latency adds a latency metric.
func (a *Arm) Latency(key string, l stats.Latency) *Arm { return a.set(key, l) }

// Int adds an integer metric (counts, bytes).
func (a *Arm) Int(key string, v int64) *Arm { return a.set(key, v) }

// Float adds a real metric (rates, ratios); NaN and infinities are stored
// as null because JSON has no spelling for them.
func (a *Arm) Float(key string, v float64) *Arm {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return a.set(key, nil)
	}
	return a.set(key, v)
}

// String adds a descriptive metric.
func (a *Arm) String(key, v string) *Arm { return a.set(key, v) }

// set replaces key's value or appends it.
func (a *Arm) set(key string, v any) *Arm {
	for i := range a.metrics {
		if a.metrics[i].key == key {
			a.metrics[i].value = v
			return a
		}
	}
	a.metrics = append(a.metrics, metric{key, v})
	return a
}

// Get returns key's value and whether it is present.
func (a *Arm) Get(key string) (any, bool) {
	for _, m := range a.metrics {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// Keys lists the arm's metric names in order.
func (a *Arm) Keys() []string {
	keys := make([]string, len(a.metrics))
	for i, m := range a.metrics {
		keys[i] = m.key
	}
	return keys
}

// MarshalJSON writes "name" then each metric in insertion order.
func (a *Arm) MarshalJSON() ([]byte, error) {
	if a.Name == "" {
		return nil, errors.New("report: arm without a name")
	}
	var b bytes.Buffer
	b.WriteString(`{"name":`)
	name, _ := json.Marshal(a.Name)
	b.Write(name)
	for _, m := range a.metrics {
		if m.key == "name" {
			return nil, fmt.Errorf("report: arm %s: metric named \"name\"", a.Name)
		}
		k, _ := json.Marshal(m.key)
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, fmt.Errorf("report: arm %s metric %s: %w", a.Name, m.key, err)
		}
		b.WriteByte(',')
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an arm back, keeping key order; latency metrics are
// recognised by their shape.
func (a *Arm) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("report: arm is not an object")
	}
	*a = Arm{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("report: arm metric %s: %w", key, err)
		}
		if key == "name" {
			if err := json.Unmarshal(raw, &a.Name); err != nil {
				return fmt.Errorf("report: arm name: %w", err)
			}
			continue
		}
		a.metrics = append(a.metrics, metric{key, decodeValue(raw)})
	}
	return nil
}

func decodeValue(raw json.RawMessage) any {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		var l stats.Latency
		if _, ok := obj["p50_ms"]; ok && json.Unmarshal(raw, &l) == nil {
			return l
		}
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		if i, err := n.Int64(); err == nil {
			return i
		}
		f, _ := n.Float64()
		return f
	}
	var v any
	_ = json.Unmarshal(raw, &v)
	return v
}

// WriteJSON writes the report, indented, with a trailing newline.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("report %s: %w", r.Scenario, err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteMarkdown writes one table: a row per arm, latency metrics as
// "p50 / p99 / max (n)" in milliseconds, scalars as they are.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var cols []string
	seen := map[string]bool{}
	for _, a := range r.Arms {
		for _, k := range a.Keys() {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### %s", r.Scenario)
	if r.Quick {
		b.WriteString(" (--quick)")
	}
	b.WriteString("\n\nLatencies in ms as p50 / p99 / max (count); `>=` marks a lower bound (a request cut off by the end of its phase).\n\n")
	b.WriteString("| arm |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s |", c)
	}
	b.WriteString("\n|---|")
	for range cols {
		b.WriteString("---|")
	}
	b.WriteByte('\n')
	for _, a := range r.Arms {
		fmt.Fprintf(&b, "| %s |", a.Name)
		for _, c := range cols {
			v, ok := a.Get(c)
			cell := ""
			if ok {
				cell = FormatValue(v)
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// FormatValue renders one metric for a table cell.
func FormatValue(v any) string {
	switch v := v.(type) {
	case stats.Latency:
		if v.Count == 0 {
			return "no samples"
		}
		lb := func(bound bool) string {
			if bound {
				return ">="
			}
			return ""
		}
		s := fmt.Sprintf("%s%s / %s%s / %s%s (%d)",
			lb(v.P50LowerBound), num(v.P50Ms), lb(v.P99LowerBound), num(v.P99Ms), lb(v.MaxLowerBound || v.Censored), num(v.MaxMs), v.Count)
		if v.CensoredCount > 0 {
			s += fmt.Sprintf(", %d censored", v.CensoredCount)
		}
		return s
	case float64:
		return num(v)
	case nil:
		return "n/a"
	default:
		return fmt.Sprint(v)
	}
}

// num prints three significant figures, enough for latencies whose buckets
// resolve under 1%.
func num(f float64) string {
	switch a := math.Abs(f); {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", f)
	case a >= 10:
		return fmt.Sprintf("%.1f", f)
	case a >= 1:
		return fmt.Sprintf("%.2f", f)
	default:
		return fmt.Sprintf("%.3g", f)
	}
}
