package expr

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

func evalReplace(s, from, to row.Datum) (row.Datum, error) {
	if s.Type() != row.TypeText || from.Type() != row.TypeText || to.Type() != row.TypeText {
		return row.Null(), undefinedFunc("replace", s, from, to)
	}
	if from.Text() == "" {
		return s, nil // Postgres leaves the string unchanged
	}
	return row.Text(strings.ReplaceAll(s.Text(), from.Text(), to.Text())), nil
}

// evalPosition is position(sub IN s): the 1-based character index of the
// first occurrence of sub in s, 0 if none, 1 for an empty sub.
func evalPosition(sub, s row.Datum) (row.Datum, error) {
	if sub.Type() != row.TypeText || s.Type() != row.TypeText {
		return row.Null(), undefinedFunc("position", sub, s)
	}
	i := strings.Index(s.Text(), sub.Text())
	if i < 0 {
		return row.Int64(0), nil
	}
	return row.Int64(int64(utf8.RuneCountInString(s.Text()[:i])) + 1), nil
}

func evalSubstr2(s, start row.Datum) (row.Datum, error) {
	if s.Type() != row.TypeText || start.Type() != row.TypeInt64 {
		return row.Null(), undefinedFunc("substr", s, start)
	}
	return row.Text(substr(s.Text(), start.Int64(), math.MaxInt64)), nil
}

func evalSubstr3(s, start, count row.Datum) (row.Datum, error) {
	if s.Type() != row.TypeText || start.Type() != row.TypeInt64 || count.Type() != row.TypeInt64 {
		return row.Null(), undefinedFunc("substr", s, start, count)
	}
	n := count.Int64()
	if n < 0 {
		return row.Null(), evalErr(CodeSubstringError, "negative substring length not allowed")
	}
	end := start.Int64() + n
	if start.Int64() > 0 && end < 0 { // saturate on overflow
		end = math.MaxInt64
	}
	return row.Text(substr(s.Text(), start.Int64(), end)), nil
}

// substr returns the characters at 1-based positions [start, end) of s;
// positions outside the string are simply absent (Postgres semantics:
// substr('hello', 0, 3) = 'he').
func substr(s string, start, end int64) string {
	start = max(start, 1)
	if end <= start {
		return ""
	}
	pos := int64(1)
	lo, hi := len(s), len(s)
	for i := range s {
		if pos == start {
			lo = i
		}
		if pos == end {
			hi = i
			break
		}
		pos++
	}
	if lo > hi {
		return ""
	}
	return s[lo:hi]
}

func likeFunc(fold bool) func(s, pattern row.Datum) (row.Datum, error) {
	name := "like"
	if fold {
		name = "ilike"
	}
	return func(s, pattern row.Datum) (row.Datum, error) {
		if s.Type() != row.TypeText || pattern.Type() != row.TypeText {
			return row.Null(), undefinedFunc(name, s, pattern)
		}
		ok, err := likeMatch(s.Text(), pattern.Text(), fold)
		if err != nil {
			return row.Null(), err
		}
		return row.Bool(ok), nil
	}
}

// maxRegexLen bounds the patterns evalRegexMatch compiles: RE2 compiles
// in time and memory linear in the pattern, and matches in linear time,
// so a bound on the pattern bounds the work per row.
const maxRegexLen = 4096

// likeMatch matches s against a LIKE pattern: % matches any run of
// characters, _ one character, and a backslash makes the next pattern
// character literal. It is the classic wildcard matcher that backtracks
// only to the last %, so it runs in O(len(s) * len(pattern)) without
// recursion.
func likeMatch(s, p string, fold bool) (bool, error) {
	if strings.HasSuffix(p, `\`) {
		// Count the trailing backslashes: an odd run ends in a lone escape.
		n := len(p) - len(strings.TrimRight(p, `\`))
		if n%2 == 1 {
			return false, evalErr(CodeInvalidEscapeSequence, "LIKE pattern must not end with escape character")
		}
	}
	si, pi := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(p) {
			pc, pn := utf8.DecodeRuneInString(p[pi:])
			switch pc {
			case '%':
				pi += pn
				starP, starS = pi, si
				continue
			case '_':
				_, sn := utf8.DecodeRuneInString(s[si:])
				si += sn
				pi += pn
				continue
			case '\\':
				lc, ln := utf8.DecodeRuneInString(p[pi+pn:])
				pc, pn = lc, pn+ln
			}
			sc, sn := utf8.DecodeRuneInString(s[si:])
			if sc == pc || (fold && unicode.ToLower(sc) == unicode.ToLower(pc)) {
				si += sn
				pi += pn
				continue
			}
		}
		if starP < 0 {
			return false, nil
		}
		// Let the last % absorb one more character and retry.
		_, sn := utf8.DecodeRuneInString(s[starS:])
		starS += sn
		si, pi = starS, starP
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	return pi == len(p), nil
}

// extremeFunc returns greatest (sign 1) or least (sign -1): NULL
// arguments are ignored, and the result is NULL only if all are NULL.
func extremeFunc(sign int) func(args []row.Datum) (row.Datum, error) {
	return func(args []row.Datum) (row.Datum, error) {
		best := row.Null()
		for _, a := range args {
			if a.IsNull() {
				continue
			}
			if best.IsNull() {
				best = a
				continue
			}
			c, err := compareDatums(a, best)
			if err != nil {
				return row.Null(), err
			}
			if c*sign > 0 {
				best = a
			}
		}
		return best, nil
	}
}
