package planner

import (
	"errors"

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
	// unstarred columns are not expanded by * but are referenced as any
	// other: the columns a SEARCH or CYCLE clause adds, read through the
	// recursive self-reference (searchcycle.go).
	unstarred bool
	// emulated columns belong to a relation the SQL layer emulates (the
	// pg_catalog subset psql's listings read), which lacks most of the
	// real relation's columns: naming another is refused as unsupported.
	emulated bool
	// outer columns are the outer values a correlated subquery is planned
	// against (apply.go): names resolve to them only when the subquery's
	// own columns do not have the name, and * does not expand them.
	outer bool
	// guard, when set, refuses a reference of the column (column
	// privileges: Relation.ColumnGuard).
	guard func() error
}

// use checks that column i of s may be referenced.
func (s *scope) use(i int) error {
	if g := s.cols[i].guard; g != nil {
		return g()
	}
	return nil
}

// guarded sets the columns of s to ask guard before each reference.
func guarded(s *scope, guard func(int) error) *scope {
	if guard == nil {
		return s
	}
	for i := range s.cols {
		s.cols[i].guard = func() error { return guard(i) }
	}
	return s
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

// hasTableLevel reports whether some outer (or other) column belongs to
// alias.
func (s *scope) hasTableLevel(table string, outer bool) bool {
	for _, c := range s.cols {
		if c.table == table && c.outer == outer {
			return true
		}
	}
	return false
}

// resolve finds the column named name, qualified by table when table is
// not empty, with Postgres' errors: 42P01 for an unknown table alias, 42703
// for an unknown column, 42702 for an ambiguous one.
//
// A subquery's own columns shadow the outer columns of a correlated
// subquery: the outer ones are searched only when the name's table (or,
// unqualified, the name) is not among the subquery's own.
func (s *scope) resolve(table, name string) (int, error) {
	i, err := s.resolveLevel(table, name, false)
	if err == nil || !s.hasOuter() {
		return i, err
	}
	if code := sqlerr.Code(err); code == sqlerr.UndefinedTable || (table == "" && (code == sqlerr.UndefinedColumn || isEmulatedColumn(err))) {
		if j, oerr := s.resolveLevel(table, name, true); oerr == nil {
			return j, nil
		}
	}
	return i, err
}

// hasOuter reports whether s has outer columns.
func (s *scope) hasOuter() bool {
	for _, c := range s.cols {
		if c.outer {
			return true
		}
	}
	return false
}

// resolveLevel resolves among the outer columns or among the others.
func (s *scope) resolveLevel(table, name string, outer bool) (int, error) {
	found := -1
	for i, c := range s.cols {
		if c.outer != outer || c.name != name || (table != "" && c.table != table) || (table == "" && c.hidden) {
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
	if table != "" && !s.hasTableLevel(table, outer) {
		return 0, sqlerr.Errorf(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", table)
	}
	for _, c := range s.cols {
		if c.emulated && c.outer == outer && (table == "" || c.table == table) {
			return 0, emulatedColumnError{sqlerr.Errorf(sqlerr.FeatureNotSupported,
				"column %s not supported: Tandem emulates only the pg_catalog columns psql's \\dt, \\dv, \\dm and \\d list relations with; use SHOW COLUMNS FROM <relation> or SHOW INDEXES", name)}
		}
	}
	if table != "" {
		return 0, sqlerr.Errorf(sqlerr.UndefinedColumn, "column %s.%s does not exist", table, name)
	}
	return 0, sqlerr.Errorf(sqlerr.UndefinedColumn, "column %q does not exist", name)
}

// emulatedColumnError is the 0A000 of a name an emulated catalog
// relation lacks: it may still name an outer query's column (psql's \dp:
// pg_roles ... WHERE oid = ANY (polroles)), so correlation looks further.
type emulatedColumnError struct{ err *sqlerr.Error }

func (e emulatedColumnError) Error() string { return e.err.Error() }
func (e emulatedColumnError) Unwrap() error { return e.err }

func isEmulatedColumn(err error) bool {
	var e emulatedColumnError
	return errors.As(err, &e)
}
