package planner

import (
	"slices"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

func TestTableIntWidths(t *testing.T) {
	tests := []struct {
		sql  string
		want []IntWidth
	}{
		{"CREATE TABLE t (a smallint, b int2, c int, d integer, e int4, f bigint, g text, h pg_catalog.int4)",
			[]IntWidth{IntWidth2, IntWidth2, IntWidth4, IntWidth4, IntWidth4, 0, 0, IntWidth4}},
		{"CREATE TABLE t (a int NOT NULL)", []IntWidth{IntWidth4}},
		{"CREATE TABLE t (a INT NOT NULL, b bigint)", []IntWidth{IntWidth4, 0}},
		{"CREATE TABLE t (a int)", []IntWidth{IntWidth4}},
		// Only bigint: no parse needed, nil reads as all bigint.
		{"CREATE TABLE kv (k bigint, v bigint, pint text, int_col bigint)", nil},
		{"CREATE TABLE kv (\"int\" bigint)", []IntWidth{0}},
		{"CREATE VIEW v AS SELECT 1", nil},
		{"not sql", nil},
	}
	for _, tc := range tests {
		if got := TableIntWidths(tc.sql); !slices.Equal(got, tc.want) {
			t.Errorf("TableIntWidths(%q) = %v, want %v", tc.sql, got, tc.want)
		}
	}
}

func intCatalog() mapCatalog {
	desc := row.RelationDesc{Names: []string{"s", "i", "b"}, Types: []row.ColumnType{{Type: row.TypeInt64, Nullable: true}, {Type: row.TypeInt64, Nullable: true}, {Type: row.TypeInt64, Nullable: true}}}
	return mapCatalog{"ints": {ID: plan.User(1), Name: "ints", Desc: desc, IntWidths: []IntWidth{IntWidth2, IntWidth4, 0}}}
}

// evalOver plans a one-column query and computes its first value: over
// the row in of table ints when it reads the table (one Mfp over the
// Get), or the constant it evaluates to.
func evalOver(t *testing.T, sql string, in []row.Datum) (row.Datum, error) {
	t.Helper()
	q, err := planSQL(t, &Planner{Catalog: intCatalog()}, sql)
	if err != nil {
		return row.Null(), err
	}
	pl := q.Plan
	switch {
	case pl.Constant != nil && len(pl.Constant.Rows) == 1:
		return pl.Constant.Rows[0].Datums[0], nil
	case pl.Mfp != nil && pl.Mfp.Input.Get != nil:
	case pl.Mfp != nil && pl.Mfp.Input.Constant != nil && len(pl.Mfp.Input.Constant.Rows) == 1:
		in = pl.Mfp.Input.Constant.Rows[0].Datums
	default:
		t.Fatalf("%s: unexpected plan shape:\n%s", sql, Explain(q))
	}
	out, ok, err := pl.Mfp.MFP.Evaluate(in, nil)
	if err != nil || !ok {
		return row.Null(), err
	}
	return out[0], nil
}

// TestIntWidthChecks pins where the planner range-checks integers: the
// results Postgres computes in int2/int4 fail with 22003 when they leave
// the type's range, and those it computes in int8 do not.
func TestIntWidthChecks(t *testing.T) {
	edge := []row.Datum{row.Int64(32767), row.Int64(2147483647), row.Int64(9223372036854775806)}
	tests := []struct {
		sql  string
		want int64  // when code is empty
		code string // SQLSTATE expected
		msg  string // message expected, when set
	}{
		{"SELECT s + s FROM ints", 0, sqlerr.NumericValueOutOfRange, "smallint out of range"},
		{"SELECT s + 1 FROM ints", 32768, "", ""}, // int2 + int4 is int4
		{"SELECT i + 1 FROM ints", 0, sqlerr.NumericValueOutOfRange, "integer out of range"},
		{"SELECT i + s FROM ints", 0, sqlerr.NumericValueOutOfRange, "integer out of range"},
		{"SELECT i * 2 FROM ints", 0, sqlerr.NumericValueOutOfRange, "integer out of range"},
		{"SELECT -s - s FROM ints", 0, sqlerr.NumericValueOutOfRange, "smallint out of range"},
		{"SELECT i + 1::bigint FROM ints", 2147483648, "", ""},
		{"SELECT i::bigint + 1 FROM ints", 2147483648, "", ""},
		{"SELECT b + 1 FROM ints", 9223372036854775807, "", ""},
		{"SELECT b::int FROM ints", 0, sqlerr.NumericValueOutOfRange, "integer out of range"},
		{"SELECT i::smallint FROM ints", 0, sqlerr.NumericValueOutOfRange, "smallint out of range"},
		{"SELECT s::int FROM ints", 32767, "", ""},
		{"SELECT coalesce(i, 0) + 1 FROM ints", 0, sqlerr.NumericValueOutOfRange, "integer out of range"},
		{"SELECT CASE WHEN b > 0 THEN i ELSE 0 END + 1 FROM ints", 0, sqlerr.NumericValueOutOfRange, "integer out of range"},
		{"SELECT x + 1 FROM (SELECT i AS x FROM ints) AS d", 0, sqlerr.NumericValueOutOfRange, "integer out of range"},
		{"SELECT i + '1' FROM ints", 0, sqlerr.NumericValueOutOfRange, "integer out of range"},
		{"SELECT abs(-s - 1::smallint) FROM ints", 0, sqlerr.NumericValueOutOfRange, "smallint out of range"},
		{"SELECT 2147483647 + 1", 0, sqlerr.NumericValueOutOfRange, "integer out of range"},
		{"SELECT 2147483647::bigint + 1", 2147483648, "", ""},
		{"SELECT 3000000000 + 1", 3000000001, "", ""}, // a literal beyond int4 is bigint
		{"SELECT '99999999999'::int", 0, sqlerr.NumericValueOutOfRange, `value "99999999999" is out of range for type integer`},
		{"SELECT 4e4::smallint", 0, sqlerr.NumericValueOutOfRange, "smallint out of range"},
		{"SELECT '99999999999'::text::int", 0, sqlerr.NumericValueOutOfRange, `value "99999999999" is out of range for type integer`},
		{"SELECT '1e10'::text::int", 0, sqlerr.InvalidTextRepresentation, `invalid input syntax for type integer: "1e10"`},
	}
	for _, tc := range tests {
		t.Run(tc.sql, func(t *testing.T) {
			got, err := evalOver(t, tc.sql, edge)
			if code := sqlerr.Code(err); code != tc.code && expr.Code(err) != tc.code {
				t.Fatalf("%s: error %v, want code %q", tc.sql, err, tc.code)
			}
			if tc.msg != "" && !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("%s: error %v, want message %q", tc.sql, err, tc.msg)
			}
			if tc.code == "" && got.Int64() != tc.want {
				t.Fatalf("%s = %v, want %d", tc.sql, got, tc.want)
			}
		})
	}
}

