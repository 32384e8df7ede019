package expr

import (
	"time"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// tzArraySources are the types a tz_array_cast reads into timestamptz[],
// and (the other way) the types it shows a timestamptz[] as: PostgreSQL's
// array coercions through the zone-aware element casts.
var tzArrayPeers = [...]row.Type{row.TypeText, row.TypeTextArray, row.TypeTimestampArray, row.TypeDateArray}

// TZArrayCastOK reports whether tz_array_cast converts from to to: one of
// them is timestamptz[] and the other text, text[], timestamp[] or date[].
func TZArrayCastOK(from, to row.Type) bool {
	other := from
	switch {
	case to == row.TypeTimestampTZArray && from != row.TypeTimestampTZArray:
	case from == row.TypeTimestampTZArray && to != row.TypeTimestampTZArray:
		other = to
	default:
		return false
	}
	for _, t := range tzArrayPeers {
		if other == t {
			return true
		}
	}
	return false
}

// typeTZArrayCast types tz_array_cast(x, zone, target): the result has
// the type of the third argument, a non-NULL value of the target type
// (TZArrayTarget) that only names it.
func typeTZArrayCast(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[1], row.TypeText) || !TZArrayCastOK(args[0].Type, args[2].Type) {
		return row.ColumnType{}, typeSig("tz_array_cast", args)
	}
	return row.ColumnType{Type: args[2].Type, Nullable: args[0].Nullable || args[1].Nullable}, nil
}

// evalTZArrayCast is tz_array_cast(x, zone, target): x converted to the
// type of target with the session's zone for the timestamptz side (a
// text without an offset is local time in zone; an instant is shown, or
// becomes a wall-clock timestamp or date, in zone). NULL elements stay
// NULL; infinities stay infinite.
func evalTZArrayCast(args []row.Datum) (row.Datum, error) {
	x, z, to := args[0], args[1], args[2].Type()
	if x.IsNull() || z.IsNull() || args[2].IsNull() {
		return row.Null(), nil
	}
	loc, err := zoneArg(z)
	if err != nil {
		return row.Null(), err
	}
	switch {
	case x.Type() == row.TypeText:
		return ParseArrayIn(x.Text(), row.TypeTimestampTZArray, loc)
	case to == row.TypeText:
		return row.Text(string(row.AppendTextIn(nil, x, loc))), nil
	}
	elems := x.ArrayElems()
	out := make([]row.Datum, len(elems))
	for i, e := range elems {
		if e.IsNull() {
			continue
		}
		if out[i], err = tzElemCast(e, to.ElemType(), loc, z); err != nil {
			return row.Null(), err
		}
	}
	return buildArray(to, out)
}

// tzElemCast converts one non-NULL element to or from timestamptz.
func tzElemCast(e row.Datum, to row.Type, loc *time.Location, z row.Datum) (row.Datum, error) {
	switch {
	case to == row.TypeText:
		return row.Text(string(row.AppendTimestampTZ(nil, e.TimestampTZ(), loc))), nil
	case e.Type() == row.TypeText:
		return ParseTemporal(e.Text(), row.TypeTimestampTZ, loc)
	case e.Type() == row.TypeDate:
		ts, err := CastDatum(e, row.TypeTimestamp)
		if err != nil {
			return row.Null(), err
		}
		return evalTimezone(z, ts)
	case to == row.TypeDate:
		ts, err := evalTimezone(z, e)
		if err != nil {
			return row.Null(), err
		}
		return CastDatum(ts, row.TypeDate)
	}
	return evalTimezone(z, e)
}

// TZArrayTarget is the third argument of tz_array_cast naming the target
// type t: the empty string for text, an empty array of t for an array type (a typed
// NULL would not carry its type into evaluation).
func TZArrayTarget(t row.Type) (Expr, error) {
	if t == row.TypeText {
		return Literal(row.Text("")), nil
	}
	d, err := buildArray(t, nil)
	if err != nil {
		return Expr{}, err
	}
	return Literal(d), nil
}
