package plot

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// The element shapes Timeline and CDF write; Rethin reads exactly these.
var (
	circleRe   = regexp.MustCompile(`^<circle cx="([0-9.]+)" cy="([0-9.]+)" r="1.6"/>$`)
	censoredRe = regexp.MustCompile(`^<path class="censored" d="M([0-9.]+) ([0-9.-]+)l4 7h-8z" fill="none" stroke="(#[0-9A-Fa-f]+)"/>$`)
	cdfRe      = regexp.MustCompile(`^<path class="cdf" d="([^"]*)"(.*)$`)
	legendRe   = regexp.MustCompile(`^<text x="760" y="([0-9.]+)"(?: textLength="[0-9.]+" lengthAdjust="spacingAndGlyphs")?>(.*)</text>$`)
	captionRe  = regexp.MustCompile(`^(<text [^>]*>)arrival time \(s\); latency on a log axis; triangles are lower bounds \(censored\)</text>$`)
)

// Rethin rewrites a figure that Timeline or CDF wrote before they thinned
// their input, as they would write it now: each timeline series keeps its
// per-bucket minimum, median, maximum and largest censored bound (Thin, on
// the pixel positions, which preserve order in both time and latency), and
// each CDF path drops sub-pixel moves. Every other line is copied. It lets
// a committed figure of a long run shrink without re-running the run.
// Legend entries too long for the margin are squeezed to fit, as legend
// now writes them.
// It reports how many timeline points and CDF commands it removed.
func Rethin(r io.Reader, w io.Writer) (removed int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	// The output is held until the end: the caption comes before the
	// series and says "thinned" only if a series was.
	var bw strings.Builder
	caption, captionPrefix, thinnedPoints := -1, "", 0
	var lines []string
	a := area{x0: left, x1: width - right, y0: height - bottom, y1: top}
	buckets := int(a.x1-a.x0) / 2
	var (
		inSeries bool
		pts      []Point
		strokes  []string // censored marker colour, per point (empty for dots)
	)
	flush := func() {
		// Point.T is the pixel column from the plot's left edge and Ms
		// the height above its bottom: both monotone in the real values,
		// which is all Thin compares.
		kept := Thin(pts, buckets, a.x1-a.x0)
		removed += len(pts) - len(kept)
		thinnedPoints += len(pts) - len(kept)
		stroke := map[Point]string{}
		for i, p := range pts {
			stroke[p] = strokes[i]
		}
		for _, p := range kept {
			px, py := a.x0+p.T, a.y0-p.Ms
			if p.Censored {
				fmt.Fprintf(&bw, `<path class="censored" d="M%.1f %.1fl4 7h-8z" fill="none" stroke="%s"/>`+"\n", px, py-4, stroke[p])
			} else {
				fmt.Fprintf(&bw, `<circle cx="%.1f" cy="%.1f" r="1.6"/>`+"\n", px, py)
			}
		}
		pts, strokes = pts[:0], strokes[:0]
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, `<g class="series"`):
			inSeries = true
		case inSeries && line == "</g>":
			flush()
			lines = append(lines, strings.Split(strings.TrimSuffix(bw.String(), "\n"), "\n")...)
			bw.Reset()
			inSeries = false
		case inSeries:
			if m := circleRe.FindStringSubmatch(line); m != nil {
				x, y, err := floats(m[1], m[2])
				if err != nil {
					return removed, err
				}
				pts = append(pts, Point{T: x - a.x0, Ms: a.y0 - y})
				strokes = append(strokes, "")
				continue
			}
			if m := censoredRe.FindStringSubmatch(line); m != nil {
				x, y, err := floats(m[1], m[2])
				if err != nil {
					return removed, err
				}
				pts = append(pts, Point{T: x - a.x0, Ms: a.y0 - (y + 4), Censored: true})
				strokes = append(strokes, m[3])
				continue
			}
			return removed, fmt.Errorf("unexpected line in a timeline series: %q", line)
		}
		if m := legendRe.FindStringSubmatch(line); m != nil {
			// A legend entry from before legend() squeezed long names.
			name := html.UnescapeString(m[2])
			var fixed strings.Builder
			legend(&fixed, a, []string{name})
			if l := strings.Split(strings.TrimSpace(fixed.String()), "\n"); strings.Contains(l[1], `class="fit"`) {
				line = strings.Replace(l[1], `y="60"`, `y="`+m[1]+`"`, 1)
			}
		}
		if m := captionRe.FindStringSubmatch(line); m != nil {
			caption, captionPrefix = len(lines), m[1]
		} else if m := cdfRe.FindStringSubmatch(line); m != nil {
			d, n, err := rethinPath(m[1])
			if err != nil {
				return removed, err
			}
			removed += n
			line = `<path class="cdf" d="` + d + `"` + m[2]
		}
		lines = append(lines, line)
	}
	if err := sc.Err(); err != nil {
		return removed, err
	}
	if inSeries {
		return removed, fmt.Errorf("timeline series not closed")
	}
	if caption >= 0 && thinnedPoints > 0 {
		lines[caption] = captionPrefix + thinnedCaption + "</text>"
	}
	out := bufio.NewWriter(w)
	for _, l := range lines {
		if _, err := out.WriteString(l + "\n"); err != nil {
			return removed, err
		}
	}
	return removed, out.Flush()
}

// rethinPath replays a CDF path (M x y, then H and V moves) through
// stepPath and returns the new path and how many commands it dropped.
func rethinPath(d string) (string, int, error) {
	f := strings.Fields(d)
	if len(f) < 2 || !strings.HasPrefix(f[0], "M") {
		return "", 0, fmt.Errorf("CDF path does not start with a move: %.40q", d)
	}
	x, y, err := floats(f[0][1:], f[1])
	if err != nil {
		return "", 0, err
	}
	p := newStepPath(x, y)
	for i := 2; i < len(f); i++ {
		c := f[i]
		v, err := strconv.ParseFloat(c[1:], 64)
		if err != nil || (c[0] != 'H' && c[0] != 'V') {
			return "", 0, fmt.Errorf("CDF path command %q", c)
		}
		// stepPath takes (H, V) pairs; a lone move keeps the other axis.
		if c[0] == 'H' {
			x = v
			if i+1 < len(f) && f[i+1][0] == 'V' {
				continue
			}
		} else {
			y = v
		}
		p.step(x, y)
	}
	out := p.String()
	return out, len(f) - len(strings.Fields(out)), nil
}

func floats(a, b string) (float64, float64, error) {
	x, err := strconv.ParseFloat(a, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("coordinate %q: %w", a, err)
	}
	y, err := strconv.ParseFloat(b, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("coordinate %q: %w", b, err)
	}
	return x, y, nil
}
