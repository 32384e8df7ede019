package planner

import (
	"fmt"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// intervalFullRange is the typmod pg_query gives an interval without a
// field restriction (INTERVAL_FULL_RANGE).
const intervalFullRange = 0x7FFF

// temporalPrecision reads the precision of timestamp(p), time(p),
// timestamptz(p) and interval(p); -1 when there is none.
func temporalPrecision(tn *pg.TypeName, t row.Type) (row.Type, int, error) {
	mods := make([]int64, 0, len(tn.Typmods))
	for _, m := range tn.Typmods {
		c := m.GetAConst()
		if c == nil || c.GetIval() == nil {
			return row.TypeInvalid, -1, sqlerr.Errorf(sqlerr.SyntaxError, "type modifiers must be simple constants or identifiers")
		}
		mods = append(mods, int64(c.GetIval().Ival))
	}
	if t == row.TypeInterval && len(mods) > 0 {
		if mods[0] != intervalFullRange {
			return row.TypeInvalid, -1, sqlerr.Unsupported("interval with a field restriction such as DAY TO SECOND")
		}
		mods = mods[1:]
	}
	switch {
	case len(mods) == 0:
		return t, -1, nil
	case len(mods) > 1 || t == row.TypeDate:
		return row.TypeInvalid, -1, sqlerr.Errorf(sqlerr.SyntaxError, "invalid type modifier")
	case mods[0] < 0:
		return row.TypeInvalid, -1, sqlerr.Errorf(sqlerr.InvalidParameterValue, "%s(%d) precision must not be negative", t.PGName(), mods[0])
	}
	// Postgres reduces a precision above 6 to 6 with a warning.
	return t, int(min(mods[0], 6)), nil
}

// zone is the session's time zone as an expression argument.
func (c *exprCtx) zone() expr.Expr {
	z := c.p.Session.TimeZone
	if z == "" {
		z = "UTC"
	}
	return expr.Literal(row.Text(z))
}

// location is the session's time zone.
func (p *Planner) location() (*time.Location, error) {
	if p.Session.TimeZone == "" {
		return time.UTC, nil
	}
	return expr.LoadZone(p.Session.TimeZone)
}

// temporalCast lowers the casts whose result depends on the session's
// time zone (every cast to or from timestamptz but the identity); ok is
// false for other casts.
func (c *exprCtx) temporalCast(x typed, to row.Type) (typed, bool, error) {
	from := x.t.Type
	if from == to || (from != row.TypeTimestampTZ && to != row.TypeTimestampTZ) {
		return typed{}, false, nil
	}
	var e expr.Expr
	switch {
	case from == row.TypeText:
		e = expr.Call(expr.FuncTimestampTZIn, x.e, c.zone())
	case to == row.TypeText:
		e = expr.Call(expr.FuncTimestampTZOut, x.e, c.zone())
	case from == row.TypeTimestamp || to == row.TypeTimestamp:
		e = expr.Call(expr.FuncTimezone, c.zone(), x.e)
	case from == row.TypeDate:
		e = expr.Call(expr.FuncTimezone, c.zone(), expr.Cast(x.e, row.TypeTimestamp))
	case to == row.TypeDate || to == row.TypeTime:
		e = expr.Cast(expr.Call(expr.FuncTimezone, c.zone(), x.e), to)
	default:
		return typed{}, false, nil
	}
	y, err := c.check(e)
	return y, true, err
}

// castTo converts a typed value to type t, zone-aware for timestamptz.
func (c *exprCtx) castTo(x typed, t row.Type) (typed, error) {
	if x.t.Type == t {
		return x, nil
	}
	if y, ok, err := c.temporalCast(x, t); ok {
		return y, err
	}
	return c.check(expr.Cast(x.e, t))
}

// withPrecision applies the precision of timestamp(p) and friends.
func (c *exprCtx) withPrecision(x typed, err error, prec int) (typed, error) {
	if err != nil || prec < 0 {
		return x, err
	}
	return c.check(expr.Call(expr.FuncTimePrecision, x.e, expr.Literal(row.Int64(int64(prec)))))
}

// datetimeRank orders the types a date/time comparison promotes to:
// date < timestamp < timestamptz, as Postgres' implicit casts do.
func datetimeRank(t row.Type) int {
	switch t {
	case row.TypeDate:
		return 1
	case row.TypeTimestamp:
		return 2
	case row.TypeTimestampTZ:
		return 3
	}
	return 0
}

// promoteDatetimes casts the lower of two mixed date/timestamp/
// timestamptz operands to the other's type.
func (c *exprCtx) promoteDatetimes(x, y typed) (typed, typed, error) {
	rx, ry := datetimeRank(x.t.Type), datetimeRank(y.t.Type)
	var err error
	switch {
	case rx == 0 || ry == 0 || rx == ry:
	case rx < ry:
		x, err = c.castTo(x, y.t.Type)
	default:
		y, err = c.castTo(y, x.t.Type)
	}
	return x, y, err
}

// operandTypeFor is the type an untyped operand of op takes next to a
// typed date/time operand of type t (TypeInvalid: the other operand's
// type, the general rule). timestamp + '1 day' reads an interval, as
// Postgres resolves the only + operator taking a timestamp.
func operandTypeFor(op string, t row.Type) row.Type {
	switch {
	case op == "+" && (t == row.TypeTimestamp || t == row.TypeTimestampTZ || t == row.TypeTime || t == row.TypeDate):
		return row.TypeInterval
	case (op == "*" || op == "/") && t == row.TypeInterval:
		return row.TypeFloat64
	case op == "-" && t == row.TypeJSONB:
		return row.TypeText // jsonb - key
	}
	return row.TypeInvalid
}

// binaryOp lowers the operands of a binary operator: untyped operands
// settle to the other operand's type (or the date/time rule of
// operandTypeFor), and mixed dates and timestamps are promoted.
func (c *exprCtx) binaryOp(op string, l, r *pg.Node) (typed, typed, error) {
	a, b, err := c.lowerPair(l, r)
	if err != nil {
		return typed{}, typed{}, err
	}
	if a.untyped() != b.untyped() {
		typedSide, t := a, row.TypeInvalid
		if a.untyped() {
			typedSide = b
		}
		if t = operandTypeFor(op, typedSide.t.Type); t != row.TypeInvalid {
			if a.untyped() {
				a, err = c.settle(a, t)
			} else {
				b, err = c.settle(b, t)
			}
			if err != nil {
				return typed{}, typed{}, err
			}
			return a, b, nil
		}
	}
	if op == "*" || op == "/" {
		// interval * numeric: the numeric is cast to float8, as
		// Postgres' implicit cast does (there is no interval * numeric).
		if a.t.Type == row.TypeNumeric && b.t.Type == row.TypeInterval {
			a = typed{e: expr.Cast(a.e, row.TypeFloat64), t: row.ColumnType{Type: row.TypeFloat64, Nullable: a.t.Nullable}}
		}
		if b.t.Type == row.TypeNumeric && a.t.Type == row.TypeInterval {
			b = typed{e: expr.Cast(b.e, row.TypeFloat64), t: row.ColumnType{Type: row.TypeFloat64, Nullable: b.t.Nullable}}
		}
	}
	return c.unifyOperands(a, b)
}

// temporalArith lowers timestamptz ± interval to the zone-aware FuncTZPlus
// (a day is a calendar day in the session's zone); ok is false for other
// operands.
func (c *exprCtx) temporalArith(f expr.Func, x, y typed) (typed, bool, error) {
	if f != expr.FuncAdd && f != expr.FuncSub {
		return typed{}, false, nil
	}
	if f == expr.FuncAdd && x.t.Type == row.TypeInterval && y.t.Type == row.TypeTimestampTZ {
		x, y = y, x
	}
	if x.t.Type != row.TypeTimestampTZ || y.t.Type != row.TypeInterval {
		return typed{}, false, nil
	}
	iv := y.e
	if f == expr.FuncSub {
		iv = expr.Call(expr.FuncNeg, iv)
	}
	z, err := c.check(expr.Call(expr.FuncTZPlus, x.e, iv, c.zone()))
	return z, true, err
}

// now is the statement's timestamp, refused in maintained definitions
// outside temporal filters (temporal.go).
func (c *exprCtx) now(what string) (row.Datum, error) {
	if c.p.Maintained || c.p.Session.Now == 0 {
		return row.Null(), sqlerr.Errorf(sqlerr.FeatureNotSupported,
			"%s %s", what, temporalRule)
	}
	return row.TimestampTZ(c.p.Session.Now), nil
}

// currentTime lowers now(), current_timestamp, localtimestamp,
// current_date and localtime: constants of the statement.
func (c *exprCtx) currentTime(what string, t row.Type, prec int) (typed, error) {
	now, err := c.now(what)
	if err != nil {
		return typed{}, err
	}
	x := typed{e: expr.Literal(now), t: row.ColumnType{Type: row.TypeTimestampTZ}}
	if t != row.TypeTimestampTZ {
		if x, err = c.castTo(x, t); err != nil {
			return typed{}, err
		}
	}
	x, err = c.withPrecision(x, nil, prec)
	if err != nil {
		return typed{}, err
	}
	// Fold to a literal: the value is a constant of the statement.
	d, err := x.e.Eval(nil)
	if err != nil {
		return typed{}, err
	}
	return typed{e: expr.Literal(d), t: row.ColumnType{Type: t}}, nil
}

func (c *exprCtx) sqlTimeFunction(f *pg.SQLValueFunction) (typed, bool, error) {
	prec := -1
	if f.Typmod >= 0 {
		prec = int(min(f.Typmod, 6))
	}
	var x typed
	var err error
	switch f.Op {
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		x, err = c.currentTime("current_timestamp", row.TypeTimestampTZ, prec)
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		x, err = c.currentTime("localtimestamp", row.TypeTimestamp, prec)
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		x, err = c.currentTime("current_date", row.TypeDate, -1)
	case pg.SQLValueFunctionOp_SVFOP_LOCALTIME, pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N:
		x, err = c.currentTime("localtime", row.TypeTime, prec)
	case pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:
		return typed{}, true, sqlerr.Unsupported("current_time (type time with time zone; use localtime or current_timestamp)")
	default:
		return typed{}, false, nil
	}
	return x, true, err
}

// datetimeFunc lowers the date/time functions; ok is false for other
// names.
func (c *exprCtx) datetimeFunc(name string, args []*pg.Node) (typed, bool, error) {
	nargs := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi {
			return sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", name, len(args))
		}
		return nil
	}
	var y typed
	var err error
	switch name {
	case "now", "transaction_timestamp", "statement_timestamp":
		if err = nargs(0, 0); err == nil {
			y, err = c.currentTime(name+"()", row.TypeTimestampTZ, -1)
		}
	case "clock_timestamp", "timeofday":
		err = sqlerr.Unsupported(name + " (a value that changes during a statement; use now())")
	case "date_part":
		if err = nargs(2, 2); err == nil {
			y, err = c.zonedFieldFunc(expr.FuncDatePart, args)
		}
	case "extract":
		if err = nargs(2, 2); err == nil {
			y, err = c.zonedFieldFunc(expr.FuncExtract, args)
		}
	case "date_trunc":
		if err = nargs(2, 3); err == nil {
			y, err = c.zonedFieldFunc(expr.FuncDateTrunc, args)
		}
	case "to_char":
		if err = nargs(2, 2); err == nil {
			y, err = c.toChar(args)
		}
	case "age":
		if err = nargs(1, 2); err == nil {
			y, err = c.age(args)
		}
	case "make_date", "make_time", "make_timestamp":
		y, err = c.makeFunc(name, args)
	case "to_timestamp":
		if len(args) == 2 {
			err = sqlerr.Unsupported("to_timestamp(text, format)")
		} else if err = nargs(1, 1); err == nil {
			var x typed
			if x, err = c.lowerAs(args[0], row.TypeFloat64); err == nil {
				if x.t.Type == row.TypeNumeric {
					x.e = expr.Cast(x.e, row.TypeFloat64) // Postgres' implicit cast
				}
				y, err = c.check(expr.Call(expr.FuncToTimestamp, x.e))
			}
		}
	case "timezone":
		if err = nargs(2, 2); err == nil {
			y, err = c.atTimeZone(args[0], args[1])
		}
	default:
		return typed{}, false, nil
	}
	return y, true, err
}

