package frontier

import (
	"fmt"
	"strconv"
	"strings"
)

// Time is milliseconds since the Unix epoch.
type Time uint64

// MaxTime is the largest representable time. It is a valid time, distinct
// from the closed frontier.
const MaxTime = Time(^uint64(0))

// Frontier is a lower bound on the times that may still change: a single
// time, or closed (nothing may change any more). The zero value is the
// minimum frontier At(0).
type Frontier struct {
	t      Time
	closed bool
}

// At returns the frontier {t}.
func At(t Time) Frontier { return Frontier{t: t} }

// Closed returns the empty frontier, beyond every time.
func Closed() Frontier { return Frontier{closed: true} }

// Minimum returns the frontier {0}: nothing is complete.
func Minimum() Frontier { return Frontier{} }

// IsClosed reports whether f is the empty frontier.
func (f Frontier) IsClosed() bool { return f.closed }

// Time returns the frontier's time and true, or 0 and false when closed.
func (f Frontier) Time() (Time, bool) {
	if f.closed {
		return 0, false
	}
	return f.t, true
}

// LessEqualTime reports whether some element of f is <= t, that is, whether
// t may still change. It is false for a closed frontier.
func (f Frontier) LessEqualTime(t Time) bool { return !f.closed && f.t <= t }

// IsComplete reports whether every update at time t is known: t < f.
func (f Frontier) IsComplete(t Time) bool { return !f.LessEqualTime(t) }

// LessEqual reports whether f <= g in the frontier order (closed is largest).
func (f Frontier) LessEqual(g Frontier) bool {
	switch {
	case g.closed:
		return true
	case f.closed:
		return false
	default:
		return f.t <= g.t
	}
}

// Less reports whether f < g.
func (f Frontier) Less(g Frontier) bool { return f.LessEqual(g) && f != g }

// Meet returns the lesser of f and g.
func Meet(f, g Frontier) Frontier {
	if f.LessEqual(g) {
		return f
	}
	return g
}

// Join returns the greater of f and g.
func Join(f, g Frontier) Frontier {
	if f.LessEqual(g) {
		return g
	}
	return f
}

// AdvanceTime returns t advanced by the compaction frontier f: the least time
// >= t that is not before f. Logical compaction maps every time before
// `since` to `since`, which preserves every read at or beyond `since`.
// Advancing by a closed frontier is meaningless; callers must not do it, and
// it returns t unchanged.
func (f Frontier) AdvanceTime(t Time) Time {
	if f.closed || t >= f.t {
		return t
	}
	return f.t
}

// String prints "[t]" or "[]" for closed, the canonical form used in logs,
// metrics and SQL.
func (f Frontier) String() string {
	if f.closed {
		return "[]"
	}
	return "[" + strconv.FormatUint(uint64(f.t), 10) + "]"
}

// Parse parses the String form.
func Parse(s string) (Frontier, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return Frontier{}, fmt.Errorf("parse frontier %q: want [t] or []", s)
	}
	inner := strings.TrimSpace(s[1 : len(s)-1])
	if inner == "" {
		return Closed(), nil
	}
	t, err := strconv.ParseUint(inner, 10, 64)
	if err != nil {
		return Frontier{}, fmt.Errorf("parse frontier %q: %w", s, err)
	}
	return At(Time(t)), nil
}
