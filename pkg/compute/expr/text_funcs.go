package expr

import (
	"crypto/md5"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// CodeProgramLimitExceeded is program_limit_exceeded: a result too large
// (a string, or a table function call over MaxTableFuncRows rows), or a
// character chr cannot make.
const CodeProgramLimitExceeded = "54000"

// maxTextBytes bounds the strings repeat, lpad and rpad build, as
// PostgreSQL's 1 GB limit on a value does.
const maxTextBytes = 1<<30 - 1

var errLengthTooLarge = &EvalError{Code: CodeProgramLimitExceeded, Msg: "requested length too large"}

// typeArgs returns a type function for arguments of the types want (in
// order; fewer arguments are allowed) and a result of type result.
func typeArgs(name string, result row.Type, want ...row.Type) func(args []row.ColumnType) (row.ColumnType, error) {
	return func(args []row.ColumnType) (row.ColumnType, error) {
		for i, a := range args {
			if i >= len(want) || !is(a, want[i]) {
				return row.ColumnType{}, typeSig(name, args)
			}
		}
		return row.ColumnType{Type: result}, nil
	}
}

var (
	typeTextIntText = typeArgs("text function", row.TypeText, row.TypeText, row.TypeInt64, row.TypeText)
	typeTextInt     = typeArgs("text function", row.TypeText, row.TypeText, row.TypeInt64)
)

func typeMD5(args []row.ColumnType) (row.ColumnType, error) {
	if !is(args[0], row.TypeText, row.TypeBytes) {
		return row.ColumnType{}, typeSig("md5", args)
	}
	return row.ColumnType{Type: row.TypeText}, nil
}

// evalSplitPart is split_part(s, delim, n): the n-th field (from the end
// when n < 0), ” past the last; an empty delimiter makes s one field.
func evalSplitPart(s, delim, n row.Datum) (row.Datum, error) {
	i := n.Int64()
	if i == 0 {
		return row.Null(), evalErr(CodeInvalidParameterValue, "field position must not be zero")
	}
	str, d := s.Text(), delim.Text()
	var parts []string
	switch {
	case str == "":
		return row.Text(""), nil
	case d == "":
		parts = []string{str}
	default:
		parts = strings.Split(str, d)
	}
	if i < 0 {
		i += int64(len(parts)) + 1
	}
	if i < 1 || i > int64(len(parts)) {
		return row.Text(""), nil
	}
	return row.Text(parts[i-1]), nil
}

// evalConcatWS is concat_ws(sep, args...): NULL when sep is NULL, NULL
// arguments skipped.
func evalConcatWS(args []row.Datum) (row.Datum, error) {
	if args[0].IsNull() {
		return row.Null(), nil
	}
	sep := textOf(args[0])
	var sb strings.Builder
	first := true
	for _, a := range args[1:] {
		if a.IsNull() {
			continue
		}
		if !first {
			sb.WriteString(sep)
		}
		sb.WriteString(textOf(a))
		first = false
	}
	return row.Text(sb.String()), nil
}

// padFunc is lpad (left) or rpad: s padded with fill (default a space)
// to n characters, or cut to n characters when longer.
func padFunc(left bool) func(args []row.Datum) (row.Datum, error) {
	return func(args []row.Datum) (row.Datum, error) {
		s, n := args[0].Text(), args[1].Int64()
		fill := " "
		if len(args) == 3 {
			fill = args[2].Text()
		}
		if n <= 0 {
			return row.Text(""), nil
		}
		rs := []rune(s)
		if int64(len(rs)) >= n {
			return row.Text(string(rs[:n])), nil
		}
		if fill == "" {
			return row.Text(s), nil
		}
		if n*int64(utf8.UTFMax) > maxTextBytes {
			return row.Null(), errLengthTooLarge
		}
		fr := []rune(fill)
		pad := make([]rune, 0, n-int64(len(rs)))
		for i := 0; int64(len(pad)) < n-int64(len(rs)); i++ {
			pad = append(pad, fr[i%len(fr)])
		}
		if left {
			return row.Text(string(pad) + s), nil
		}
		return row.Text(s + string(pad)), nil
	}
}

// leftRight is left(s, n) or right(s, n): the first (last) n characters,
// or all but the last (first) -n when n is negative.
func leftRight(left bool) func(s, n row.Datum) (row.Datum, error) {
	return func(s, n row.Datum) (row.Datum, error) {
		rs := []rune(s.Text())
		k := n.Int64()
		l := int64(len(rs))
		if k < 0 {
			k = max(l+k, 0)
		}
		k = min(k, l)
		if left {
			return row.Text(string(rs[:k])), nil
		}
		return row.Text(string(rs[l-k:])), nil
	}
}

// evalInitcap upper-cases the first letter of every word and lower-cases
// the rest; words are runs of letters and digits.
func evalInitcap(s row.Datum) (row.Datum, error) {
	var sb strings.Builder
	inWord := false
	for _, r := range s.Text() {
		if inWord {
			sb.WriteRune(unicode.ToLower(r))
		} else {
			sb.WriteRune(unicode.ToUpper(r))
		}
		inWord = unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	return row.Text(sb.String()), nil
}

func evalMD5(s row.Datum) (row.Datum, error) {
	var b []byte
	if s.Type() == row.TypeBytes {
		b = []byte(s.BytesString())
	} else {
		b = []byte(s.Text())
	}
	sum := md5.Sum(b)
	return row.Text(hex.EncodeToString(sum[:])), nil
}

func evalRepeat(s, n row.Datum) (row.Datum, error) {
	k := n.Int64()
	if k <= 0 || s.Text() == "" {
		return row.Text(""), nil
	}
	if k > maxTextBytes/int64(len(s.Text())) {
		return row.Null(), errLengthTooLarge
	}
	return row.Text(strings.Repeat(s.Text(), int(k))), nil
}

func evalReverse(s row.Datum) (row.Datum, error) {
	rs := []rune(s.Text())
	for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
		rs[i], rs[j] = rs[j], rs[i]
	}
	return row.Text(string(rs)), nil
}

// evalTranslate replaces every character of s found in from by the
// character at the same position in to, deleting it when to is shorter;
// the first occurrence in from wins.
func evalTranslate(s, from, to row.Datum) (row.Datum, error) {
	fr, tr := []rune(from.Text()), []rune(to.Text())
	m := make(map[rune]int, len(fr))
	for i, r := range fr {
		if _, ok := m[r]; !ok {
			m[r] = i
		}
	}
	var sb strings.Builder
	for _, r := range s.Text() {
		i, ok := m[r]
		switch {
		case !ok:
			sb.WriteRune(r)
		case i < len(tr):
			sb.WriteRune(tr[i])
		}
	}
	return row.Text(sb.String()), nil
}

func evalASCII(s row.Datum) (row.Datum, error) {
	r, n := utf8.DecodeRuneInString(s.Text())
	if n == 0 {
		return row.Int64(0), nil
	}
	return row.Int64(int64(r)), nil
}

func evalChr(n row.Datum) (row.Datum, error) {
	c := n.Int64()
	switch {
	case c < 0:
		return row.Null(), evalErr(CodeInvalidParameterValue, "character number must be positive")
	case c == 0:
		return row.Null(), evalErr(CodeProgramLimitExceeded, "null character not permitted")
	case c > unicode.MaxRune:
		return row.Null(), evalErr(CodeProgramLimitExceeded, "requested character too large for encoding: %d", c)
	case c >= 0xD800 && c <= 0xDFFF:
		return row.Null(), evalErr(CodeProgramLimitExceeded, "requested character not valid for encoding: %d", c)
	}
	return row.Text(string(rune(c))), nil
}

func evalStartsWith(s, prefix row.Datum) (row.Datum, error) {
	return row.Bool(strings.HasPrefix(s.Text(), prefix.Text())), nil
}

func evalNumericText(x, scale row.Datum) (row.Datum, error) {
	return row.Text(string(row.AppendNumeric(nil, x, int(min(max(scale.Int64(), 0), 1000))))), nil
}