// zonedFieldFunc lowers date_part(field, x), extract(field FROM x) and
// date_trunc(field, x[, zone]); a timestamptz gets the session's zone. A
// date is a timestamp for date_part (epoch counts whole UTC days) and a
// timestamptz (its midnight in the session's zone) for date_trunc, as in
// Postgres; extract takes the date itself (numeric fields at scale 0) and
// refuses time-of-day fields, as Postgres' extract(field from date) does.
func (c *exprCtx) zonedFieldFunc(f expr.Func, args []*pg.Node) (typed, error) {
	field, err := c.lowerAs(args[0], row.TypeText)
	if err != nil {
		return typed{}, err
	}
	x, err := c.lowerAs(args[1], row.TypeTimestampTZ)
	if err != nil {
		return typed{}, err
	}
	if x.t.Type == row.TypeDate && f == expr.FuncExtract {
		if field := args[0].GetAConst().GetSval().GetSval(); dateOnlyField(field) != "" {
			return typed{}, sqlerr.Errorf(sqlerr.FeatureNotSupported, "unit %q not supported for type date", dateOnlyField(field))
		}
	} else if x.t.Type == row.TypeDate {
		to := row.TypeTimestampTZ
		if f == expr.FuncDatePart {
			to = row.TypeTimestamp
		}
		if x, err = c.castTo(x, to); err != nil {
			return typed{}, err
		}
	}
	call := []expr.Expr{field.e, x.e}
	if x.t.Type == row.TypeTimestampTZ {
		zone := c.zone()
		if len(args) == 3 {
			z, err := c.lowerAs(args[2], row.TypeText)
			if err != nil {
				return typed{}, err
			}
			zone = z.e
		}
		call = append(call, zone)
	} else if len(args) == 3 {
		return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function date_trunc(text, %s, text) does not exist", x.t.Type.PGName())
	}
	return c.check(expr.Call(f, call...))
}