func TestInsertIntWidths(t *testing.T) {
	cat := intCatalog()
	p := &Planner{Catalog: cat}
	for _, tc := range []struct {
		sql     string
		checked []string // expected range checks in the plan
	}{
		// An integer literal is int4, which a smallint column checks.
		{"INSERT INTO ints VALUES (1, 2, 3)", []string{"int2("}},
		{"INSERT INTO ints VALUES (1::smallint, 3000000000, 3)", []string{"int4("}},
		{"INSERT INTO ints VALUES (100000, 2, 3)", []string{"int2("}},
		{"INSERT INTO ints SELECT b, b, b FROM ints", []string{"int2(", "int4("}},
		{"INSERT INTO ints SELECT s, s, i FROM ints", nil},
		{"INSERT INTO ints VALUES (1.5, 2, 3)", []string{"int2("}},
	} {
		res, err := pg.Parse(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		ins := res.Stmts[0].Stmt.GetInsertStmt()
		r := cat["ints"]
		q, err := p.PlanInsert(r.Desc, r.IntWidths, nil, nil, nil, ins.SelectStmt.GetSelectStmt())
		if err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		ex := Explain(q)
		for _, f := range []string{"int2(", "int4("} {
			if want := slices.Contains(tc.checked, f); strings.Contains(ex, f) != want {
				t.Errorf("%s: range check %s present = %v, want %v:\n%s", tc.sql, f, !want, want, ex)
			}
		}
	}
}

// BenchmarkTableIntWidths measures the parse the SQL layer does per
// table resolution to learn the declared widths.
func BenchmarkTableIntWidths(b *testing.B) {
	for _, tc := range []struct {
		name, sql string
		n         int
	}{
		{"narrow", "CREATE TABLE orders (id bigint NOT NULL, customer int, amount double precision, note text, qty smallint)", 5},
		{"bigint-only", "CREATE TABLE kv (k bigint, v bigint)", 0},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if len(TableIntWidths(tc.sql)) != tc.n {
					b.Fatal("wrong widths")
				}
			}
		})
	}
}
