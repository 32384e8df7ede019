package plot

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// Point is one request: when it arrived (seconds from the run's start)
// and its latency in milliseconds; Censored marks a lower bound.
type Point struct {
	T        float64
	Ms       float64
	Censored bool
}

// Series is one named set of points (an arm's read kind).
type Series struct {
	Name   string
	Points []Point
}

// Phase is a shaded time span, e.g. "churn".
type Phase struct {
	Name       string
	Start, End float64 // seconds from the run's start
}

// palette is colour-blind friendly (Okabe-Ito).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"}

const (
	width, height = 900, 420
	left, right   = 70, 170 // right margin holds the legend
	top, bottom   = 40, 50
)

// frame draws the SVG header, title and axes box, returning the plot area.
type area struct{ x0, x1, y0, y1 float64 } // y0 is the bottom edge

func header(b *strings.Builder, title string) area {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(b, `<text x="%d" y="22" font-size="15">%s</text>`+"\n", left, esc(title))
	a := area{x0: left, x1: width - right, y0: height - bottom, y1: top}
	fmt.Fprintf(b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#444"/>`+"\n", a.x0, a.y1, a.x1-a.x0, a.y0-a.y1)
	return a
}

// logRange returns decade-aligned bounds covering every positive value.
func logRange(vals []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return 0.1, 1000
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

// logPos maps v to [0,1] on a log axis; non-positive values sit at 0.
func logPos(v, lo, hi float64) float64 {
	if v <= lo {
		return 0
	}
	return math.Min(1, math.Log10(v/lo)/math.Log10(hi/lo))
}

func decades(lo, hi float64) []float64 {
	var d []float64
	for v := lo; v <= hi*1.0001; v *= 10 {
		d = append(d, v)
	}
	return d
}

func msLabel(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%gs", v/1000)
	default:
		return fmt.Sprintf("%gms", v)
	}
}

func legend(b *strings.Builder, a area, names []string) {
	room := width - (a.x1 + 30) - 4
	for i, n := range names {
		y := a.y1 + 10 + float64(i)*18
		fmt.Fprintf(b, `<rect x="%g" y="%g" width="12" height="12" fill="%s"/>`+"\n", a.x1+12, y, palette[i%len(palette)])
		// A name longer than the margin (about 6.5 px a character at
		// 12 px) is set smaller to fit rather than cut off at the edge.
		fit := ""
		if w := float64(len(n)) * 6.5; w > room {
			fit = fmt.Sprintf(` class="fit" font-size="%.1f"`, math.Max(7, 12*room/w))
		}
		fmt.Fprintf(b, `<text x="%g" y="%g"%s>%s</text>`+"\n", a.x1+30, y+10, fit, esc(n))
	}
}

// Timeline writes latency against arrival time for each series, with the
// phases shaded behind the points.
func Timeline(w io.Writer, title string, series []Series, phases []Phase) error {
	var b strings.Builder
	a := header(&b, title)
	var tmax float64
	var lat []float64
	for _, s := range series {
		for _, p := range s.Points {
			tmax = math.Max(tmax, p.T)
			lat = append(lat, p.Ms)
		}
	}
	for _, ph := range phases {
		tmax = math.Max(tmax, ph.End)
	}
	if tmax <= 0 {
		tmax = 1
	}
	lo, hi := logRange(lat)
	x := func(t float64) float64 { return a.x0 + (a.x1-a.x0)*t/tmax }
	y := func(ms float64) float64 { return a.y0 - (a.y0-a.y1)*logPos(ms, lo, hi) }
	for _, ph := range phases {
		fmt.Fprintf(&b, `<rect class="phase" x="%.1f" y="%g" width="%.1f" height="%g" fill="#f2e6c9" opacity="0.8"/>`+"\n",
			x(ph.Start), a.y1, x(ph.End)-x(ph.Start), a.y0-a.y1)
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" fill="#8a6d1f">%s</text>`+"\n", x(ph.Start)+3, a.y1+14, esc(ph.Name))
	}
	for _, d := range decades(lo, hi) {
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", a.x0, a.x1, y(d), y(d))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%s</text>`+"\n", a.x0-6, y(d)+4, msLabel(d))
	}
	for _, t := range ticks(tmax) {
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%gs</text>`+"\n", x(t), a.y0+16, t)
	}
	// About one bucket per two pixel columns: the thinned figure looks
	// the same to the eye, at a fraction of the elements.
	buckets := int(a.x1-a.x0) / 2
	thinned := make([][]Point, len(series))
	anyThinned := false
	for i, s := range series {
		thinned[i] = Thin(s.Points, buckets, tmax)
		anyThinned = anyThinned || len(thinned[i]) < len(s.Points)
	}
	caption := "arrival time (s); latency on a log axis; triangles are lower bounds (censored)"
	if anyThinned {
		caption = thinnedCaption
	}
	fmt.Fprintf(&b, `<text x="%g" y="%d" text-anchor="middle">%s</text>`+"\n", (a.x0+a.x1)/2, height-12, caption)
	names := make([]string, len(series))
	for i, s := range series {
		names[i] = s.Name
		c := palette[i%len(palette)]
		fmt.Fprintf(&b, `<g class="series" fill="%s">`+"\n", c)
		for _, p := range thinned[i] {
			px, py := x(p.T), y(p.Ms)
			if p.Censored {
				fmt.Fprintf(&b, `<path class="censored" d="M%.1f %.1fl4 7h-8z" fill="none" stroke="%s"/>`+"\n", px, py-4, c)
			} else {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="1.6"/>`+"\n", px, py)
			}
		}
		b.WriteString("</g>\n")
	}
	legend(&b, a, names)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// thinnedCaption is the timeline's axis caption when Thin removed points.
