package expr

import (
	"regexp"

	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Compiled patterns. A regular expression function whose pattern and
// flags are constants (no column references) has them compiled once when
// its MFP is prepared (MFP.Prepare, which every per-row loop uses), not
// once per row: Prepare works on its own copy of the expressions and
// sets that copy's call nodes' compiled field, so plans, which are
// shared and serialised, never carry one. A regexp.Regexp is safe for
// concurrent use. A constant pattern that does not compile keeps its
// error, reported by each row as an uncompiled one would be.

// regexSig says where a regular expression function takes its pattern
// and flags (flags < 0: none), and whether it accepts 'g'.
type regexSig struct {
	name        string
	pattern     int
	flags       int
	allowGlobal bool
}

var regexSigs = map[Func]regexSig{
	FuncRegexMatch:    {name: "regex_match", pattern: 1, flags: -1},
	FuncRegexpLike:    {name: "regexp_like", pattern: 1, flags: 2},
	FuncRegexpReplace: {name: "regexp_replace", pattern: 1, flags: 3, allowGlobal: true},
	FuncRegexpMatch:   {name: "regexp_match", pattern: 1, flags: 2},
}

// compiledRegex is a constant pattern compiled once.
type compiledRegex struct {
	re     *regexp.Regexp
	global bool
	err    error
}

// compileArgs compiles the pattern and flags of a call to f.
func compileArgs(f Func, args []row.Datum) (*compiledRegex, error) {
	sig := regexSigs[f]
	flags := ""
	if sig.flags >= 0 && sig.flags < len(args) {
		flags = args[sig.flags].Text()
	}
	re, global, err := compileRegex(sig.name, args[sig.pattern].Text(), flags, sig.allowGlobal)
	return &compiledRegex{re: re, global: global, err: err}, err
}

// evalWithRegex evaluates regular expression function f over args (its
// strict NULL check done), with c the precompiled pattern or nil.
func evalWithRegex(f Func, args []row.Datum, c *compiledRegex) (row.Datum, error) {
	if c == nil {
		var err error
		if c, err = compileArgs(f, args); err != nil {
			return row.Null(), err
		}
	}
	if c.err != nil {
		return row.Null(), c.err
	}
	switch f {
	case FuncRegexMatch, FuncRegexpLike:
		return row.Bool(c.re.MatchString(args[0].Text())), nil
	case FuncRegexpReplace:
		return regexpReplace(c.re, c.global, args)
	case FuncRegexpMatch:
		return regexpMatchArray(c.re.FindStringSubmatchIndex(args[0].Text()), args[0].Text(), c.re.NumSubexp())
	}
	return row.Null(), evalErr(CodeInternal, "%s is not a regular expression function", f)
}

// regexpMatchArray is regexp_match's result for match m of s: NULL
// without a match, else the text[] of the capture groups (NULL for a
// group that did not take part), or of the whole match when the pattern
// has none.
func regexpMatchArray(m []int, s string, groups int) (row.Datum, error) {
	if m == nil {
		return row.Null(), nil
	}
	if groups == 0 {
		return buildArray(row.TypeTextArray, []row.Datum{row.Text(s[m[0]:m[1]])})
	}
	elems := make([]row.Datum, groups)
	for g := 1; g <= groups; g++ {
		if m[2*g] >= 0 {
			elems[g-1] = row.Text(s[m[2*g]:m[2*g+1]])
		}
	}
	return buildArray(row.TypeTextArray, elems)
}

// prepareRegexes returns e with every regular expression call whose
// pattern and flags are constants given its compiled pattern; nodes on
// the way to one are copied, the others shared with e.
func prepareRegexes(e Expr) Expr {
	changed := false
	var args []Expr
	for i := range e.Args {
		a := prepareRegexes(e.Args[i])
		if a.compiled != nil || !sameNode(&a, &e.Args[i]) {
			if !changed {
				args = append([]Expr(nil), e.Args...)
				changed = true
			}
			args[i] = a
		}
	}
	if changed {
		e.Args = args
	}
	sig, ok := regexSigs[e.Func]
	if e.Op != OpCall || !ok || sig.pattern >= len(e.Args) {
		return e
	}
	ds := make([]row.Datum, len(e.Args))
	for _, i := range []int{sig.pattern, sig.flags} {
		if i < 0 || i >= len(e.Args) {
			continue
		}
		if e.Args[i].Support() != 0 {
			return e
		}
		d, err := e.Args[i].Eval(nil)
		if err != nil || d.IsNull() || d.Type() != row.TypeText {
			return e // evaluated per row, which reports it
		}
		ds[i] = d
	}
	e.compiled, _ = compileArgs(e.Func, ds)
	return e
}

// sameNode reports whether a and b are the same node (the same Args
// backing array and compiled pattern).
func sameNode(a, b *Expr) bool {
	return a.compiled == b.compiled && len(a.Args) == len(b.Args) && (len(a.Args) == 0 || &a.Args[0] == &b.Args[0])
}