func (c *exprCtx) toChar(args []*pg.Node) (typed, error) {
	x, err := c.lowerAs(args[0], row.TypeTimestampTZ)
	if err != nil {
		return typed{}, err
	}
	if !x.t.Type.IsTemporal() && x.t.Type != row.TypeNull {
		return typed{}, sqlerr.Unsupported(fmt.Sprintf("to_char(%s, text)", x.t.Type.PGName()))
	}
	format, err := c.lowerAs(args[1], row.TypeText)
	if err != nil {
		return typed{}, err
	}
	call := []expr.Expr{x.e, format.e}
	if x.t.Type == row.TypeTimestampTZ {
		call = append(call, c.zone())
	}
	return c.check(expr.Call(expr.FuncToChar, call...))
}

// age lowers age(a, b) and age(x) = age(current_date, x).
func (c *exprCtx) age(args []*pg.Node) (typed, error) {
	var a, b typed
	var err error
	if len(args) == 1 {
		if b, err = c.lowerAs(args[0], row.TypeTimestampTZ); err != nil {
			return typed{}, err
		}
		if a, err = c.currentTime("age(x), which reads current_date,", row.TypeDate, -1); err != nil {
			return typed{}, err
		}
	} else {
		if a, b, err = c.binaryOp("-", args[0], args[1]); err != nil {
			return typed{}, err
		}
	}
	if a.t.Type == row.TypeDate || b.t.Type == row.TypeDate {
		to := max(datetimeRank(a.t.Type), datetimeRank(b.t.Type), 2)
		t := map[int]row.Type{2: row.TypeTimestamp, 3: row.TypeTimestampTZ}[to]
		if a, err = c.castTo(a, t); err != nil {
			return typed{}, err
		}
		if b, err = c.castTo(b, t); err != nil {
			return typed{}, err
		}
	}
	call := []expr.Expr{a.e, b.e}
	if a.t.Type == row.TypeTimestampTZ {
		call = append(call, c.zone())
	}
	return c.check(expr.Call(expr.FuncAge, call...))
}

