package expr

import (
	"strings"
	"unicode/utf8"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// evalFormat is PostgreSQL's format(fmt, args...): %s (the value as text,
// NULL as nothing), %I (quoted as an identifier when needed; NULL is an
// error), %L (quoted as a literal; NULL as NULL) and %%, each with an
// optional argument position n$ and width (digits, * or *n$; a '-' flag
// or negative width pads on the right). NULL when fmt is NULL.
func evalFormat(args []row.Datum) (row.Datum, error) {
	if args[0].IsNull() {
		return row.Null(), nil
	}
	f := textOf(args[0])
	vals := args[1:]
	var sb strings.Builder
	next := 0 // index into vals of the next implicit argument
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' {
			sb.WriteByte(c)
			continue
		}
		i++
		if i >= len(f) {
			return row.Null(), errFormatUnterminated
		}
		if f[i] == '%' {
			sb.WriteByte('%')
			continue
		}
		spec, n, err := parseFormatSpec(f[i:], vals, &next)
		if err != nil {
			return row.Null(), err
		}
		i += n
		if err := spec.write(&sb, vals); err != nil {
			return row.Null(), err
		}
	}
	return row.Text(sb.String()), nil
}

var (
	errFormatUnterminated = &EvalError{Code: CodeInvalidParameterValue, Msg: "unterminated format() type specifier"}
	errFormatTooFew       = &EvalError{Code: CodeInvalidParameterValue, Msg: "too few arguments for format()"}
)

// formatSpec is one conversion: argument arg (an index into the values),
// padded to width characters (on the left unless leftAlign).
type formatSpec struct {
	arg       int
	width     int
	leftAlign bool
	verb      byte
}

// parseFormatSpec parses a conversion after its '%': [n$][-][width|*[n$]]verb.
// It returns the spec and the bytes it read up to and including verb.
func parseFormatSpec(s string, vals []row.Datum, next *int) (formatSpec, int, error) {
	var sp formatSpec
	i := 0
	num := func() (int, bool, error) {
		j := i
		v := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			v = v*10 + int(s[j]-'0')
			if v > 1<<24 {
				return 0, false, evalErr(CodeInvalidParameterValue, "number is out of range")
			}
			j++
		}
		if j == i {
			return 0, false, nil
		}
		i = j
		return v, true, nil
	}
	// An argument position n$ (a number followed by '$').
	start := i
	pos, ok, err := num()
	if err != nil {
		return sp, 0, err
	}
	sp.arg = -1
	if ok {
		if i < len(s) && s[i] == '$' {
			if pos == 0 {
				return sp, 0, evalErr(CodeInvalidParameterValue, "format specifies argument 0, but arguments are numbered from 1")
			}
			sp.arg = pos - 1
			i++
		} else {
			i = start // it was a width
		}
	}
	for i < len(s) && s[i] == '-' {
		sp.leftAlign = true
		i++
	}
	if i < len(s) && s[i] == '*' {
		i++
		wArg := -1
		save := i
		if p, ok, err := num(); err != nil {
			return sp, 0, err
		} else if ok && i < len(s) && s[i] == '$' {
			if p == 0 {
				return sp, 0, evalErr(CodeInvalidParameterValue, "format specifies argument 0, but arguments are numbered from 1")
			}
			wArg = p - 1
			i++
		} else {
			i = save
		}
		if wArg < 0 {
			wArg = *next
		}
		if wArg >= len(vals) {
			return sp, 0, errFormatTooFew
		}
		*next = wArg + 1
		if w := vals[wArg]; !w.IsNull() {
			if w.Type() != row.TypeInt64 {
				return sp, 0, evalErr(CodeUndefinedFunction, "format() width argument must be of type integer")
			}
			v := w.Int64()
			if v < 0 {
				sp.leftAlign, v = true, -v
			}
			if v > 1<<24 {
				return sp, 0, evalErr(CodeInvalidParameterValue, "number is out of range")
			}
			sp.width = int(v)
		}
	} else if w, ok, err := num(); err != nil {
		return sp, 0, err
	} else if ok {
		sp.width = w
	}
	if i >= len(s) {
		return sp, 0, errFormatUnterminated
	}
	sp.verb = s[i]
	switch sp.verb {
	case 's', 'I', 'L':
	default:
		r, _ := utf8.DecodeRuneInString(s[i:])
		return sp, 0, evalErr(CodeInvalidParameterValue, "unrecognized format() type specifier \"%c\"", r)
	}
	if sp.arg < 0 {
		sp.arg = *next
	}
	if sp.arg >= len(vals) {
		return sp, 0, errFormatTooFew
	}
	*next = sp.arg + 1
	return sp, i, nil
}

func (sp formatSpec) write(sb *strings.Builder, vals []row.Datum) error {
	v := vals[sp.arg]
	var s string
	switch sp.verb {
	case 's':
		if !v.IsNull() {
			s = textOf(v)
		}
	case 'I':
		if v.IsNull() {
			return evalErr("22004", "null values cannot be formatted as an SQL identifier")
		}
		s = QuoteIdent(textOf(v))
	case 'L':
		if v.IsNull() {
			s = "NULL"
		} else {
			s = QuoteLiteral(textOf(v))
		}
	}
	pad := sp.width - utf8.RuneCountInString(s)
	if pad > 0 && !sp.leftAlign {
		sb.WriteString(strings.Repeat(" ", pad))
	}
	sb.WriteString(s)
	if pad > 0 && sp.leftAlign {
		sb.WriteString(strings.Repeat(" ", pad))
	}
	return nil
}

// QuoteLiteral quotes s as a SQL string literal, as PostgreSQL's
// quote_literal: quotes doubled, and backslashes doubled in an E” string.
func QuoteLiteral(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		q = "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}

// QuoteIdent quotes s as an identifier when PostgreSQL's quote_ident
// would: unless it is lower-case letters, digits, underscores (not first
// a digit) and not a keyword other than an unreserved one.
func QuoteIdent(s string) string {
	safe := s != "" && !(s[0] >= '0' && s[0] <= '9')
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			safe = false
			break
		}
	}
	if safe && !quotedKeywords[s] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// quotedKeywords are PostgreSQL 15's reserved, type/function-name and
// column-name keywords, which quote_ident quotes.
var quotedKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric both case cast check
		collate column constraint create current_catalog current_date current_role current_time
		current_timestamp current_user default deferrable desc distinct do else end except false fetch
		for foreign from grant group having in initially intersect into lateral leading limit localtime
		localtimestamp not null offset on only or order placing primary references returning select
		session_user some symmetric table then to trailing true union unique user using variadic when
		where window with
		authorization binary collation concurrently cross current_schema freeze full ilike inner is
		isnull join left like natural notnull outer overlaps right similar tablesample verbose
		between bigint bit boolean char character coalesce dec decimal exists extract float greatest
		grouping inout int integer interval least national nchar none normalize nullif numeric out
		overlay position precision real row setof smallint substring time timestamp treat trim values
		varchar xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi
		xmlroot xmlserialize xmltable`) {
		m[w] = true
	}
	return m
}()
