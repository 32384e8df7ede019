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
	re, _, err := compileRegex("regex_match", pattern.Text(), "", false)
	if err != nil {
		return row.Null(), err
	}
	return row.Bool(re.MatchString(s.Text())), nil
}

// evalRegexpLike is regexp_like(s, pattern[, flags]).
func evalRegexpLike(args []row.Datum) (row.Datum, error) {
	flags := ""
	if len(args) == 3 {
		flags = args[2].Text()
	}
	re, _, err := compileRegex("regexp_like", args[1].Text(), flags, false)
	if err != nil {
		return row.Null(), err
	}
	return row.Bool(re.MatchString(args[0].Text())), nil
}

// evalRegexpReplace is regexp_replace(s, pattern, replacement[, flags]):
// the first match (every match with 'g') replaced; in the replacement \1
// to \9 are the groups, \& the whole match and \\ a backslash.
func evalRegexpReplace(args []row.Datum) (row.Datum, error) {
	flags := ""
	if len(args) == 4 {
		flags = args[3].Text()
	}
	re, global, err := compileRegex("regexp_replace", args[1].Text(), flags, true)
	if err != nil {
		return row.Null(), err
	}
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
