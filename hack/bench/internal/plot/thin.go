package plot

import (
	"fmt"
	"math"
	"sort"
)

// Thin reduces a series to at most three completed points per time bucket:
// the bucket's minimum, median and maximum latency, plus its largest
// censored lower bound, when it has any. The buckets split [0, tmax] into n
// equal spans (a bucket per couple of pixels), so the figure keeps the
// envelope the eye reads — where the worst reads were and when — and the
// typical level, while a run of tens of thousands of reads no longer
// becomes tens of thousands of SVG elements. Every bucket's maximum
// survives, so no spike is thinned away. The result is in time order.
// Series of at most 3n points are returned unchanged.
func Thin(pts []Point, n int, tmax float64) []Point {
	if n <= 0 || len(pts) <= 3*n || tmax <= 0 {
		return pts
	}
	type bucket struct{ done, censored []Point }
	bs := make([]bucket, n)
	for _, p := range pts {
		i := int(p.T / tmax * float64(n))
		i = max(0, min(n-1, i))
		if p.Censored {
			bs[i].censored = append(bs[i].censored, p)
		} else {
			bs[i].done = append(bs[i].done, p)
		}
	}
	out := make([]Point, 0, 4*n)
	for _, b := range bs {
		var keep []Point
		if len(b.done) > 0 {
			sort.SliceStable(b.done, func(i, j int) bool { return b.done[i].Ms < b.done[j].Ms })
			keep = append(keep, b.done[0])
			if len(b.done) > 2 {
				keep = append(keep, b.done[len(b.done)/2])
			}
			if len(b.done) > 1 {
				keep = append(keep, b.done[len(b.done)-1])
			}
		}
		if len(b.censored) > 0 {
			worst := b.censored[0]
			for _, p := range b.censored[1:] {
				if p.Ms > worst.Ms {
					worst = p
				}
			}
			keep = append(keep, worst)
		}
		sort.SliceStable(keep, func(i, j int) bool { return keep[i].T < keep[j].T })
		out = append(out, keep...)
	}
	return out
}

// stepPath writes an SVG path of horizontal and vertical moves (a CDF's
// staircase), leaving out a move that would shift the pen by less than
// minStep pixels from where it is: a CDF of tens of thousands of samples
// otherwise writes two commands per sample though most of them move the pen
// by nothing visible. Because each move is compared with the pen and not
// with the previous move, skipped moves never add up to a visible drift;
// two moves in a row along one axis merge into one; and the path always
// ends exactly at the last point given.
type stepPath struct {
	b       []byte
	x, y    float64 // the pen
	lastX   float64 // the last point given
	lastY   float64
	lastCmd byte // 'H' or 'V': the command that ends b, if any
	lastAt  int  // where that command starts in b
}

// minStep is the shortest move written, in pixels.
const minStep = 0.25

func newStepPath(x, y float64) *stepPath {
	s := &stepPath{x: x, y: y, lastX: x, lastY: y}
	s.b = fmt.Appendf(s.b, "M%.1f %.1f", x, y)
	return s
}

// step moves horizontally to x, then vertically to y.
func (s *stepPath) step(x, y float64) {
	s.lastX, s.lastY = x, y
	if math.Abs(x-s.x) >= minStep {
		s.move('H', x)
		s.x = x
	}
	if math.Abs(y-s.y) >= minStep {
		s.move('V', y)
		s.y = y
	}
}

// move writes one command, replacing the previous one when it moved along
// the same axis (H a H b is H b).
func (s *stepPath) move(cmd byte, v float64) {
	if s.lastCmd == cmd {
		s.b = s.b[:s.lastAt]
	}
	s.lastCmd, s.lastAt = cmd, len(s.b)
	s.b = fmt.Appendf(s.b, " %c%.1f", cmd, v)
}

// String finishes the path at the last point given and returns it.
func (s *stepPath) String() string {
	if s.x != s.lastX {
		s.move('H', s.lastX)
		s.x = s.lastX
	}
	if s.y != s.lastY {
		s.move('V', s.lastY)
		s.y = s.lastY
	}
	return string(s.b)
}
