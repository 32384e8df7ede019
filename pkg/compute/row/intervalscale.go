package row

import "math"

// ScaleInterval multiplies iv by f (or divides it by f when divide is
// set), cascading fractional months to days and fractional days to time
// as PostgreSQL 15's interval_mul and interval_div do. ok is false when a
// field leaves its range (or f is NaN); dividing by zero is the caller's
// to refuse.
func ScaleInterval(iv Interval, f float64, divide bool) (Interval, bool) {
	scale := func(x float64) float64 {
		if divide {
			return x / f
		}
		return x * f
	}
	fits32 := func(x float64) bool { return !math.IsNaN(x) && x >= math.MinInt32 && x < math.MaxInt32+1 }
	mon := scale(float64(iv.Months))
	day := scale(float64(iv.Days))
	if !fits32(mon) || !fits32(day) {
		return Interval{}, false
	}
	out := Interval{Months: int32(mon), Days: int32(day)}
	tsRound := func(x float64) float64 { return math.RoundToEven(x*1e6) / 1e6 }
	monRemDays := tsRound((mon - float64(out.Months)) * daysPerMonth)
	secRem := tsRound((day - float64(out.Days) + monRemDays - math.Trunc(monRemDays)) * 86400)
	if math.Abs(secRem) >= 86400 {
		whole := math.Trunc(secRem / 86400)
		out.Days += int32(whole)
		secRem -= whole * 86400
	}
	out.Days += int32(monRemDays)
	us := math.RoundToEven(scale(float64(iv.Micros)) + secRem*1e6)
	if math.IsNaN(us) || us >= math.MaxInt64 || us < math.MinInt64 {
		return Interval{}, false
	}
	out.Micros = int64(us)
	return out, true
}
