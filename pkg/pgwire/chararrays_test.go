package pgwire

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPgxCharArraysRoundTrip: varchar[] (OID 1015), varchar(n)[] (1015,
// typmod n+4) and char(n)[] (1014, elements padded to n) written with
// pgx's binary text[] parameters and read back in binary and in text; an
// element too long for varchar(3) is 22001 and writes nothing.
func TestPgxCharArraysRoundTrip(t *testing.T) {
	addr := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, addr, "")
	if _, err := c.Exec(ctx, `CREATE TABLE carr (id int, v varchar[], v3 varchar(3)[], c character(3)[], x text[])`); err != nil {
		t.Fatal(err)
	}
	in := []string{"ab", "", "a b"}
	if _, err := c.Exec(ctx, `INSERT INTO carr VALUES (1, $1, $2, $3, $4), (2, '{}', '{}', '{}', '{}')`, in, []string{"ab", "xyz   "}, []string{"a", "ab ", "abc"}, in); err != nil {
		t.Fatal(err)
	}
	wantOIDs := []uint32{1015, 1015, 1014, 1009}
	wantMods := []int32{-1, 7, 7, -1}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		rows, err := c.Query(ctx, `SELECT v, v3, c, x FROM carr ORDER BY id`, mode)
		if err != nil {
			t.Fatal(err)
		}
		for i, fd := range rows.FieldDescriptions() {
			if fd.DataTypeOID != wantOIDs[i] || fd.TypeModifier != wantMods[i] {
				t.Errorf("mode %v column %s: OID %d typmod %d, want %d %d", mode, fd.Name, fd.DataTypeOID, fd.TypeModifier, wantOIDs[i], wantMods[i])
			}
		}
		for r := 0; rows.Next(); r++ {
			var gv, gv3, gc, gx []string
			if err := rows.Scan(&gv, &gv3, &gc, &gx); err != nil {
				t.Fatalf("mode %v: scan: %v", mode, err)
			}
			if r == 1 {
				if len(gv)+len(gv3)+len(gc)+len(gx) != 0 {
					t.Errorf("mode %v: empty arrays read as %q %q %q %q", mode, gv, gv3, gc, gx)
				}
				continue
			}
			if !slices.Equal(gv, in) || !slices.Equal(gx, in) || !slices.Equal(gv3, []string{"ab", "xyz"}) || !slices.Equal(gc, []string{"a  ", "ab ", "abc"}) {
				t.Errorf("mode %v: got %q %q %q %q", mode, gv, gv3, gc, gx)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("mode %v: %v", mode, err)
		}
	}
	var elem string
	if err := c.QueryRow(ctx, `SELECT c[1] FROM carr WHERE id = 1`).Scan(&elem); err != nil || elem != "a  " {
		t.Errorf("c[1] of char(3)[]: %q, %v; want %q", elem, err, "a  ")
	}
	if _, err := c.Exec(ctx, `INSERT INTO carr (id, v3) VALUES (3, $1)`, []string{"ok", "abcd"}); pgCode(err) != "22001" {
		t.Errorf("'abcd' into varchar(3)[]: %v, want 22001", err)
	}
	if _, err := c.Exec(ctx, `INSERT INTO carr (id, c) VALUES (3, '{abcd}')`); pgCode(err) != "22001" {
		t.Errorf("'abcd' into char(3)[]: %v, want 22001", err)
	}
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM carr`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows after refused writes: %d, %v", n, err)
	}
}
