package plot

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// synthetic is n points over [0, tmax) with a log-normal-ish latency, a few
// spikes and some censored points, from a fixed seed.
func synthetic(n int, tmax float64) []Point {
	r := rand.New(rand.NewPCG(1, 2))
	pts := make([]Point, n)
	for i := range pts {
		pts[i] = Point{T: tmax * float64(i) / float64(n), Ms: math.Exp(r.NormFloat64()) * 5}
		switch {
		case r.IntN(500) == 0:
			pts[i].Ms *= 1000 // a spike
		case r.IntN(300) == 0:
			pts[i].Ms *= 50
			pts[i].Censored = true
		}
	}
	return pts
}

func TestThinKeepsEveryBucketsExtremes(t *testing.T) {
	const n, tmax = 100, 60.0
	pts := synthetic(20000, tmax)
	got := Thin(pts, n, tmax)
	if len(got) > 4*n {
		t.Fatalf("%d points after thinning to %d buckets, want at most %d", len(got), n, 4*n)
	}
	type ext struct {
		max, min, cmax Point
		has, hasC      bool
	}
	want := make([]ext, n)
	for _, p := range pts {
		i := min(n-1, int(p.T/tmax*n))
		e := &want[i]
		if p.Censored {
			if !e.hasC || p.Ms > e.cmax.Ms {
				e.cmax, e.hasC = p, true
			}
			continue
		}
		if !e.has || p.Ms > e.max.Ms {
			e.max = p
		}
		if !e.has || p.Ms < e.min.Ms {
			e.min = p
		}
		e.has = true
	}
	kept := map[Point]bool{}
	for _, p := range got {
		kept[p] = true
	}
	for i, e := range want {
		if e.has && (!kept[e.max] || !kept[e.min]) {
			t.Errorf("bucket %d: max %v or min %v thinned away", i, e.max, e.min)
		}
		if e.hasC && !kept[e.cmax] {
			t.Errorf("bucket %d: largest censored bound %v thinned away", i, e.cmax)
		}
	}
	if !sort.SliceIsSorted(got, func(i, j int) bool { return got[i].T < got[j].T }) {
		t.Errorf("thinned points are not in time order")
	}
	in := map[Point]bool{}
	for _, p := range pts {
		in[p] = true
	}
	for _, p := range got {
		if !in[p] {
			t.Fatalf("thinned point %v is not an input point", p)
		}
	}
}

func TestThinLeavesSmallSeriesAlone(t *testing.T) {
	pts := synthetic(30, 10)
	if got := Thin(pts, 10, 10); len(got) != len(pts) {
		t.Errorf("a series of %d points within 3 per bucket became %d", len(pts), len(got))
	}
	if got := Thin(nil, 10, 10); len(got) != 0 {
		t.Errorf("Thin(nil) = %v", got)
	}
}

func TestTimelineThinsLargeSeries(t *testing.T) {
	series := []Series{{Name: "a", Points: synthetic(40000, 120)}, {Name: "b", Points: synthetic(40000, 120)}}
	var buf bytes.Buffer
	if err := Timeline(&buf, "big", series, []Phase{{Name: "churn", Start: 30, End: 60}}); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	wellFormed(t, svg)
	if len(svg) > 200_000 {
		t.Errorf("timeline of 80,000 points is %d bytes, want it thinned under 200 kB", len(svg))
	}
	if !strings.Contains(svg, "min, median, max") {
		t.Errorf("caption does not say the figure is thinned")
	}
	// The slowest read is drawn: its y coordinate is the smallest of all
	// dots (log axis, top of the plot area).
	if !strings.Contains(svg, fmt.Sprintf(`cy="%.1f"`, float64(top)+(float64(height-bottom-top))*(1-logPosOf(series)))) {
		t.Errorf("the slowest point is not drawn")
	}
}

// logPosOf is the log-axis position of the largest completed latency.
func logPosOf(series []Series) float64 {
	var all []float64
	maxMs := 0.0
	for _, s := range series {
		for _, p := range s.Points {
			all = append(all, p.Ms)
			if !p.Censored {
				maxMs = math.Max(maxMs, p.Ms)
			}
		}
	}
	lo, hi := logRange(all)
	return logPos(maxMs, lo, hi)
}

// pen replays a path of M, H and V commands, checking that it only moves
// right and up (a CDF staircase), and returns where it ends and how many
// commands it has.
func pen(t *testing.T, d string) (x, y float64, cmds int) {
	t.Helper()
	f := strings.Fields(d)
	parse := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("path %q: %v", d, err)
		}
		return v
	}
	x, y = parse(strings.TrimPrefix(f[0], "M")), parse(f[1])
	for _, c := range f[2:] {
		v := parse(c[1:])
		switch c[0] {
		case 'H':
			if v < x {
				t.Fatalf("path moves left: %s after x=%v", c, x)
			}
			x = v
		case 'V':
			if v > y {
				t.Fatalf("path moves down: %s after y=%v", c, y)
			}
			y = v
		default:
			t.Fatalf("unexpected command %q", c)
		}
		cmds++
	}
	return x, y, cmds
}

func TestStepPath(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		spread  float64
		maxCmds int
	}{
		{"sparse steps are all written", 5, 100, 9},
		// At most one move per quarter pixel each way: 500/0.25 + 330/0.25,
		// against 40,000 unthinned.
		{"dense steps are thinned", 20000, 500, 3400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			xs := make([]float64, tc.n)
			for i := range xs {
				xs[i] = 70 + r.Float64()*tc.spread
			}
			sort.Float64s(xs)
			p := newStepPath(xs[0], 370)
			var lastY float64
			for j, x := range xs {
				lastY = 370 - 330*float64(j+1)/float64(tc.n)
				p.step(x, lastY)
			}
			d := p.String()
			x, y, cmds := pen(t, d)
			if fmt.Sprintf("%.1f %.1f", x, y) != fmt.Sprintf("%.1f %.1f", xs[tc.n-1], lastY) {
				t.Errorf("path ends at (%.1f, %.1f), want the last point (%.1f, %.1f)", x, y, xs[tc.n-1], lastY)
			}
			// Well-separated steps are each written (but the first
			// horizontal move, which goes nowhere).
			if tc.n <= 5 && cmds != 2*tc.n-1 {
				t.Errorf("%d commands for %d well-separated steps, want %d", cmds, tc.n, 2*tc.n-1)
			}
			if cmds > tc.maxCmds {
				t.Errorf("%d commands, want at most %d", cmds, tc.maxCmds)
			}
		})
	}
}
