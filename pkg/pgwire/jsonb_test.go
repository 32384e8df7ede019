package pgwire

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPgxJSONBRoundTrip writes jsonb through pgx's parameters (binary:
// version byte 1 and the text) and reads it back in binary and in text,
// with OID 3802 in RowDescription; malformed input is 22P02 and a binary
// jsonb of an unknown version is refused.
func TestPgxJSONBRoundTrip(t *testing.T) {
	addr := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, addr, "")
	if _, err := c.Exec(ctx, `CREATE TABLE docs (id int, doc jsonb)`); err != nil {
		t.Fatal(err)
	}
	in := map[string]any{"name": "a\"b", "n": 2.5, "tags": []any{"x", nil, true}, "nested": map[string]any{}}
	if _, err := c.Exec(ctx, `INSERT INTO docs VALUES (1, $1)`, in); err != nil {
		t.Fatal(err)
	}
	const want = `{"n": 2.5, "name": "a\"b", "tags": ["x", null, true], "nested": {}}`
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		rows, err := c.Query(ctx, `SELECT doc, doc -> 'tags' FROM docs`, mode)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range rows.FieldDescriptions() {
			if fd.DataTypeOID != 3802 {
				t.Errorf("mode %v column %s: OID %d, want 3802", mode, fd.Name, fd.DataTypeOID)
			}
		}
		var got map[string]any
		var tags []any
		if !rows.Next() {
			t.Fatalf("mode %v: no row: %v", mode, rows.Err())
		}
		if err := rows.Scan(&got, &tags); err != nil {
			t.Fatalf("mode %v: scan: %v", mode, err)
		}
		rows.Close()
		if got["name"] != "a\"b" || got["n"] != 2.5 || len(tags) != 3 || tags[0] != "x" || tags[1] != nil || tags[2] != true {
			t.Errorf("mode %v: got %v, %v", mode, got, tags)
		}
	}
	pc := c.PgConn()
	// Text result, and binary: version byte 1 then the text.
	for _, format := range []int16{0, 1} {
		res := pc.ExecParams(ctx, `SELECT doc FROM docs`, nil, nil, nil, []int16{format}).Read()
		if res.Err != nil || len(res.Rows) != 1 {
			t.Fatalf("format %d: %v", format, res.Err)
		}
		wantBytes := want
		if format == 1 {
			wantBytes = "\x01" + want
		}
		if got := string(res.Rows[0][0]); got != wantBytes {
			t.Errorf("format %d: %q, want %q", format, got, wantBytes)
		}
	}
	// A binary parameter with the version byte, and the errors.
	res := pc.ExecParams(ctx, `SELECT $1::jsonb -> 'k'`, [][]byte{[]byte("\x01{\"k\": [1.50]}")}, []uint32{3802}, []int16{1}, []int16{0}).Read()
	if res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != "[1.50]" {
		t.Fatalf("binary jsonb parameter: %v %q", res.Err, res.Rows)
	}
	for _, tc := range []struct {
		v      []byte
		format int16
		code   string
	}{
		{[]byte("\x02{}"), 1, "08P01"},
		{[]byte("{bad"), 0, "22P02"},
		{[]byte("\x01{bad"), 1, "22P02"},
	} {
		res := pc.ExecParams(ctx, `INSERT INTO docs VALUES (2, $1)`, [][]byte{tc.v}, []uint32{3802}, []int16{tc.format}, nil).Read()
		if pgCode(res.Err) != tc.code {
			t.Errorf("parameter %q (format %d): %v, want %s", tc.v, tc.format, res.Err, tc.code)
		}
	}
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM docs`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows after refused writes: %d, %v", n, err)
	}
}
