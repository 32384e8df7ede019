package pgwire

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPgxArrayRoundTrip writes arrays through pgx's binary parameters and
// reads them back in binary (extended protocol) and in text (simple
// protocol), with the array OIDs in RowDescription, NULL elements and an
// empty array; a malformed literal is 22P02 and writes nothing.
func TestPgxArrayRoundTrip(t *testing.T) {
	addr := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, addr, "")
	if _, err := c.Exec(ctx, `CREATE TABLE arrs (id int, a int[], s smallint[], g bigint[], f float8[], n numeric[], x text[], b bool[])`); err != nil {
		t.Fatal(err)
	}
	one, three := int32(1), int32(3)
	a := []*int32{&one, nil, &three}
	s := []int16{-2, 32767}
	g := []int64{1 << 40}
	f := []float64{1.5, -0.25}
	x := []string{"a b", "", "NULL", `q"\`}
	b := []bool{true, false}
	if _, err := c.Exec(ctx, `INSERT INTO arrs VALUES (1, $1, $2, $3, $4, '{1.5,-2}', $5, $6), (2, '{}', '{}', '{}', '{}', '{}', '{}', '{}')`, a, s, g, f, x, b); err != nil {
		t.Fatal(err)
	}
	wantOIDs := []uint32{1007, 1005, 1016, 1022, 1231, 1009, 1000}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		rows, err := c.Query(ctx, `SELECT a, s, g, f, n, x, b FROM arrs ORDER BY id`, mode)
		if err != nil {
			t.Fatal(err)
		}
		for i, fd := range rows.FieldDescriptions() {
			if fd.DataTypeOID != wantOIDs[i] {
				t.Errorf("mode %v column %s: OID %d, want %d", mode, fd.Name, fd.DataTypeOID, wantOIDs[i])
			}
		}
		for r := 0; rows.Next(); r++ {
			var ga []*int32
			var gs []int16
			var gg []int64
			var gf []float64
			var gn []string
			var gx []string
			var gb []bool
			if err := rows.Scan(&ga, &gs, &gg, &gf, &gn, &gx, &gb); err != nil {
				t.Fatalf("mode %v: scan: %v", mode, err)
			}
			if r == 1 {
				if len(ga)+len(gs)+len(gg)+len(gf)+len(gn)+len(gx)+len(gb) != 0 {
					t.Errorf("mode %v: empty arrays read as %v %v %v %v %v %v %v", mode, ga, gs, gg, gf, gn, gx, gb)
				}
				continue
			}
			if len(ga) != 3 || ga[0] == nil || *ga[0] != 1 || ga[1] != nil || ga[2] == nil || *ga[2] != 3 {
				t.Errorf("mode %v: int4[] %v", mode, ga)
			}
			if !slices.Equal(gs, s) || !slices.Equal(gg, g) || !slices.Equal(gf, f) || !slices.Equal(gx, x) || !slices.Equal(gb, b) {
				t.Errorf("mode %v: got %v %v %v %v %v", mode, gs, gg, gf, gx, gb)
			}
			if !slices.Equal(gn, []string{"1.5", "-2"}) {
				t.Errorf("mode %v: numeric[] %v", mode, gn)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("mode %v: %v", mode, err)
		}
	}
	// x = ANY($1) with a binary int4[] parameter, and in text.
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		var ids []int32
		rows, err := c.Query(ctx, `SELECT id FROM arrs WHERE id = ANY($1) ORDER BY id`, mode, []int32{2, 5})
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int32
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if rows.Err() != nil || !slices.Equal(ids, []int32{2}) {
			t.Errorf("mode %v: id = ANY($1): %v, %v", mode, ids, rows.Err())
		}
	}
	if _, err := c.Exec(ctx, `INSERT INTO arrs (id, a) VALUES (3, $1)`, "{1,x}"); pgCode(err) != "22P02" {
		t.Errorf("malformed int[] parameter: %v, want 22P02", err)
	}
	if _, err := c.Exec(ctx, `INSERT INTO arrs (id, s) VALUES (3, $1)`, []int32{40000}); pgCode(err) != "22003" {
		t.Errorf("40000 into smallint[]: %v, want 22003", err)
	}
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM arrs`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows after refused writes: %d, %v", n, err)
	}
}

