package planner

import (
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// castTypeName parses "SELECT NULL::<typ>" and returns the type name.
func castTypeName(t *testing.T, typ string) *pg.TypeName {
	t.Helper()
	tree, err := pg.Parse("SELECT NULL::" + typ)
	if err != nil {
		t.Fatalf("parse %s: %v", typ, err)
	}
	return tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val.GetTypeCast().TypeName
}

// TestTypeMods checks the modifiers SQL type names declare and the OID,
// typmod and name they are described with, as PostgreSQL does.
func TestTypeMods(t *testing.T) {
	tests := []struct {
		typ    string
		row    row.Type
		oid    uint32
		typmod int32
		name   string
	}{
		{"varchar(30)", row.TypeText, 1043, 34, "character varying(30)"},
		{"character varying(3)", row.TypeText, 1043, 7, "character varying(3)"},
		{"varchar", row.TypeText, 1043, -1, "character varying"},
		{"char(4)", row.TypeText, 1042, 8, "character(4)"},
		{"char", row.TypeText, 1042, 5, "character(1)"},
		{"bpchar", row.TypeText, 1042, -1, "bpchar"},
		{"numeric(10,2)", row.TypeNumeric, 1700, 10<<16 | 2 + 4, "numeric(10,2)"},
		{"decimal(5)", row.TypeNumeric, 1700, 5<<16 + 4, "numeric(5,0)"},
		{"numeric", row.TypeNumeric, 1700, -1, "numeric"},
		{"uuid", row.TypeUUID, 2950, -1, "uuid"},
		{"text", row.TypeText, 25, -1, "text"},
		{"int", row.TypeInt64, 23, -1, "integer"},
		{"varchar[]", row.TypeTextArray, 1015, -1, "character varying[]"},
		{"varchar(3)[]", row.TypeTextArray, 1015, 7, "character varying(3)[]"},
		{"char(2)[]", row.TypeTextArray, 1014, 6, "character(2)[]"},
		{"text[]", row.TypeTextArray, 1009, -1, "text[]"},
		{"int4[]", row.TypeInt64Array, 1007, -1, "integer[]"},
	}
	for _, tc := range tests {
		tn := castTypeName(t, tc.typ)
		rt, err := TypeFromName(tn)
		if err != nil || rt != tc.row {
			t.Errorf("%s: row type %s, %v; want %s", tc.typ, rt, err, tc.row)
			continue
		}
		m, err := TypeModFromName(tn)
		if err != nil {
			t.Errorf("%s: %v", tc.typ, err)
			continue
		}
		oid, typmod := PGType(rt, IntWidthFromName(tn), m)
		if oid != tc.oid || typmod != tc.typmod {
			t.Errorf("%s: OID %d typmod %d, want %d %d", tc.typ, oid, typmod, tc.oid, tc.typmod)
		}
		if got := SQLTypeName(rt, IntWidthFromName(tn), m); got != tc.name {
			t.Errorf("%s: name %q, want %q", tc.typ, got, tc.name)
		}
	}
	for typ, code := range map[string]string{
		"varchar(0)":     sqlerr.InvalidParameterValue,
		"char(10485761)": sqlerr.InvalidParameterValue,
		"numeric(0)":     sqlerr.InvalidParameterValue,
		"numeric(1001)":  sqlerr.InvalidParameterValue,
		"numeric(5,6)":   sqlerr.FeatureNotSupported,
		"numeric(5,-1)":  sqlerr.FeatureNotSupported,
		"numeric(1,2,3)": sqlerr.SyntaxError,
	} {
		if _, err := TypeFromName(castTypeName(t, typ)); sqlerr.Code(err) != code {
			t.Errorf("%s: %v, want %s", typ, err, code)
		}
	}
}

func TestLiteralScale(t *testing.T) {
	for s, want := range map[string]int32{"1.50": 2, "1e3": 0, "1.5e-3": 4, "2.": 0, ".25": 2, "1.25E1": 1} {
		if got := literalScale(s); got != want {
			t.Errorf("literalScale(%s) = %d, want %d", s, got, want)
		}
	}
}
