package oracle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// execText runs one statement with the simple protocol and returns the
// rows of its last result as text ("NULL" for NULL), or its SQLSTATE.
func execText(ctx context.Context, c *pgconn.PgConn, sql string) ([]string, string, error) {
	res, err := c.Exec(ctx, sql).ReadAll()
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return nil, pe.Code, nil
		}
		return nil, "", err
	}
	if len(res) == 0 {
		return nil, "", nil
	}
	var rows []string
	for _, r := range res[len(res)-1].Rows {
		vals := make([]string, len(r))
		for i, v := range r {
			if v == nil {
				vals[i] = "NULL"
			} else {
				vals[i] = string(v)
			}
		}
		rows = append(rows, strings.Join(vals, "|"))
	}
	return rows, "", nil
}

// Mismatch describes a record where Tandem and Postgres disagree.
type Mismatch struct {
	Record   Record
	Tandem   string
	Postgres string
}

func (m *Mismatch) Error() string {
	return fmt.Sprintf("line %d: %s\n  tandem:   %s\n  postgres: %s", m.Record.Line, m.Record.SQL, m.Tandem, m.Postgres)
}

func describe(rows []string, code string) string {
	if code != "" {
		return "error " + code
	}
	return fmt.Sprintf("%d rows %q", len(rows), rows)
}

// Run executes the records on both connections and returns the first
// disagreement as a *Mismatch; it reports how many queries it compared.
func Run(ctx context.Context, recs []Record, tandem, postgres *pgconn.PgConn) (int, error) {
	compared := 0
	for _, rec := range recs {
		var trows, prows []string
		var tcode, pcode string
		var err error
		if rec.Kind != PostgresOnly {
			if trows, tcode, err = execText(ctx, tandem, rec.SQL); err != nil {
				return compared, fmt.Errorf("line %d: tandem: %w", rec.Line, err)
			}
		}
		if rec.Kind != TandemOnly && rec.Kind != TandemError {
			if prows, pcode, err = execText(ctx, postgres, rec.SQL); err != nil {
				return compared, fmt.Errorf("line %d: postgres: %w", rec.Line, err)
			}
		}
		mismatch := func() error {
			return &Mismatch{Record: rec, Tandem: describe(trows, tcode), Postgres: describe(prows, pcode)}
		}
		switch rec.Kind {
		case StatementOK:
			if tcode != "" || pcode != "" {
				return compared, mismatch()
			}
		case TandemOnly:
			if tcode != "" {
				return compared, mismatch()
			}
		case TandemError:
			if tcode != rec.Code {
				return compared, mismatch()
			}
		case PostgresOnly:
			if pcode != "" {
				return compared, mismatch()
			}
		case StatementError:
			if tcode == "" || pcode == "" || tcode != pcode || (rec.Code != "" && tcode != rec.Code) {
				return compared, mismatch()
			}
		case Query:
			if tcode != "" || pcode != "" {
				return compared, mismatch()
			}
			if !rec.Ordered {
				slices.Sort(trows)
				slices.Sort(prows)
			}
			if !slices.Equal(trows, prows) {
				return compared, mismatch()
			}
			compared++
		}
	}
	return compared, nil
}