func (c *exprCtx) makeFunc(name string, args []*pg.Node) (typed, error) {
	f, n := expr.FuncMakeDate, 3
	switch name {
	case "make_time":
		f = expr.FuncMakeTime
	case "make_timestamp":
		f, n = expr.FuncMakeTimestamp, 6
	}
	if len(args) != n {
		return typed{}, sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", name, len(args))
	}
	es := make([]expr.Expr, n)
	for i, a := range args {
		want := row.TypeInt64
		if f != expr.FuncMakeDate && i == n-1 {
			want = row.TypeFloat64
		}
		x, err := c.lowerAs(a, want)
		if err != nil {
			return typed{}, err
		}
		if want == row.TypeFloat64 && (x.t.Type == row.TypeInt64 || x.t.Type == row.TypeNumeric) {
			x.e = expr.Cast(x.e, row.TypeFloat64)
		}
		es[i] = x.e
	}
	return c.check(expr.Call(f, es...))
}

// atTimeZone lowers x AT TIME ZONE zone (timezone(zone, x)).
func (c *exprCtx) atTimeZone(zoneNode, xNode *pg.Node) (typed, error) {
	z, err := c.lowerAs(zoneNode, row.TypeText)
	if err != nil {
		return typed{}, err
	}
	if z.t.Type != row.TypeText && z.t.Type != row.TypeNull {
		return typed{}, sqlerr.Unsupported("AT TIME ZONE with a zone of type " + z.t.Type.PGName())
	}
	x, err := c.lowerAs(xNode, row.TypeTimestampTZ)
	if err != nil {
		return typed{}, err
	}
	if x.t.Type == row.TypeDate {
		if x, err = c.castTo(x, row.TypeTimestampTZ); err != nil {
			return typed{}, err
		}
	}
	return c.check(expr.Call(expr.FuncTimezone, z.e, x.e))
}

// dateOnlyField returns the field, lower-cased, when it is a time-of-day
// or zone field that extract refuses for a date; "" otherwise.
func dateOnlyField(field string) string {
	f := strings.ToLower(field)
	switch f {
	case "hour", "hours", "h", "hr", "hrs", "minute", "minutes", "min", "mins", "m", "second", "seconds", "sec", "secs", "s",
		"millisecond", "milliseconds", "ms", "msec", "msecs", "microsecond", "microseconds", "us", "usec", "usecs",
		"timezone", "timezone_hour", "timezone_minute":
		return f
	}
	return ""
}
