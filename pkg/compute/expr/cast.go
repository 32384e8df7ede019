package expr

import (
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// CanCast reports whether CAST(x AS to) is defined for x of type from.
// Every type casts to itself and to text; text casts to every type; bool
// and int64 cast to each other; int64 and float64 cast to each other;
// int64, float64 and numeric cast to each other; an untyped NULL casts to
// anything.
func CanCast(from, to row.Type) bool {
	if !to.Valid() || to == row.TypeNull {
		return false
	}
	if (to == row.TypeRecord || to == row.TypeRecordArray) && from != to && from != row.TypeNull {
		return false // PostgreSQL has no input function for anonymous records
	}
	if from == to || from == row.TypeNull || from == row.TypeText || to == row.TypeText {
		return from.Valid()
	}
	switch from {
	case row.TypeBool:
		return to == row.TypeInt64
	case row.TypeInt64:
		return to == row.TypeBool || to == row.TypeFloat64 || to == row.TypeNumeric
	case row.TypeFloat64:
		return to == row.TypeInt64 || to == row.TypeNumeric
	case row.TypeNumeric:
		return to == row.TypeInt64 || to == row.TypeFloat64
	case row.TypeJSONB:
		return to == row.TypeBool || to == row.TypeInt64 || to == row.TypeFloat64 || to == row.TypeNumeric || to == row.TypeJSON
	case row.TypeJSON:
		return to == row.TypeJSONB
	}
	if from.IsArray() {
		return canCastArray(from, to)
	}
	return canCastTemporal(from, to)
}

// CastDatum converts d to type to, with Postgres' rules and messages
// (casts involving timestamptz take the time zone as UTC: the SQL layer
// lowers them to the zone-aware functions FuncTimezone, FuncTimestampTZIn
// and FuncTimestampTZOut with the session's zone):
// float64 to int64 rounds half to even and fails outside the int64
// range; text parses with 22P02 (or 22007 for timestamps) on bad input.
// Text to bytes accepts the hex format ("\x0aff") and the escape format
// (backslash-backslash and backslash-octal).
func CastDatum(d row.Datum, to row.Type) (row.Datum, error) {
	from := d.Type()
	if d.IsNull() {
		return d, nil
	}
	if from == to {
		return d, nil
	}
	if !CanCast(from, to) {
		return row.Null(), evalErr(CodeUndefinedFunction, "cannot cast type %s to %s", from.PGName(), to.PGName())
	}
	if to == row.TypeText {
		return row.Text(d.String()), nil
	}
	switch from {
	case row.TypeBool:
		if d.Bool() {
			return row.Int64(1), nil
		}
		return row.Int64(0), nil
	case row.TypeInt64:
		switch to {
		case row.TypeBool:
			return row.Bool(d.Int64() != 0), nil
		case row.TypeNumeric:
			return row.NumericFromInt64(d.Int64()), nil
		}
		return row.Float64(float64(d.Int64())), nil
	case row.TypeNumeric:
		if to == row.TypeFloat64 {
			f, err := numericToFloat(d.Decimal())
			if err != nil {
				return row.Null(), err
			}
			return row.Float64(f), nil
		}
		i, err := numericToInt(d.Decimal(), "bigint")
		if err != nil {
			return row.Null(), err
		}
		return row.Int64(i), nil
	case row.TypeFloat64:
		if to == row.TypeNumeric {
			return floatToNumeric(d.Float64())
		}
		f := math.RoundToEven(d.Float64())
		// float64(MaxInt64) rounds up to 2^63, which is out of range.
		if math.IsNaN(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			return row.Null(), errBigintRange
		}
		return row.Int64(int64(f)), nil
	case row.TypeText:
		return parseText(d.Text(), to)
	case row.TypeJSONB:
		if to == row.TypeJSON {
			return row.JSONText(d.String()), nil
		}
		return castFromJSONB(d, to)
	case row.TypeJSON:
		return jsonTextToJSONB(d)
	}
	if from.IsArray() {
		return castArray(d, to)
	}
	if from.IsTemporal() {
		return castTemporal(d, to)
	}
	return row.Null(), evalErr(CodeInternal, "cast %s to %s not implemented", from, to)
}

func invalidInput(to row.Type, s string) *EvalError {
	return evalErr(CodeInvalidTextRepr, "invalid input syntax for type %s: %q", to.PGName(), s)
}

func parseText(s string, to row.Type) (row.Datum, error) {
	switch to {
	case row.TypeBool:
		b, ok := parseBool(s)
		if !ok {
			return row.Null(), invalidInput(to, s)
		}
		return row.Bool(b), nil
	case row.TypeInt64:
		i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			return row.Null(), evalErr(CodeNumericValueOutOfRange, "value %q is out of range for type bigint", s)
		}
		if err != nil {
			return row.Null(), invalidInput(to, s)
		}
		return row.Int64(i), nil
	case row.TypeFloat64:
		t := strings.ToLower(strings.TrimSpace(s))
		switch t {
		case "nan":
			return row.Float64(math.NaN()), nil
		case "infinity", "+infinity", "inf", "+inf":
			return row.Float64(math.Inf(1)), nil
		case "-infinity", "-inf":
			return row.Float64(math.Inf(-1)), nil
		}
		// Go also accepts hex floats and digit separators; SQL does not.
		if strings.ContainsAny(t, "xp_in") {
			return row.Null(), invalidInput(to, s)
		}
		f, err := strconv.ParseFloat(t, 64)
		if errors.Is(err, strconv.ErrRange) {
			return row.Null(), evalErr(CodeNumericValueOutOfRange, "%q is out of range for type double precision", s)
		}
		if err != nil {
			return row.Null(), invalidInput(to, s)
		}
		return row.Float64(f), nil
	case row.TypeTimestamp, row.TypeDate, row.TypeTime, row.TypeTimestampTZ, row.TypeInterval:
		return ParseTemporal(s, to, nil)
	case row.TypeBytes:
		b, ok := parseBytea(s)
		if !ok {
			return row.Null(), invalidInput(to, s)
		}
		return row.Bytes(b), nil
	case row.TypeNumeric:
		return parseNumeric(s)
	case row.TypeJSONB:
		return parseJSONB(s)
	case row.TypeJSON:
		return ParseJSONText(s)
	case row.TypeUUID:
		u, err := row.ParseUUID(s)
		if err != nil {
			return row.Null(), invalidInput(to, s)
		}
		return row.UUID(u), nil
	}
	if to.IsArray() {
		return parseArray(s, to)
	}
	return row.Null(), evalErr(CodeInternal, "cast text to %s not implemented", to)
}

// parseBool accepts what Postgres' boolin does: any unambiguous prefix
// of true/false/yes/no, on/off, and 1/0, case-insensitively, with
// surrounding whitespace.
func parseBool(s string) (bool, bool) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return false, false
	}
	prefixOf := func(word string, minLen int) bool {
		return len(t) >= minLen && strings.HasPrefix(word, t)
	}
	switch {
	case prefixOf("true", 1), prefixOf("yes", 1), t == "on", t == "1":
		return true, true
	case prefixOf("false", 1), prefixOf("no", 1), prefixOf("off", 2), t == "0":
		return false, true
	}
	return false, false
}

func parseBytea(s string) ([]byte, bool) {
	if strings.HasPrefix(s, `\x`) {
		b, err := hex.DecodeString(s[2:])
		return b, err == nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			out = append(out, s[i])
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '\\':
			out = append(out, '\\')
			i++
		case i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) && s[i+1] <= '3':
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 3
		default:
			return nil, false
		}
	}
	return out, true
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
