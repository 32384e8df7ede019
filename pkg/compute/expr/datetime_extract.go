package expr

import (
	"math"
	"math/big"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// evalExtract is extract(field FROM x[, zone]): date_part's field as an
// exact numeric at PostgreSQL's (14 and later) scale for the field.
// Microseconds and the integral fields (year, day, hour, dow, ...) have
// scale 0, milliseconds 3, second 6, epoch 6 (a date's epoch 0), julian
// of a timestamp the scale of its numeric division by a day (0 for a
// date). Fields a type does not have are refused as date_part refuses
// them, and a date refuses time-of-day fields; an infinite timestamp or
// date gives ±Infinity for the fields that grow without bound and NULL
// for the others.
func evalExtract(args []row.Datum) (row.Datum, error) {
	field := strings.ToLower(strings.TrimSpace(args[0].Text()))
	x := args[1]
	loc, null, err := zonedArgs(args)
	if null || err != nil {
		return row.Null(), err
	}
	f := canonicalField(field)
	switch x.Type() {
	case row.TypeDate:
		return extractDate(field, f, x.Date())
	case row.TypeTime:
		if _, err := timePart(field, x.Time()); err != nil {
			return row.Null(), err
		}
		return extractTimeOfDay(f, x.Time()%row.MicrosPerMinute, x.Time())
	case row.TypeInterval:
		return extractInterval(field, f, x.Interval())
	}
	// timestamp and timestamptz: date_part validates the field and gives
	// the integral fields and the infinities.
	part, err := evalDatePart(args)
	if err != nil || part.IsNull() {
		return part, err
	}
	if v := part.Float64(); math.IsInf(v, 0) {
		return numericInfinity(v), nil
	}
	us, err := timestampInput(x, loc)
	if err != nil {
		return row.Null(), err
	}
	lf := splitTimestamp(us)
	switch f {
	case "microseconds", "milliseconds", "second":
		return extractTimeOfDay(f, lf.sec*row.MicrosPerSecond+lf.us, 0)
	case "epoch":
		if x.Type() == row.TypeTimestampTZ {
			us = x.TimestampTZ()
		}
		return scaledMicros(big.NewInt(us), 6), nil
	case "julian":
		_, rem := row.FloorDiv(us, row.MicrosPerDay)
		frac, err := numericDiv(apd.New(rem, 0), apd.New(row.MicrosPerDay, 0))
		if err != nil {
			return row.Null(), err
		}
		return addInteger(frac, lf.days+unixEpochJulian)
	}
	return row.NumericFromInt64(int64(part.Float64())), nil
}

// unixEpochJulian is the Julian day number of 1970-01-01.
const unixEpochJulian = 2440588

// extractTimeOfDay gives the fields of a time of day: inMinute is the
// micros within the minute (seconds and their fraction), us the micros
// since midnight (epoch of a time).
func extractTimeOfDay(f string, inMinute, us int64) (row.Datum, error) {
	switch f {
	case "microseconds":
		return row.NumericFromInt64(inMinute), nil
	case "milliseconds":
		return scaledMicros(big.NewInt(inMinute), 3), nil
	case "second":
		return scaledMicros(big.NewInt(inMinute), 6), nil
	case "epoch":
		return scaledMicros(big.NewInt(us), 6), nil
	case "minute":
		return row.NumericFromInt64(us / row.MicrosPerMinute % 60), nil
	case "hour":
		return row.NumericFromInt64(us / row.MicrosPerHour), nil
	}
	return row.Null(), evalErr(CodeInternal, "extract: field %q of a time of day", f)
}

// extractDate is extract(field FROM date): whole numbers, the epoch at
// midnight UTC in whole seconds and the Julian day; time-of-day fields
// are refused, as PostgreSQL refuses them for a date.
func extractDate(field, f string, days int32) (row.Datum, error) {
	switch f {
	case "microseconds", "milliseconds", "second", "minute", "hour", "timezone", "timezone_hour", "timezone_minute":
		return row.Null(), unitNotSupported(field, row.TypeDate)
	}
	us, err := dateToTimestamp(days)
	if err != nil {
		return row.Null(), err
	}
	part, err := timestampPart(field, us, row.TypeDate)
	if err != nil || part.IsNull() {
		return part, err
	}
	if v := part.Float64(); math.IsInf(v, 0) {
		return numericInfinity(v), nil
	}
	switch f {
	case "epoch":
		return row.NumericFromInt64(int64(days) * 86400), nil
	case "julian":
		return row.NumericFromInt64(int64(days) + unixEpochJulian), nil
	}
	return row.NumericFromInt64(int64(part.Float64())), nil
}

// extractInterval is extract(field FROM interval): the fields of
// date_part, seconds exact, and the epoch as PostgreSQL counts it (a
// year 365.25 days, a month 30 days).
func extractInterval(field, f string, iv row.Interval) (row.Datum, error) {
	part, err := intervalPart(field, iv)
	if err != nil || part.IsNull() {
		return part, err
	}
	switch f {
	case "microseconds", "milliseconds", "second":
		return extractTimeOfDay(f, iv.Micros%row.MicrosPerMinute, 0)
	case "epoch":
		months := int64(iv.Months)
		secs := new(big.Int).SetInt64(31557600 * (months / 12)) // 365.25 days
		secs.Add(secs, big.NewInt(30*86400*(months%12)+86400*int64(iv.Days)))
		micros := secs.Mul(secs, big.NewInt(row.MicrosPerSecond))
		return scaledMicros(micros.Add(micros, big.NewInt(iv.Micros)), 6), nil
	}
	return row.NumericFromInt64(int64(part.Float64())), nil
}

// scaledMicros is n / 10^scale at display scale scale (seconds from
// micros at 6, milliseconds from micros at 3), as PostgreSQL's
// int64_div_fast_to_numeric gives it.
func scaledMicros(n *big.Int, scale int) row.Datum {
	x := fromBig(n, int64(scale))
	d, err := row.NumericScaled(x, scale)
	if err != nil {
		return row.Null() // unreachable: an int64 of micros fits
	}
	return d
}

// addInteger returns frac + n at frac's display scale.
func addInteger(frac row.Datum, n int64) (row.Datum, error) {
	sum := new(apd.Decimal)
	if _, err := exact.Add(sum, frac.Decimal(), apd.New(n, 0)); err != nil {
		return row.Null(), evalErr(CodeNumericValueOutOfRange, "numeric: %v", err)
	}
	return row.NumericScaled(sum, frac.NumericScale())
}

func numericInfinity(v float64) row.Datum {
	d, _ := row.Numeric(&apd.Decimal{Form: apd.Infinite, Negative: v < 0})
	return d
}
