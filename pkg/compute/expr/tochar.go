package expr

import (
	"strconv"
	"strings"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

var (
	monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July", "August",
		"September", "October", "November", "December"}
	romanMonths = [...]string{"I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"}
	dayNames    = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

// toCharPatterns are the template patterns to_char understands, longest
// first so that "HH24" wins over "HH" and "Month" over "MM".
var toCharPatterns = []string{
	"HH24", "HH12", "IYYY", "YYYY", "MONTH", "Month", "month", "A.M.", "P.M.", "a.m.", "p.m.",
	"YYY", "IYY", "MON", "Mon", "mon", "DAY", "Day", "day", "DDD",
	"HH", "MI", "SS", "MS", "US", "YY", "IY", "MM", "DD", "DY", "Dy", "dy", "ID", "IW", "WW",
	"AM", "PM", "am", "pm", "BC", "AD", "bc", "ad", "TZ", "tz", "OF", "CC",
	"RM", "rm", "Y", "I", "D", "Q", "J",
}

// unsupportedToChar are Postgres patterns to_char here refuses rather
// than print as literal text.
var unsupportedToChar = []string{"SSSSS", "SSSS", "Y,YYY", "FF1", "FF2", "FF3", "FF4", "FF5", "FF6", "TZH", "TZM",
	"TH", "th", "SP", "FX", "TM", "EEEE", "B.C.", "A.D.", "b.c.", "a.d.", "W"}

// evalToChar is to_char(x, format[, zone]) for timestamps, timestamptz
// (shown in zone) and dates.
func evalToChar(args []row.Datum) (row.Datum, error) {
	for _, a := range args {
		if a.IsNull() {
			return row.Null(), nil
		}
	}
	x, format := args[0], args[1].Text()
	loc, err := optionalZone(args, 2)
	if err != nil {
		return row.Null(), err
	}
	if x.Type() == row.TypeInterval || x.Type() == row.TypeTime {
		return row.Null(), evalErr(CodeFeatureNotSupported, "to_char of type %s is not supported", x.Type().PGName())
	}
	us, err := timestampInput(x, loc)
	if err != nil {
		return row.Null(), err
	}
	if !row.TimestampIsFinite(us) {
		return row.Null(), nil // Postgres gives NULL for infinite input
	}
	var off int64
	zoneName := ""
	if x.Type() == row.TypeTimestampTZ {
		off = row.ZoneOffset(x.TimestampTZ(), loc)
		zoneName, _ = time.UnixMicro(x.TimestampTZ()).In(loc).Zone()
	}
	out, err := formatToChar(format, splitTimestamp(us), off, zoneName)
	if err != nil {
		return row.Null(), err
	}
	return row.Text(out), nil
}

func formatToChar(format string, lf localFields, off int64, zoneName string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(format); {
		if format[i] == '"' {
			j := i + 1
			for j < len(format) && format[j] != '"' {
				if format[j] == '\\' && j+1 < len(format) {
					j++
				}
				b.WriteByte(format[j])
				j++
			}
			i = j + 1
			continue
		}
		if format[i] == '\\' && i+1 < len(format) && format[i+1] == '"' {
			b.WriteByte('"')
			i += 2
			continue
		}
		fill := false
		if strings.HasPrefix(format[i:], "FM") || strings.HasPrefix(format[i:], "fm") {
			fill, i = true, i+2
		}
		matched := longestPrefix(format[i:], toCharPatterns)
		if u := longestPrefix(format[i:], unsupportedToChar); len(u) > len(matched) {
			return "", evalErr(CodeFeatureNotSupported, "to_char pattern %q is not supported", u)
		}
		if matched == "" {
			b.WriteByte(format[i])
			i++
			continue
		}
		b.WriteString(toCharField(matched, lf, off, zoneName, fill))
		i += len(matched)
	}
	return b.String(), nil
}

// pad prints v zero-padded to width (no padding in fill mode).
func pad(v int64, width int, fill bool) string {
	s := strconv.FormatInt(max(v, -v), 10)
	if !fill && len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	if v < 0 {
		s = "-" + s
	}
	return s
}

// name prints a month or day name in the pattern's case, padded to 9
// characters unless in fill mode.
func name(full, pattern string, abbrev, fill bool) string {
	s := full
	if abbrev {
		s = s[:3]
	}
	switch {
	case pattern == strings.ToUpper(pattern):
		s = strings.ToUpper(s)
	case pattern == strings.ToLower(pattern):
		s = strings.ToLower(s)
	}
	if !abbrev && !fill && len(s) < 9 {
		s += strings.Repeat(" ", 9-len(s))
	}
	return s
}

func toCharField(p string, lf localFields, off int64, zoneName string, fill bool) string {
	year := lf.year
	if year <= 0 {
		year = 1 - year // BC years print positive, with BC
	}
	hour12 := lf.hour % 12
	if hour12 == 0 {
		hour12 = 12
	}
	dow := dayOfWeek(lf.days)
	isoYear, isoWk := isoWeek(lf.days)
	doy := lf.days - row.DaysFromCivil(lf.year, 1, 1) + 1
	switch p {
	case "YYYY":
		return pad(year, 4, fill)
	case "YYY":
		return pad(year%1000, 3, fill)
	case "YY":
		return pad(year%100, 2, fill)
	case "Y":
		return pad(year%10, 1, fill)
	case "IYYY":
		return pad(isoYear, 4, fill)
	case "IYY":
		return pad(isoYear%1000, 3, fill)
	case "IY":
		return pad(isoYear%100, 2, fill)
	case "I":
		return pad(isoYear%10, 1, fill)
	case "CC":
		return pad((year+99)/100, 2, fill)
	case "MM":
		return pad(lf.month, 2, fill)
	case "DD":
		return pad(lf.day, 2, fill)
	case "DDD":
		return pad(doy, 3, fill)
	case "D":
		return pad(dow+1, 1, fill)
	case "ID":
		if dow == 0 {
			return "7"
		}
		return pad(dow, 1, fill)
	case "IW":
		return pad(isoWk, 2, fill)
	case "WW":
		return pad((doy-1)/7+1, 2, fill)
	case "Q":
		return pad((lf.month-1)/3+1, 1, fill)
	case "J":
		return pad(lf.days+2440588, 1, fill)
	case "HH", "HH12":
		return pad(hour12, 2, fill)
	case "HH24":
		return pad(lf.hour, 2, fill)
	case "MI":
		return pad(lf.min, 2, fill)
	case "SS":
		return pad(lf.sec, 2, fill)
	case "MS":
		return pad(lf.us/1000, 3, fill)
	case "US":
		return pad(lf.us, 6, fill)
	case "AM", "PM", "am", "pm", "A.M.", "P.M.", "a.m.", "p.m.":
		s := "AM"
		if lf.hour >= 12 {
			s = "PM"
		}
		if strings.Contains(p, ".") {
			s = s[:1] + "." + s[1:] + "."
		}
		if p[0] >= 'a' {
			s = strings.ToLower(s)
		}
		return s
	case "BC", "AD", "bc", "ad":
		s := "AD"
		if lf.year <= 0 {
			s = "BC"
		}
		if p[0] >= 'a' {
			s = strings.ToLower(s)
		}
		return s
	case "MONTH", "Month", "month":
		return name(monthNames[lf.month-1], p, false, fill)
	case "MON", "Mon", "mon":
		return name(monthNames[lf.month-1], p, true, fill)
	case "DAY", "Day", "day":
		return name(dayNames[dow], p, false, fill)
	case "DY", "Dy", "dy":
		return name(dayNames[dow], p, true, fill)
	case "TZ", "tz":
		if p == "tz" {
			return strings.ToLower(zoneName)
		}
		return strings.ToUpper(zoneName)
	case "OF":
		return string(row.AppendOffset(nil, off))
	case "RM", "rm":
		r := romanMonths[lf.month-1]
		if !fill {
			r += strings.Repeat(" ", 4-len(r))
		}
		if p == "rm" {
			r = strings.ToLower(r)
		}
		return r
	}
	return p
}

func longestPrefix(s string, patterns []string) string {
	best := ""
	for _, p := range patterns {
		if len(p) > len(best) && strings.HasPrefix(s, p) {
			best = p
		}
	}
	return best
}
