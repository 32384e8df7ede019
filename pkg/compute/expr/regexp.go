package expr

import (
	"regexp"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Regular expressions run on Go's RE2 engine, which agrees with
// PostgreSQL's advanced regular expressions on the common syntax (classes,
// quantifiers, groups, alternation, anchors, (?i)) and runs in linear
// time. PostgreSQL syntax RE2 lacks (backreferences \1, lookahead (?=,
// word boundaries \m \M \y, [[:<:]]) is an invalid pattern here: 2201B.
// As in PostgreSQL, '.' and negated bracket expressions match a newline
// unless the 'n' flag makes the match newline-sensitive.

// compileRegex compiles pattern under PostgreSQL flags ("" for none).
// allowGlobal says whether the 'g' flag is accepted (regexp_replace),
// and global reports whether it was given.
func compileRegex(fn, pattern, flags string, allowGlobal bool) (re *regexp.Regexp, global bool, err error) {
	if len(pattern) > maxRegexLen {
		return nil, false, evalErr(CodeInvalidRegex, "invalid regular expression: pattern longer than %d bytes", maxRegexLen)
	}
	fold, newline := false, false
	for _, f := range flags {
		switch f {
		case 'g':
			if !allowGlobal {
				return nil, false, evalErr(CodeInvalidParameterValue, "%s() does not support the \"global\" option", fn)
			}
			global = true
		case 'i':
			fold = true
		case 'c':
			fold = false
		case 'n', 'm':
			newline = true
		case 's':
			newline = false
		case 'b', 'e', 'p', 'q', 't', 'w', 'x':
			return nil, false, evalErr(CodeFeatureNotSupported, "regular expression option \"%c\" is not supported", f)
		default:
			return nil, false, evalErr(CodeInvalidParameterValue, "invalid regular expression option: \"%c\"", f)
		}
	}
	prefix := "(?s)"
	if newline {
		prefix = "(?m)"
	}
	if fold {
		prefix += "(?i)"
	}
	re, err = regexp.Compile(prefix + pattern)
	if err != nil {
		return nil, false, evalErr(CodeInvalidRegex, "invalid regular expression: %v", err)
	}
	return re, global, nil
}

func evalRegexMatch(s, pattern row.Datum) (row.Datum, error) {
	if s.Type() != row.TypeText || pattern.Type() != row.TypeText {
		return row.Null(), undefinedFunc("regex_match", s, pattern)
	}
	return evalWithRegex(FuncRegexMatch, []row.Datum{s, pattern}, nil)
}

// evalRegexpLike is regexp_like(s, pattern[, flags]).
func evalRegexpLike(args []row.Datum) (row.Datum, error) {
	return evalWithRegex(FuncRegexpLike, args, nil)
}

// evalRegexpReplace is regexp_replace(s, pattern, replacement[, flags]).
func evalRegexpReplace(args []row.Datum) (row.Datum, error) {
	return evalWithRegex(FuncRegexpReplace, args, nil)
}

// evalRegexpMatch is regexp_match(s, pattern[, flags]).
func evalRegexpMatch(args []row.Datum) (row.Datum, error) {
	return evalWithRegex(FuncRegexpMatch, args, nil)
}

// regexpReplace replaces the first match of re in args[0] (every match
// with global) by args[2]; in the replacement \1 to \9 are the groups,
// \& the whole match and \\ a backslash.
func regexpReplace(re *regexp.Regexp, global bool, args []row.Datum) (row.Datum, error) {
	s, repl := args[0].Text(), args[2].Text()
	n := 1
	if global {
		n = -1
	}
	matches := re.FindAllStringSubmatchIndex(s, n)
	if len(matches) == 0 {
		return args[0], nil
	}
	var sb strings.Builder
	last := 0
	for _, m := range matches {
		sb.WriteString(s[last:m[0]])
		expandReplacement(&sb, s, repl, m)
		last = m[1]
	}
	sb.WriteString(s[last:])
	if sb.Len() > maxTextBytes {
		return row.Null(), errLengthTooLarge
	}
	return row.Text(sb.String()), nil
}

// expandReplacement writes repl with its escapes filled from match m of s.
func expandReplacement(sb *strings.Builder, s, repl string, m []int) {
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '\\' || i+1 == len(repl) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch d := repl[i]; {
		case d >= '1' && d <= '9':
			g := int(d - '0')
			if 2*g+1 < len(m) && m[2*g] >= 0 {
				sb.WriteString(s[m[2*g]:m[2*g+1]])
			}
		case d == '&':
			sb.WriteString(s[m[0]:m[1]])
		case d == '\\':
			sb.WriteByte('\\')
		default:
			sb.WriteByte('\\')
			sb.WriteByte(d)
		}
	}
}

func typeRegexpMatch(args []row.ColumnType) (row.ColumnType, error) {
	for _, a := range args {
		if !is(a, row.TypeText) {
			return row.ColumnType{}, typeSig("regexp_match", args)
		}
	}
	return row.ColumnType{Type: row.TypeTextArray, Nullable: true}, nil
}

func typeRegexpMatches(args []row.Type) ([]row.ColumnType, error) {
	return typeRegexpTable("regexp_matches", args, row.TypeTextArray)
}

// typeRegexpTable types a regular-expression table function of (text,
// pattern[, flags]) returning one column of type out.
func typeRegexpTable(name string, args []row.Type, out row.Type) ([]row.ColumnType, error) {
	ok := len(args) >= 2 && len(args) <= 3
	for _, a := range args {
		ok = ok && (a == row.TypeText || a == row.TypeNull)
	}
	if !ok {
		return nil, evalErr(CodeUndefinedFunction, "function %s(%s) does not exist", name, typeList(args))
	}
	return []row.ColumnType{{Type: out}}, nil
}

// evalRegexpMatches emits regexp_match's array for the first match of
// args[1] in args[0], or for every match under the 'g' flag.
func evalRegexpMatches(args []row.Datum, emit func([]row.Datum) error) error {
	flags := ""
	if len(args) == 3 {
		flags = args[2].Text()
	}
	re, global, err := compileRegex("regexp_matches", args[1].Text(), flags, true)
	if err != nil {
		return err
	}
	n := 1
	if global {
		n = -1
	}
	s := args[0].Text()
	out := make([]row.Datum, 1)
	for _, m := range re.FindAllStringSubmatchIndex(s, n) {
		if out[0], err = regexpMatchArray(m, s, re.NumSubexp()); err != nil {
			return err
		}
		if err := emit(out); err != nil {
			return err
		}
	}
	return nil
}
