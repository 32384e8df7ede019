package plot

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// oldTimeline writes a figure as Timeline did before it thinned: one dot
// per point, here 6,000 dots in one series, one of them far above the rest,
// plus one censored marker, and a dense CDF path.
func oldTimeline() (svg, slowest, censored string, cdfEnd string) {
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="900" height="420" viewBox="0 0 900 420" font-family="sans-serif" font-size="12">` + "\n")
	b.WriteString(`<rect width="900" height="420" fill="white"/>` + "\n")
	b.WriteString(`<text x="400" y="408" text-anchor="middle">arrival time (s); latency on a log axis; triangles are lower bounds (censored)</text>` + "\n")
	b.WriteString(`<g class="series" fill="#0072B2">` + "\n")
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 6000 {
		x := 70 + 660*float64(i)/6000
		y := 300 + 60*r.Float64()
		if i == 4321 {
			y = 55.5
			slowest = fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="1.6"/>`, x, y)
			b.WriteString(slowest + "\n")
			continue
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="1.6"/>`+"\n", x, y)
	}
	censored = `<path class="censored" d="M700.0 96.0l4 7h-8z" fill="none" stroke="#0072B2"/>`
	b.WriteString(censored + "\n</g>\n")
	var d strings.Builder
	d.WriteString("M80.0 370.0")
	for j := range 8000 {
		fmt.Fprintf(&d, " H%.1f V%.1f", 80+600*float64(j)/8000, 370-330*float64(j+1)/8000)
	}
	cdfEnd = fmt.Sprintf("H%.1f V%.1f", 80+600*float64(7999)/8000, 40.0)
	fmt.Fprintf(&b, `<path class="cdf" d="%s" fill="none" stroke="#0072B2" stroke-width="1.5"/>`+"\n", d.String())
	b.WriteString(`<text x="760" y="78">two_runtime introspection &amp; more</text>` + "\n")
	b.WriteString("</svg>\n")
	return b.String(), slowest, censored, cdfEnd
}

func TestRethinShrinksAndKeepsExtremes(t *testing.T) {
	in, slowest, censored, cdfEnd := oldTimeline()
	var out bytes.Buffer
	removed, err := Rethin(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	svg := out.String()
	wellFormed(t, svg)
	if removed == 0 || out.Len() > len(in)/4 {
		t.Errorf("rethinned %d -> %d bytes (%d removed), want under a quarter", len(in), out.Len(), removed)
	}
	if !strings.Contains(svg, slowest+"\n") {
		t.Errorf("the slowest dot %s was thinned away", slowest)
	}
	if !strings.Contains(svg, censored+"\n") {
		t.Errorf("the censored marker was thinned away")
	}
	if !strings.Contains(svg, thinnedCaption) {
		t.Errorf("caption does not say the series is thinned")
	}
	if n := strings.Count(svg, "<circle"); n > 3*330 {
		t.Errorf("%d dots left, want at most 3 per 2-px column", n)
	}
	if !strings.Contains(svg, `<text x="760" y="78" class="fit" font-size="7.8">two_runtime introspection &amp; more</text>`) {
		t.Errorf("the long legend entry was not squeezed into the margin")
	}
	_, rest, _ := strings.Cut(svg, `<path class="cdf" d="`)
	d, _, _ := strings.Cut(rest, `"`)
	if x, y, _ := pen(t, d); fmt.Sprintf("H%.1f V%.1f", x, y) != cdfEnd {
		t.Errorf("CDF path ends at (%.1f, %.1f), want its last step %q", x, y, cdfEnd)
	}
}

func TestRethinLeavesThinFiguresAlone(t *testing.T) {
	var fig bytes.Buffer
	if err := Timeline(&fig, "small", sampleSeries(), []Phase{{Name: "churn", Start: 1, End: 2}}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	removed, err := Rethin(bytes.NewReader(fig.Bytes()), &out)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 0 || out.String() != fig.String() {
		t.Errorf("a figure with nothing to thin changed (%d removed)", removed)
	}
}

func TestRethinRejectsUnknownSeriesContent(t *testing.T) {
	in := `<g class="series" fill="#000">` + "\n" + `<rect x="1"/>` + "\n</g>\n"
	if _, err := Rethin(strings.NewReader(in), &bytes.Buffer{}); err == nil {
		t.Fatal("an element Timeline never writes inside a series must be an error, not dropped")
	}
}
