package slt

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Kind is what a record asks the runner to do.
type Kind int

const (
	// Statement runs SQL and expects it to succeed or fail.
	Statement Kind = iota + 1
	// Query runs SQL and compares its result with the expected values.
	Query
	// HashThreshold changes the threshold above which the reference runner
	// writes hashes instead of values. It matters only when writing
	// expected results, so Run ignores it; it is parsed to be reported.
	HashThreshold
	// Halt ends the script (when its conditions hold).
	Halt
)

func (k Kind) String() string {
	switch k {
	case Statement:
		return "statement"
	case Query:
		return "query"
	case HashThreshold:
		return "hash-threshold"
	case Halt:
		return "halt"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// SortMode is how a query's values are put in order before comparing.
type SortMode int

const (
	// NoSort compares values in the order the database returned them.
	NoSort SortMode = iota
	// RowSort sorts whole rows, comparing their values left to right.
	RowSort
	// ValueSort sorts every value on its own, ignoring row boundaries.
	ValueSort
)

func (m SortMode) String() string {
	switch m {
	case NoSort:
		return "nosort"
	case RowSort:
		return "rowsort"
	case ValueSort:
		return "valuesort"
	}
	return fmt.Sprintf("SortMode(%d)", int(m))
}

// Condition is one `skipif DB` or `onlyif DB` line before a record.
type Condition struct {
	Skip bool // skipif when true, onlyif when false
	DB   string
}

// Record is one entry of a script.
type Record struct {
	Kind Kind
	// Line is the 1-based line of the record's first line (its first
	// condition when it has one), for messages.
	Line       int
	Conditions []Condition

	// SQL is the text of a Statement or Query, lines joined by "\n".
	SQL string
	// ExpectError is set for `statement error`.
	ExpectError bool

	// Types has one letter per result column of a Query: I, R or T.
	Types string
	Sort  SortMode
	Label string
	// Expected are the expected values, one per line, already in the
	// order the sort mode produces; unused when Hashed.
	Expected []string
	// Hashed is set when the expected result is `N values hashing to H`:
	// HashCount is N and Hash is H (lower-case hex MD5).
	Hashed    bool
	HashCount int
	Hash      string

	// Threshold is the argument of HashThreshold.
	Threshold int
}

// Applies reports whether the record's conditions let a runner that
// identifies itself as db run it.
func (r *Record) Applies(db string) bool {
	for _, c := range r.Conditions {
		if c.Skip == strings.EqualFold(c.DB, db) {
			return false
		}
	}
	return true
}

var hashLine = regexp.MustCompile(`^([0-9]+) values hashing to ([0-9a-fA-F]{32})$`)

// ParseError is a malformed record; Line is 1-based.
type ParseError struct {
	Name string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Msg)
}

// maxLine bounds one line of a script; the corpus's longest are a few
// kilobytes, so this only guards against a file that is not a script.
const maxLine = 16 << 20

// Parse reads a whole script. name is used in error messages only. It stops
// at the first malformed record and returns it as a *ParseError.
func Parse(name string, r io.Reader) ([]Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	p := parser{name: name, sc: sc}
	var recs []Record
	for {
		rec, ok, err := p.next()
		if err != nil {
			return recs, err
		}
		if !ok {
			return recs, nil
		}
		recs = append(recs, rec)
	}
}

type parser struct {
	name string
	sc   *bufio.Scanner
	line int
	// peeked holds a line read but not consumed.
	peeked  string
	hasPeek bool
}

// read returns the next line without its line ending.
func (p *parser) read() (string, bool, error) {
	if p.hasPeek {
		p.hasPeek = false
		return p.peeked, true, nil
	}
	if !p.sc.Scan() {
		if err := p.sc.Err(); err != nil {
			return "", false, fmt.Errorf("%s:%d: read: %w", p.name, p.line+1, err)
		}
		return "", false, nil
	}
	p.line++
	return strings.TrimRight(p.sc.Text(), "\r"), true, nil
}

func (p *parser) errorf(format string, args ...any) error {
	return &ParseError{Name: p.name, Line: p.line, Msg: fmt.Sprintf(format, args...)}
}

// blank reports whether a line ends a record.
func blank(line string) bool { return strings.TrimSpace(line) == "" }

// fields splits a control line into words, dropping a trailing `# comment`.
func fields(line string) []string {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	return strings.Fields(line)
}

// next returns the next record; ok is false at the end of the script.
func (p *parser) next() (Record, bool, error) {
	var rec Record
	for {
		line, ok, err := p.read()
		if err != nil {
			return rec, false, err
		}
		if !ok {
			if len(rec.Conditions) > 0 {
				return rec, false, p.errorf("conditions at the end of the script apply to no record")
			}
			return rec, false, nil
		}
		if blank(line) {
			if len(rec.Conditions) > 0 {
				return rec, false, p.errorf("conditions followed by a blank line apply to no record")
			}
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if rec.Line == 0 {
			rec.Line = p.line
		}
		f := fields(line)
		if len(f) == 0 {
			// A line that is only a trailing comment, e.g. "  # note".
			continue
		}
		switch f[0] {
		case "skipif", "onlyif":
			if len(f) < 2 {
				return rec, false, p.errorf("%s needs a database name", f[0])
			}
			rec.Conditions = append(rec.Conditions, Condition{Skip: f[0] == "skipif", DB: f[1]})
		case "statement":
			if len(f) < 2 || (f[1] != "ok" && f[1] != "error") {
				return rec, false, p.errorf("statement must be followed by ok or error")
			}
			rec.Kind = Statement
			rec.ExpectError = f[1] == "error"
			sql, _, err := p.sqlText(false)
			if err != nil {
				return rec, false, err
			}
			rec.SQL = sql
			return rec, true, nil
		case "query":
			if err := p.queryHeader(&rec, f[1:]); err != nil {
				return rec, false, err
			}
			sql, results, err := p.sqlText(true)
			if err != nil {
				return rec, false, err
			}
			rec.SQL = sql
			if results {
				if err := p.expected(&rec); err != nil {
					return rec, false, err
				}
			}
			return rec, true, nil
		case "hash-threshold":
			if len(f) < 2 {
				return rec, false, p.errorf("hash-threshold needs a number")
			}
			n, err := strconv.Atoi(f[1])
			if err != nil || n < 0 {
				return rec, false, p.errorf("hash-threshold %q is not a number", f[1])
			}
			rec.Kind, rec.Threshold = HashThreshold, n
			return rec, true, nil
		case "halt":
			rec.Kind = Halt
			return rec, true, nil
		default:
			return rec, false, p.errorf("unknown record %q", f[0])
		}
	}
}

func (p *parser) queryHeader(rec *Record, args []string) error {
	rec.Kind = Query
	if len(args) == 0 {
		return p.errorf("query needs its column types")
	}
	for _, c := range args[0] {
		if c != 'I' && c != 'R' && c != 'T' {
			return p.errorf("query column type %q is not one of I, R, T", c)
		}
	}
	rec.Types = args[0]
	if len(args) > 1 {
		switch args[1] {
		case "nosort":
			rec.Sort = NoSort
		case "rowsort":
			rec.Sort = RowSort
		case "valuesort":
			rec.Sort = ValueSort
		default:
			return p.errorf("unknown sort mode %q", args[1])
		}
	}
	if len(args) > 2 {
		rec.Label = args[2]
	}
	return nil
}

// sqlText reads SQL lines up to a blank line or the end of the script, or
// (for a query) up to the "----" separator, reporting whether it was seen.
func (p *parser) sqlText(query bool) (string, bool, error) {
	var b strings.Builder
	for {
		line, ok, err := p.read()
		if err != nil {
			return "", false, err
		}
		if !ok || blank(line) {
			break
		}
		if query && line == "----" {
			if b.Len() == 0 {
				return "", false, p.errorf("query without SQL")
			}
			return b.String(), true, nil
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
	}
	if b.Len() == 0 {
		return "", false, p.errorf("record without SQL")
	}
	return b.String(), false, nil
}

// expected reads the lines after "----" up to a blank line.
func (p *parser) expected(rec *Record) error {
	for {
		line, ok, err := p.read()
		if err != nil {
			return err
		}
		if !ok || blank(line) {
			return nil
		}
		if len(rec.Expected) == 0 && !rec.Hashed {
			if m := hashLine.FindStringSubmatch(line); m != nil {
				n, err := strconv.Atoi(m[1])
				if err != nil {
					return p.errorf("value count %q: %v", m[1], err)
				}
				rec.Hashed, rec.HashCount, rec.Hash = true, n, strings.ToLower(m[2])
				continue
			}
		}
		if rec.Hashed {
			return p.errorf("values after a hash line")
		}
		rec.Expected = append(rec.Expected, line)
	}
}

// MarshalText writes the kind by name, for readable JSON.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// MarshalText writes the sort mode by name, for readable JSON.
func (m SortMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }
