package oracle

import (
	"fmt"
	"strings"
)

// Kind is the kind of a script record.
type Kind int

// Record kinds.
const (
	StatementOK Kind = iota
	StatementError
	TandemOnly
	// TandemError runs on Tandem only, which must fail with Code: what
	// Tandem refuses (0A000) although Postgres accepts it.
	TandemError
	PostgresOnly
	Query
)

// Record is one step of a script.
type Record struct {
	Kind Kind
	// Code is the expected SQLSTATE of a StatementError, or "".
	Code string
	// Ordered says a Query's row order matters.
	Ordered bool
	SQL     string
	// Line is the record's first line in the script, for messages.
	Line int
}

// ParseScript parses a script.
func ParseScript(text string) ([]Record, error) {
	var out []Record
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		rec := Record{Line: i + 1}
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "statement" && f[1] == "ok":
			rec.Kind = StatementOK
		case len(f) >= 2 && f[0] == "statement" && f[1] == "error" && len(f) <= 3:
			rec.Kind = StatementError
			if len(f) == 3 {
				rec.Code = f[2]
			}
		case len(f) == 2 && f[0] == "tandem" && f[1] == "ok":
			rec.Kind = TandemOnly
		case len(f) == 3 && f[0] == "tandem" && f[1] == "error":
			rec.Kind = TandemError
			rec.Code = f[2]
		case len(f) == 2 && f[0] == "postgres" && f[1] == "ok":
			rec.Kind = PostgresOnly
		case f[0] == "query" && (len(f) == 1 || len(f) == 2 && f[1] == "ordered"):
			rec.Kind = Query
			rec.Ordered = len(f) == 2
		default:
			return nil, fmt.Errorf("line %d: unknown record header %q", i+1, line)
		}
		var sql []string
		for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
			i++
			sql = append(sql, lines[i])
		}
		if len(sql) == 0 {
			return nil, fmt.Errorf("line %d: record without SQL", rec.Line)
		}
		rec.SQL = strings.Join(sql, "\n")
		out = append(out, rec)
	}
	return out, nil
}