const thinnedCaption = "arrival time (s); log latency; per 2-px column: min, median, max (triangle: largest censored bound)"

// ticks picks about eight round time ticks in [0, tmax].
func ticks(tmax float64) []float64 {
	step := math.Pow(10, math.Floor(math.Log10(tmax/8)))
	for _, m := range []float64{1, 2, 5, 10} {
		if tmax/(step*m) <= 10 {
			step *= m
			break
		}
	}
	var t []float64
	for v := 0.0; v <= tmax+1e-9; v += step {
		t = append(t, math.Round(v*1000)/1000)
	}
	return t
}

// CDF writes the empirical distribution of each series' latencies.
// Censored points enter at their lower bound (the curve is then an upper
// bound on the true CDF) and the legend says how many there were.
func CDF(w io.Writer, title string, series []Series) error {
	var b strings.Builder
	a := header(&b, title)
	var lat []float64
	for _, s := range series {
		for _, p := range s.Points {
			lat = append(lat, p.Ms)
		}
	}
	lo, hi := logRange(lat)
	x := func(ms float64) float64 { return a.x0 + (a.x1-a.x0)*logPos(ms, lo, hi) }
	y := func(f float64) float64 { return a.y0 - (a.y0-a.y1)*f }
	for _, d := range decades(lo, hi) {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="#ddd"/>`+"\n", x(d), x(d), a.y1, a.y0)
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n", x(d), a.y0+16, msLabel(d))
	}
	for _, f := range []float64{0, 0.5, 0.9, 0.99, 1} {
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", a.x0, a.x1, y(f), y(f))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%g</text>`+"\n", a.x0-6, y(f)+4, f)
	}
	fmt.Fprintf(&b, `<text x="%g" y="%d" text-anchor="middle">latency (log axis); fraction of requests at or below</text>`+"\n", (a.x0+a.x1)/2, height-12)
	names := make([]string, len(series))
	for i, s := range series {
		vals := make([]float64, 0, len(s.Points))
		censored := 0
		for _, p := range s.Points {
			vals = append(vals, p.Ms)
			if p.Censored {
				censored++
			}
		}
		sort.Float64s(vals)
		names[i] = s.Name
		if censored > 0 {
			names[i] = fmt.Sprintf("%s (%d censored)", s.Name, censored)
		}
		if len(vals) == 0 {
			continue
		}
		path := newStepPath(x(vals[0]), y(0))
		for j, v := range vals {
			path.step(x(v), y(float64(j+1)/float64(len(vals))))
		}
		fmt.Fprintf(&b, `<path class="cdf" d="%s" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n", path.String(), palette[i%len(palette)])
	}
	legend(&b, a, names)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// XY is one point of a swept measurement: the swept value and the result.
type XY struct {
	X, Y float64
	// LowerBound marks a result that is a lower bound (censored samples
	// decided it); it is drawn hollow.
	LowerBound bool
}

// XYSeries is one named line of a sweep.
type XYSeries struct {
	Name   string
	Points []XY
}

// Sweep writes each series as a line over the swept values, both axes
// logarithmic (a sweep's sizes and its latencies each span decades): e.g.
// a lookup's p99 against the size of the scan behind it.
func Sweep(w io.Writer, title, xLabel, yLabel string, series []XYSeries) error {
	var b strings.Builder
	a := header(&b, title)
	var xs, ys []float64
	for _, s := range series {
		for _, p := range s.Points {
			xs = append(xs, p.X)
			ys = append(ys, p.Y)
		}
	}
	xlo, xhi := logRange(xs)
	ylo, yhi := logRange(ys)
	x := func(v float64) float64 { return a.x0 + (a.x1-a.x0)*logPos(v, xlo, xhi) }
	y := func(v float64) float64 { return a.y0 - (a.y0-a.y1)*logPos(v, ylo, yhi) }
	for _, d := range decades(ylo, yhi) {
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", a.x0, a.x1, y(d), y(d))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%s</text>`+"\n", a.x0-6, y(d)+4, msLabel(d))
	}
	for _, d := range decades(xlo, xhi) {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="#eee"/>`+"\n", x(d), x(d), a.y1, a.y0)
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%g</text>`+"\n", x(d), a.y0+16, d)
	}
	fmt.Fprintf(&b, `<text x="%g" y="%d" text-anchor="middle">%s (log axis); %s (log axis); hollow: lower bound</text>`+"\n", (a.x0+a.x1)/2, height-12, esc(xLabel), esc(yLabel))
	names := make([]string, len(series))
	for i, s := range series {
		names[i] = s.Name
		c := palette[i%len(palette)]
		pts := append([]XY(nil), s.Points...)
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		if len(pts) > 1 {
			var path strings.Builder
			for j, p := range pts {
				cmd := "L"
				if j == 0 {
					cmd = "M"
				}
				fmt.Fprintf(&path, "%s%.1f %.1f ", cmd, x(p.X), y(p.Y))
			}
			fmt.Fprintf(&b, `<path class="sweep" d="%s" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n", strings.TrimSpace(path.String()), c)
		}
		for _, p := range pts {
			fill := c
			if p.LowerBound {
				fill = "white"
			}
			fmt.Fprintf(&b, `<circle class="xy" cx="%.1f" cy="%.1f" r="3.5" fill="%s" stroke="%s"/>`+"\n", x(p.X), y(p.Y), fill, c)
		}
	}
	legend(&b, a, names)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