// TestPgxMoreArrayTypesRoundTrip: arrays of date, timestamp, uuid,
// bytea and jsonb through pgx's binary parameters, read back in binary
// and in text with PostgreSQL's OIDs (1182, 1115, 2951, 1001, 3807).
func TestPgxMoreArrayTypesRoundTrip(t *testing.T) {
	addr := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, addr, "")
	if _, err := c.Exec(ctx, `CREATE TABLE marr (id int, d date[], ts timestamp[], u uuid[], b bytea[], j jsonb[])`); err != nil {
		t.Fatal(err)
	}
	d := []time.Time{time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC)}
	ts := []time.Time{time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC)}
	u := [][16]byte{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}
	b := [][]byte{{0, 1, 0xff}, {}}
	if _, err := c.Exec(ctx, `INSERT INTO marr VALUES (1, $1, $2, $3, $4, '{"{\"a\": [1, null]}",NULL,"2.50"}'), (2, '{}', '{}', '{}', '{}', '{}')`, d, ts, u, b); err != nil {
		t.Fatal(err)
	}
	wantOIDs := []uint32{1182, 1115, 2951, 1001, 3807}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		rows, err := c.Query(ctx, `SELECT d, ts, u, b, j FROM marr ORDER BY id`, mode)
		if err != nil {
			t.Fatal(err)
		}
		for i, fd := range rows.FieldDescriptions() {
			if fd.DataTypeOID != wantOIDs[i] {
				t.Errorf("mode %v column %s: OID %d, want %d", mode, fd.Name, fd.DataTypeOID, wantOIDs[i])
			}
		}
		for r := 0; rows.Next(); r++ {
			var gd, gts []time.Time
			var gu [][16]byte
			var gb [][]byte
			var gj []*string
			if err := rows.Scan(&gd, &gts, &gu, &gb, &gj); err != nil {
				t.Fatalf("mode %v: scan: %v", mode, err)
			}
			if r == 1 {
				if len(gd)+len(gts)+len(gu)+len(gb)+len(gj) != 0 {
					t.Errorf("mode %v: empty arrays read as %v %v %v %v %v", mode, gd, gts, gu, gb, gj)
				}
				continue
			}
			if len(gd) != 2 || !gd[0].Equal(d[0]) || !gd[1].Equal(d[1]) || len(gts) != 1 || !gts[0].Equal(ts[0]) {
				t.Errorf("mode %v: date[] %v, timestamp[] %v", mode, gd, gts)
			}
			if len(gu) != 1 || gu[0] != u[0] || len(gb) != 2 || string(gb[0]) != string(b[0]) || len(gb[1]) != 0 {
				t.Errorf("mode %v: uuid[] %v, bytea[] %v", mode, gu, gb)
			}
			if len(gj) != 3 || gj[0] == nil || *gj[0] != `{"a": [1, null]}` || gj[1] != nil || gj[2] == nil || *gj[2] != "2.50" {
				t.Errorf("mode %v: jsonb[] %v", mode, gj)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("mode %v: %v", mode, err)
		}
	}
	if _, err := c.Exec(ctx, `INSERT INTO marr (id, d) VALUES (3, '{2024-13-01}')`); pgCode(err) == "" {
		t.Errorf("malformed date[] literal: %v, want an error", err)
	}
}

// TestCopyArraysText: text COPY reads array columns with array_in (an
// int4[] element out of range is 22003 and the COPY writes nothing).
func TestCopyArraysText(t *testing.T) {
	c := connect(t, startServer(t, Config{}), "")
	ctx := context.Background()
	if _, err := c.Exec(ctx, "CREATE TABLE ca (id int, a int[], b text[])"); err != nil {
		t.Fatal(err)
	}
	tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader("1\t{1,NULL}\t{\"a b\",c}\n2\t{}\t\\N\n"), "COPY ca FROM STDIN")
	if err != nil || tag.RowsAffected() != 2 {
		t.Fatalf("text COPY: %v %v", tag, err)
	}
	var a, b string
	if err := c.QueryRow(ctx, "SELECT a::text, b::text FROM ca WHERE id = 1").Scan(&a, &b); err != nil || a != "{1,NULL}" || b != `{"a b",c}` {
		t.Fatalf("copied arrays: %q %q %v", a, b, err)
	}
	_, err = c.PgConn().CopyFrom(ctx, strings.NewReader("3\t{1}\t{}\n4\t{9000000000}\t{}\n"), "COPY ca FROM STDIN")
	if pgCode(err) != "22003" {
		t.Fatalf("int4[] element out of range: %v, want 22003", err)
	}
	if got := count(t, c, "SELECT count(*) FROM ca"); got != 2 {
		t.Fatalf("rows: %d, want 2", got)
	}
}
