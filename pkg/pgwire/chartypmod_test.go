package pgwire

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestCharArrayResultTypes pins how results mixing char(n) values are
// described and padded, as PostgreSQL 15 does: array_agg of a char(n)
// column is bpchar[] with typmod -1 (a function's result), ARRAY[...] of
// one char(n) is char(n)[] (typmod n+4), and ARRAY[...] led by a char(n)
// value is a bpchar[] whose char elements keep their own padding while a
// text or varchar one first makes a text[] or varchar[] of unpadded
// values. Both wire formats.
func TestCharArrayResultTypes(t *testing.T) {
	addr := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, addr, "")
	if _, err := c.Exec(ctx, `CREATE TABLE cmix (c char(4), d char(2), v varchar(3), t text)`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `INSERT INTO cmix VALUES ('ab', 'x', 'vv', 'tt')`); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query  string
		oid    uint32
		typmod int32
		want   []string
	}{
		{`SELECT array_agg(c) FROM cmix`, 1014, -1, []string{"ab  "}},
		{`SELECT ARRAY[c, c] FROM cmix`, 1014, 8, []string{"ab  ", "ab  "}},
		{`SELECT ARRAY[c, t] FROM cmix`, 1014, -1, []string{"ab  ", "tt"}},
		{`SELECT ARRAY[c, d, NULL] FROM cmix`, 1014, -1, []string{"ab  ", "x ", ""}},
		{`SELECT ARRAY['z', c] FROM cmix`, 1014, -1, []string{"z", "ab  "}},
		{`SELECT ARRAY[v, c] FROM cmix`, 1015, -1, []string{"vv", "ab"}},
		{`SELECT ARRAY[t, c] FROM cmix`, 1009, -1, []string{"tt", "ab"}},
	}
	for _, tc := range tests {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
			rows, err := c.Query(ctx, tc.query, mode)
			if err != nil {
				t.Fatalf("%s: %v", tc.query, err)
			}
			fd := rows.FieldDescriptions()[0]
			if fd.DataTypeOID != tc.oid || fd.TypeModifier != tc.typmod {
				t.Errorf("%s (mode %v): OID %d typmod %d, want %d %d", tc.query, mode, fd.DataTypeOID, fd.TypeModifier, tc.oid, tc.typmod)
			}
			var got []*string
			for rows.Next() {
				if err := rows.Scan(&got); err != nil {
					t.Fatalf("%s (mode %v): %v", tc.query, mode, err)
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatalf("%s (mode %v): %v", tc.query, mode, err)
			}
			flat := make([]string, len(got))
			for i, s := range got {
				if s != nil {
					flat[i] = *s
				}
			}
			if !slices.Equal(flat, tc.want) {
				t.Errorf("%s (mode %v): %q, want %q", tc.query, mode, flat, tc.want)
			}
		}
	}
}
