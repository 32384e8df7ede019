package slt

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// FormatValue renders one result value as the reference runner writes it
// for a column of type typ. v is the value in PostgreSQL's text format (what
// the simple query protocol returns); nil is SQL NULL.
//
// The reference runner reads I columns as integers and R columns as doubles
// whatever the database returned, so a real in an I column is truncated
// toward zero and an integer in an R column gets three decimals.
func FormatValue(typ byte, v []byte) string {
	if v == nil {
		return "NULL"
	}
	switch typ {
	case 'I':
		return strconv.FormatInt(asInt(string(v)), 10)
	case 'R':
		return fmt.Sprintf("%.3f", asFloat(string(v)))
	default:
		return asText(v)
	}
}

// asInt converts text to an integer as SQLite converts a value to one:
// integers as they are, reals truncated toward zero, booleans as 1 and 0,
// and otherwise the longest leading integer (0 when there is none).
func asInt(s string) int64 {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	switch s {
	case "t", "true":
		return 1
	case "f", "false":
		return 0
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) {
		switch {
		case f >= math.MaxInt64:
			return math.MaxInt64
		case f <= math.MinInt64:
			return math.MinInt64
		}
		return int64(f)
	}
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	digits := end
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == digits {
		return 0
	}
	n, err := strconv.ParseInt(s[:end], 10, 64)
	if err != nil {
		// Only overflow is left: saturate as SQLite does.
		if s[0] == '-' {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return n
}

// asFloat converts text to a double; text that is not a number is 0, as in
// SQLite.
func asFloat(s string) float64 {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	switch s {
	case "t", "true":
		return 1
	}
	return float64(asInt(s))
}

// asText writes the empty string as "(empty)", so that it cannot be
// confused with a missing line, and every byte outside printable ASCII as
// '@', so that a value is always exactly one line.
func asText(v []byte) string {
	if len(v) == 0 {
		return "(empty)"
	}
	b := make([]byte, len(v))
	for i, c := range v {
		if c < ' ' || c > '~' {
			c = '@'
		}
		b[i] = c
	}
	return string(b)
}

// FormatRows renders a result: the values of every row, left to right, row
// after row, each column by its letter in types. It fails when a row's
// width is not the number of types, a result the reference runner refuses.
func FormatRows(types string, rows [][][]byte) ([]string, error) {
	out := make([]string, 0, len(rows)*len(types))
	for i, row := range rows {
		if len(row) != len(types) {
			return nil, fmt.Errorf("row %d has %d columns, the query declares %d (%s)", i+1, len(row), len(types), types)
		}
		for j, v := range row {
			out = append(out, FormatValue(types[j], v))
		}
	}
	return out, nil
}

// SortValues puts formatted values (width per row) in the order mode asks
// for, in place. Comparison is byte-wise on the formatted text, as the
// reference runner's strcmp, so 10 sorts before 9.
func SortValues(values []string, width int, mode SortMode) {
	switch mode {
	case ValueSort:
		slices.Sort(values)
	case RowSort:
		if width <= 0 || len(values)%width != 0 {
			return
		}
		rows := make([][]string, 0, len(values)/width)
		for i := 0; i < len(values); i += width {
			rows = append(rows, values[i:i+width:i+width])
		}
		slices.SortStableFunc(rows, slices.Compare[[]string])
		sorted := make([]string, 0, len(values))
		for _, r := range rows {
			sorted = append(sorted, r...)
		}
		copy(values, sorted)
	}
}

// HashValues is the digest the corpus writes as "N values hashing to H":
// the MD5 of every value followed by a newline, in lower-case hex.
func HashValues(values []string) string {
	h := md5.New()
	for _, v := range values {
		h.Write([]byte(v))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Check compares a query's formatted, sorted values with the record's
// expectation and describes the first difference; it returns "" when they
// agree.
func Check(rec *Record, got []string) string {
	if rec.Hashed {
		if len(got) != rec.HashCount {
			return fmt.Sprintf("%d values, expected %d", len(got), rec.HashCount)
		}
		if h := HashValues(got); h != rec.Hash {
			return fmt.Sprintf("values hash to %s, expected %s", h, rec.Hash)
		}
		return ""
	}
	for i := 0; i < len(got) && i < len(rec.Expected); i++ {
		if got[i] != rec.Expected[i] {
			return fmt.Sprintf("value %d is %q, expected %q", i+1, got[i], rec.Expected[i])
		}
	}
	if len(got) != len(rec.Expected) {
		return fmt.Sprintf("%d values, expected %d", len(got), len(rec.Expected))
	}
	return ""
}
