package plot

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
)

// wellFormed parses the whole document as XML.
func wellFormed(t *testing.T, svg string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := dec.Token(); err == io.EOF {
			return
		} else if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, svg)
		}
	}
}

func sampleSeries() []Series {
	return []Series{
		{Name: "solo <point_read>", Points: []Point{{T: 0.1, Ms: 2}, {T: 5, Ms: 1800}, {T: 6, Ms: 4000, Censored: true}}},
		{Name: "two_runtime", Points: []Point{{T: 0.1, Ms: 2}, {T: 5, Ms: 3}}},
	}
}

func TestTimeline(t *testing.T) {
	var buf bytes.Buffer
	phases := []Phase{{Name: "churn", Start: 2, End: 8}}
	if err := Timeline(&buf, "isolation & co", sampleSeries(), phases); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	wellFormed(t, svg)
	cases := []struct {
		what string
		sub  string
		n    int
	}{
		{"one shaded phase", `class="phase"`, 1},
		{"one marker per censored point", `class="censored"`, 1},
		{"a dot per completed point", `<circle`, 4},
		{"the phase label", ">churn<", 1},
		{"an escaped legend entry", "solo &lt;point_read&gt;", 1},
	}
	for _, tc := range cases {
		if got := strings.Count(svg, tc.sub); got != tc.n {
			t.Errorf("%s: %d of %q, want %d", tc.what, got, tc.sub, tc.n)
		}
	}
}

func TestCDF(t *testing.T) {
	var buf bytes.Buffer
	if err := CDF(&buf, "cdf", sampleSeries()); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	wellFormed(t, svg)
	if got := strings.Count(svg, `class="cdf"`); got != 2 {
		t.Errorf("%d CDF curves, want 2", got)
	}
	if !strings.Contains(svg, "(1 censored)") {
		t.Errorf("legend does not say the solo series has a censored point")
	}
}

func TestEmptyInputsStillWellFormed(t *testing.T) {
	var buf bytes.Buffer
	if err := Timeline(&buf, "empty", nil, nil); err != nil {
		t.Fatal(err)
	}
	wellFormed(t, buf.String())
	buf.Reset()
	if err := CDF(&buf, "empty", []Series{{Name: "none"}}); err != nil {
		t.Fatal(err)
	}
	wellFormed(t, buf.String())
}

func TestLogRange(t *testing.T) {
	cases := []struct {
		vals   []float64
		lo, hi float64
	}{
		{[]float64{1.5, 2500}, 1, 10000},
		{[]float64{0, 0.3}, 0.1, 1},
		{nil, 0.1, 1000},
		{[]float64{10}, 10, 100},
	}
	for _, tc := range cases {
		lo, hi := logRange(tc.vals)
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("logRange(%v) = %v..%v, want %v..%v", tc.vals, lo, hi, tc.lo, tc.hi)
		}
	}
}

func TestSweep(t *testing.T) {
	var buf bytes.Buffer
	series := []XYSeries{
		{Name: "inline", Points: []XY{{X: 200000, Y: 466}, {X: 5000, Y: 21}, {X: 50000, Y: 52, LowerBound: true}}},
		{Name: "offload", Points: []XY{{X: 5000, Y: 34}}},
	}
	if err := Sweep(&buf, "scans", "keys", "p99", series); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	wellFormed(t, svg)
	if got := strings.Count(svg, `class="sweep"`); got != 1 {
		t.Errorf("%d lines, want 1 (a one-point series has no line)", got)
	}
	if got := strings.Count(svg, `class="xy"`); got != 4 {
		t.Errorf("%d markers, want 4", got)
	}
	if got := strings.Count(svg, `fill="white" stroke`); got != 1 {
		t.Errorf("%d hollow markers, want 1 for the lower bound", got)
	}
	// The line visits the sizes in order, whatever order they came in.
	_, rest, _ := strings.Cut(svg, `class="sweep" d="M`)
	d, _, _ := strings.Cut(rest, `"`)
	var prev float64 = -1
	for _, seg := range strings.Split(d, "L") {
		var px, py float64
		if _, err := fmt.Sscanf(strings.TrimSpace(seg), "%g %g", &px, &py); err != nil {
			t.Fatalf("segment %q: %v", seg, err)
		}
		if px <= prev {
			t.Errorf("sweep line goes back from x=%v to x=%v", prev, px)
		}
		prev = px
	}
}

func TestLegendFitsLongNames(t *testing.T) {
	var buf bytes.Buffer
	series := []Series{{Name: "short"}, {Name: "two_runtime introspection (12 censored)"}}
	if err := CDF(&buf, "legend", series); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	wellFormed(t, svg)
	if got := strings.Count(svg, `class="fit"`); got != 1 {
		t.Errorf("%d legend entries squeezed, want 1 (only the long name)", got)
	}
}
