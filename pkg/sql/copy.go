package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// DefaultMaxCopyBytes bounds the encoded rows one COPY FROM holds: the
// rows are written in one atomic write at the end, so they stay in
// memory until then (the client's data itself is parsed as it arrives
// and only its last incomplete line is kept).
const DefaultMaxCopyBytes = 1 << 30

// CopyIn is a COPY FROM STDIN in progress. The connection sends
// CopyInResponse, feeds it the client's CopyData and ends it with Done
// (CopyDone) or Abort (CopyFail, or an error).
type CopyIn interface {
	// Columns is the number of columns each row has.
	Columns() int
	// Binary reports whether the data is in binary format.
	Binary() bool
	// Write parses one CopyData message. After an error the rest of the
	// data is to be discarded and the COPY aborted.
	Write(data []byte) error
	// Done writes the rows, as one write, and returns the COPY's result.
	Done(ctx context.Context) (*Result, error)
	// Abort discards the rows.
	Abort()
}

// BinaryDecoder decodes a field of binary COPY data as a value of row
// type t (the receive function of t's PostgreSQL type): the front door,
// which knows the wire's binary formats, gives one to a binary COPY
// (copyIn.SetBinaryDecoder).
type BinaryDecoder func(v []byte, t row.Type) (row.Datum, error)

// SetBinaryDecoder has the fields of types the SQL layer does not decode
// itself (numeric, date, time, timestamptz, interval, arrays) decoded by
// f.
func (ci *copyIn) SetBinaryDecoder(f BinaryDecoder) { ci.decode = f }

// copyIn implements CopyIn for a table.
type copyIn struct {
	s      *Session
	it     *Item
	rules  *tableRules
	cols   []int // table column of each data column
	format copyFormat
	// header: the first line is a header to skip.
	header bool
	line   int    // lines consumed
	rest   []byte // an incomplete line (text, CSV) or tuple (binary)
	rows   []RowDiff
	bytes  int
	max    int
	// binaryStarted: the binary signature has been read.
	binaryStarted bool
	// decode, when set (SetBinaryDecoder), decodes the binary fields of
	// the types binaryDatum does not itself.
	decode BinaryDecoder
	ended  bool // the end marker (\. or the binary trailer) was seen
}

