package parse

import (
	"errors"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// MaxStatementBytes bounds the text Parse accepts, so a hostile client
// cannot make the grammar allocate without bound.
const MaxStatementBytes = 1 << 20

// Parse parses SQL text holding zero or more semicolon-separated
// statements.
func Parse(sql string) ([]Statement, error) {
	if len(sql) > MaxStatementBytes {
		return nil, sqlerr.Errorf(sqlerr.SyntaxError, "statement too long (%d bytes, limit %d)", len(sql), MaxStatementBytes)
	}
	if strings.IndexByte(sql, 0) >= 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "statement contains a NUL byte")
	}
	pieces, err := split(sql)
	if err != nil {
		return nil, err
	}
	var out []Statement
	for _, piece := range pieces {
		if onlyComments(piece) {
			continue
		}
		st, err := ParseOne(piece)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// ParseOne parses exactly one statement (without a trailing semicolon
// separating it from another).
func ParseOne(sql string) (Statement, error) {
	sql = strings.TrimRight(strings.TrimSpace(sql), ";")
	st, err := preparse(sql)
	if err != nil || st != nil {
		return st, err
	}
	res, err := pg.Parse(sql)
	if err != nil {
		return nil, convertPGError(err, 0)
	}
	switch len(res.Stmts) {
	case 0:
		return nil, sqlerr.New(sqlerr.SyntaxError, "empty statement")
	case 1:
		return &Postgres{Node: res.Stmts[0].GetStmt(), SQL: sql}, nil
	default:
		return nil, sqlerr.New(sqlerr.SyntaxError, "expected one statement, found several")
	}
}

// convertPGError turns a libpg_query error into a 42601 error (42P20 for
// the grammar's window frame errors, as PostgreSQL reports them); offset is
// the byte offset of the parsed text within the statement.
func convertPGError(err error, offset int) error {
	var pe *pgparser.Error
	if errors.As(err, &pe) {
		pos := 0
		if pe.Cursorpos > 0 {
			pos = pe.Cursorpos + offset
		}
		code := sqlerr.SyntaxError
		if windowingErrors[pe.Message] {
			code = windowingError
		}
		return &sqlerr.Error{Code: code, Message: pe.Message, Position: pos}
	}
	return &sqlerr.Error{Code: sqlerr.SyntaxError, Message: err.Error()}
}

// windowingError is SQLSTATE 42P20, which PostgreSQL's grammar raises for
// the window frames in windowingErrors rather than 42601.
const windowingError = "42P20"

var windowingErrors = map[string]bool{
	"frame start cannot be UNBOUNDED FOLLOWING":                     true,
	"frame starting from following row cannot end with current row": true,
	"frame end cannot be UNBOUNDED PRECEDING":                       true,
	"frame starting from current row cannot have preceding rows":    true,
	"frame starting from following row cannot have preceding rows":  true,
}

// onlyComments reports whether text holds no token.
func onlyComments(text string) bool {
	toks, err := lex(text)
	return err == nil && len(toks) == 0
}
