package sql

import (
	"fmt"
	"math"
	"strconv"
	"time"
	// Embed the IANA time zone database so that TimeZone and AT TIME ZONE
	// work on machines without zoneinfo files (minimal containers).
	_ "time/tzdata"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// VarTimeZone is the session's time zone: the zone timestamptz values are
// shown and read in.
const VarTimeZone = "timezone"

// timeZoneValue accepts what Postgres' TimeZone accepts that Tandem can
// resolve: IANA names (case-insensitively), UTC/GMT, and POSIX-style
// offsets such as '+05' or '-03:30'; 'local' and 'default' mean UTC.
func timeZoneValue(s string) (string, error) {
	switch v := trimQuotes(s); v {
	case "local", "LOCAL", "default", "DEFAULT":
		return "UTC", nil
	default:
		if h, err := strconv.ParseFloat(v, 64); err == nil && h > -16 && h < 16 {
			// A plain number is hours EAST of UTC (unlike POSIX offsets,
			// which count west); Postgres shows it as "<+03>-03".
			return hoursZone(h), nil
		}
		if _, err := expr.LoadZone(v); err != nil {
			return "", sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid value for parameter \"TimeZone\": %q", s)
		}
		return v, nil
	}
}

// hoursZone spells an offset of h hours east as a POSIX zone with its
// abbreviation, as Postgres does.
func hoursZone(h float64) string {
	mins := int(math.Round(h * 60))
	sign := "+"
	if mins < 0 {
		sign, mins = "-", -mins
	}
	off := fmt.Sprintf("%02d", mins/60)
	if mins%60 != 0 {
		off += fmt.Sprintf(":%02d", mins%60)
	}
	posix := "-"
	if sign == "-" {
		posix = "+"
	}
	return "<" + sign + off + ">" + posix + off
}

func trimQuotes(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return s[1 : len(s)-1]
	}
	return s
}

// SetClock replaces the wall clock now() reads (tests drive time with
// it). It must be called before sessions start.
func (e *Engine) SetClock(now func() time.Time) { e.clock = now }

// statementTime is what now() returns for the statement being planned,
// in micros since the epoch: the engine's clock at millisecond
// resolution (the resolution of the engine's timestamps), fixed for the
// whole of a transaction block as in Postgres.
func (s *Session) statementTime() int64 {
	if s.tx.buffering() && s.tx.now != 0 {
		return s.tx.now
	}
	clock := time.Now
	if s.engine.clock != nil {
		clock = s.engine.clock
	}
	now := clock().UnixMilli() * 1000
	if s.tx.buffering() {
		s.tx.now = now
	}
	return now
}