// copyFrom starts COPY t [(cols)] FROM STDIN.
func (s *Session) copyFrom(ctx context.Context, c *pg.CopyStmt) (*Result, error) {
	if !c.IsFrom {
		return nil, sqlerr.Unsupported("COPY ... TO (use SELECT, or COPY (SUBSCRIBE ...) TO STDOUT)")
	}
	if c.Filename != "" || c.IsProgram {
		return nil, sqlerr.Unsupported("COPY FROM a file or program (use COPY ... FROM STDIN, as psql's \\copy does)")
	}
	if c.Relation == nil || c.Query != nil {
		return nil, sqlerr.Unsupported("this form of COPY")
	}
	if c.WhereClause != nil {
		return nil, sqlerr.Unsupported("COPY FROM ... WHERE")
	}
	sn, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	it, err := tableItem(sn, c.Relation)
	if err != nil {
		return nil, err
	}
	if _, err := sn.columnGuard(s.user, it, privInsert); err != nil {
		return nil, err
	}
	rules, err := rulesFor(s.planner(sn, nil, nil), sn, it)
	if err != nil {
		return nil, err
	}
	ci := &copyIn{s: s, it: it, rules: rules, format: defaultFormat(), max: s.engine.maxCopyBytes()}
	for _, n := range c.Attlist {
		name := n.GetString_().GetSval()
		i := slices.Index(it.Desc.Names, name)
		if i < 0 {
			return nil, sqlerr.Errorf(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", name, it.Name)
		}
		if slices.Contains(ci.cols, i) {
			return nil, sqlerr.Errorf(sqlerr.DuplicateColumn, "column %q specified more than once", name)
		}
		ci.cols = append(ci.cols, i)
	}
	if len(ci.cols) == 0 {
		for i := range it.Desc.Types {
			ci.cols = append(ci.cols, i)
		}
	}
	if err := sn.checkColumns(s.user, it, privInsert, ci.cols); err != nil {
		return nil, err
	}
	if err := ci.options(c.Options); err != nil {
		return nil, err
	}
	return &Result{Tag: "COPY", CopyIn: ci}, nil
}

func (e *Engine) maxCopyBytes() int {
	if e.MaxCopyBytes > 0 {
		return e.MaxCopyBytes
	}
	return DefaultMaxCopyBytes
}

func (ci *copyIn) Columns() int { return len(ci.cols) }
func (ci *copyIn) Binary() bool { return ci.format.kind == formatBinary }
func (ci *copyIn) Abort()       { ci.rows, ci.rest = nil, nil }

// Write implements CopyIn.
func (ci *copyIn) Write(data []byte) error {
	ci.rest = append(ci.rest, data...)
	var err error
	if ci.format.kind == formatBinary {
		err = ci.consumeBinary()
	} else {
		err = ci.consumeLines(false)
	}
	return err
}

// Done implements CopyIn.
func (ci *copyIn) Done(ctx context.Context) (*Result, error) {
	if ci.format.kind == formatBinary {
		// The trailer is optional: PostgreSQL ends at the end of the data.
		if len(ci.rest) > 0 || !ci.binaryStarted && !ci.ended {
			return nil, sqlerr.New(sqlerr.BadCopyFileFormat, "unexpected EOF in COPY data")
		}
	} else if err := ci.consumeLines(true); err != nil {
		return nil, err
	}
	n := len(ci.rows)
	s := ci.s
	if s.tx.buffering() {
		// Checked again, under the lock, at COMMIT.
		s.bufferWrite(ci.it, ci.rows)
		return tagf("COPY %d", n), nil
	}
	sn, unlock, err := s.lockedSnapshot(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if cur, ok := sn.byID[ci.it.ID]; !ok || cur.SQL != ci.it.SQL || cur.Name != ci.it.Name {
		return nil, sqlerr.Errorf(sqlerr.ObjectNotInPrerequisite, "table %q was altered or dropped during COPY", ci.it.Name)
	}
	w, err := s.prepareCommit(ctx, sn, &pendingWrite{id: ci.it.ID, name: ci.it.Name, updates: ci.rows})
	if err != nil {
		return nil, err
	}
	ci.rows = nil
	if err := s.applyWrites(ctx, []pendingWrite{w}); err != nil {
		return nil, err
	}
	return tagf("COPY %d", n), nil
}

// consumeLines parses the complete lines buffered (and, at the end, the
// last line even without a newline).
func (ci *copyIn) consumeLines(atEnd bool) error {
	for len(ci.rest) > 0 && !ci.ended {
		end := ci.format.lineEnd(ci.rest)
		if end < 0 {
			if !atEnd {
				return nil
			}
			end = len(ci.rest)
		}
		line := ci.rest[:end]
		next := end
		if next < len(ci.rest) {
			next++ // the \n
		}
		line = []byte(strings.TrimSuffix(string(line), "\r"))
		ci.line++
		if err := ci.parseLine(string(line)); err != nil {
			return err
		}
		ci.rest = ci.rest[next:]
	}
	if ci.ended {
		ci.rest = nil
	}
	return nil
}

// parseLine turns one line of text or CSV data into a row.
func (ci *copyIn) parseLine(line string) error {
	if ci.header && ci.line == 1 {
		return nil
	}
	if line == `\.` {
		ci.ended = true
		return nil
	}
	fields, err := ci.format.split(line)
	if err != nil {
		return ci.lineErr(err, "", "")
	}
	if len(fields) > len(ci.cols) {
		return ci.lineErr(sqlerr.New(sqlerr.BadCopyFileFormat, "extra data after last expected column"), "", line)
	}
	if len(fields) < len(ci.cols) {
		name := ci.it.Desc.Name(ci.cols[len(fields)])
		return ci.lineErr(sqlerr.Errorf(sqlerr.BadCopyFileFormat, "missing data for column %q", name), "", line)
	}
	vals := make([]row.Datum, len(fields))
	for i, f := range fields {
		if f == nil {
			vals[i] = row.Null()
			continue
		}
		d, err := ci.convert(i, *f)
		if err != nil {
			return ci.lineErr(err, ci.it.Desc.Name(ci.cols[i]), *f)
		}
		vals[i] = d
	}
	return ci.addRow(vals, line)
}

// convert reads a text value of data column i.
func (ci *copyIn) convert(i int, text string) (row.Datum, error) {
	col := ci.cols[i]
	t := ci.it.Desc.Types[col].Type
	d := row.Text(text)
	if t != row.TypeText {
		var err error
		if d, err = expr.CastDatum(d, t); err != nil {
			return row.Null(), sqlerr.Convert(err)
		}
	}
	d, err := ci.narrow(col, d)
	if err != nil || col >= len(ci.rules.mods) {
		return d, err
	}
	// varchar(n), char(n) and numeric(p,s) apply as to an INSERT.
	if d, err = ci.rules.mods[col].AssignDatum(d); err != nil {
		return row.Null(), sqlerr.Convert(err)
	}
	return d, nil
}

// narrow range-checks a value of a smallint or integer column.
func (ci *copyIn) narrow(col int, d row.Datum) (row.Datum, error) {
	if col >= len(ci.rules.widths) || d.IsNull() || d.Type() != row.TypeInt64 && d.Type() != row.TypeInt64Array {
		return d, nil
	}
	if d.Type() == row.TypeInt64Array {
		// int2[] and int4[] elements, as an assignment checks them.
		if w := ci.rules.widths[col]; w != 0 {
			v, err := expr.Call(expr.FuncArrayNarrow, expr.Literal(d), expr.Literal(row.Int64(int64(w)))).Eval(nil)
			if err != nil {
				return row.Null(), sqlerr.Convert(err)
			}
			return v, nil
		}
		return d, nil
	}
	f := expr.FuncInt4
	switch ci.rules.widths[col] {
	case planner.IntWidth2:
		f = expr.FuncInt2
	case planner.IntWidth4:
	default:
		return d, nil
	}
	v, err := expr.Call(f, expr.Literal(d)).Eval(nil)
	if err != nil {
		return row.Null(), sqlerr.Convert(err)
	}
	return v, nil
}

// addRow completes a row with the other columns' defaults, checks it and
// keeps it.
func (ci *copyIn) addRow(vals []row.Datum, line string) error {
	full := make([]row.Datum, ci.it.Desc.Arity())
	given := make([]bool, len(full))
	for i, c := range ci.cols {
		full[c], given[c] = vals[i], true
	}
	for c := range full {
		if given[c] {
			continue
		}
		v, err := ci.rules.defaults[c].Eval(nil)
		if err != nil {
			return ci.lineErr(sqlerr.Convert(err), "", line)
		}
		full[c] = v
	}
	if err := ci.rules.checkRow(full); err != nil {
		return ci.lineErr(err, "", line)
	}
	r := row.Pack(full...)
	ci.bytes += len(r)
	if ci.bytes > ci.max {
		return sqlerr.Errorf(sqlerr.ProgramLimitExceeded,
			"COPY data exceeds the limit of %d bytes held for one atomic write (split the data into several COPY statements)", ci.max)
	}
	ci.rows = append(ci.rows, RowDiff{Row: r, Diff: 1})
	return nil
}

// lineErr adds PostgreSQL's CONTEXT to an error of the current line:
// COPY t, line 3, column b: "x".
func (ci *copyIn) lineErr(err error, col, value string) error {
	e := sqlerr.Convert(err)
	where := fmt.Sprintf("COPY %s, line %d", ci.it.Name, ci.line)
	switch {
	case col != "":
		where += fmt.Sprintf(", column %s: \"%s\"", col, value)
	case value != "":
		where += fmt.Sprintf(": \"%s\"", value)
	}
	out := *e
	out.Where = where
	return &out
}
