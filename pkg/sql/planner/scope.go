package planner

import (
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// column is one column visible to expressions: the relation alias it
// belongs to, its name and type.
type column struct {
	table string
	name  string
	typ   row.ColumnType
	// w is the declared width of an integer column (zero: bigint).
	w IntWidth
	// mod is the column's type modifier (varchar(n), char(n),
	// numeric(p,s)).
	mod TypeMod
	// hidden columns (a USING join's duplicate key) are not expanded by *
	// but can still be referenced qualified.
	hidden bool
	// emulated columns belong to a relation the SQL layer emulates (the
	// pg_catalog subset psql's listings read), which lacks most of the
	// real relation's columns: naming another is refused as unsupported.
	emulated bool
}

// scope is the list of columns of the relation an expression is evaluated
// over: column i of the scope is column i of the input row.
type scope struct {
	cols []column
}

func (s *scope) types() []row.ColumnType {
	out := make([]row.ColumnType, len(s.cols))
	for i, c := range s.cols {
		out[i] = c.typ
	}
	return out
}

func (s *scope) names() []string {
	out := make([]string, len(s.cols))
	for i, c := range s.cols {
		out[i] = c.name
	}
	return out
}

// concat returns the scope of a join of s and t.
func (s *scope) concat(t *scope) *scope {
	out := &scope{cols: make([]column, 0, len(s.cols)+len(t.cols))}
	out.cols = append(append(out.cols, s.cols...), t.cols...)
	return out
}

// hasTable reports whether some column belongs to alias.
func (s *scope) hasTable(table string) bool {
	for _, c := range s.cols {
		if c.table == table {
			return true
		}
	}
	return false
}

// resolve finds the column named name, qualified by table when table is
// not empty, with Postgres' errors: 42P01 for an unknown table alias, 42703
// for an unknown column, 42702 for an ambiguous one.
func (s *scope) resolve(table, name string) (int, error) {
	found := -1
	for i, c := range s.cols {
		if c.name != name || (table != "" && c.table != table) || (table == "" && c.hidden) {
			continue
		}
		if found >= 0 {
			return 0, sqlerr.Errorf(sqlerr.AmbiguousColumn, "column reference %q is ambiguous", name)
		}
		found = i
	}
	if found >= 0 {
		return found, nil
	}
	if table != "" && !s.hasTable(table) {
		return 0, sqlerr.Errorf(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", table)
	}
	for _, c := range s.cols {
		if c.emulated && (table == "" || c.table == table) {
			return 0, sqlerr.Errorf(sqlerr.FeatureNotSupported,
				"column %s not supported: Tandem emulates only the pg_catalog columns psql's \\dt, \\dv, \\dm and \\d list relations with; use SHOW COLUMNS FROM <relation> or SHOW INDEXES", name)
		}
	}
	if table != "" {
		return 0, sqlerr.Errorf(sqlerr.UndefinedColumn, "column %s.%s does not exist", table, name)
	}
	return 0, sqlerr.Errorf(sqlerr.UndefinedColumn, "column %q does not exist", name)
}
