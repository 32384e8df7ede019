package pgwire

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestPgxJSONRoundTrip: json (OID 114) keeps the document's text as
// written through pgx's parameters (text and binary: binary json is the
// text) and back in text and binary results; malformed input is 22P02
// and nothing is written.
func TestPgxJSONRoundTrip(t *testing.T) {
	addr := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, addr, "")
	if _, err := c.Exec(ctx, `CREATE TABLE js (id int, j json)`); err != nil {
		t.Fatal(err)
	}
	const doc = ` {"b" : 1, "a":[1,  2], "a": "x"} `
	pc := c.PgConn()
	// A text parameter and a binary one (OID 114: the text).
	for i, format := range []int16{0, 1} {
		res := pc.ExecParams(ctx, `INSERT INTO js VALUES ($1, $2)`, [][]byte{{byte('1' + i)}, []byte(doc)},
			[]uint32{20, 114}, []int16{0, format}, nil).Read()
		if res.Err != nil {
			t.Fatalf("param format %d: %v", format, res.Err)
		}
	}
	for _, format := range []int16{0, 1} {
		res := pc.ExecParams(ctx, `SELECT j, j -> 'a' FROM js ORDER BY id`, nil, nil, nil, []int16{format}).Read()
		if res.Err != nil || len(res.Rows) != 2 {
			t.Fatalf("format %d: %v (%d rows)", format, res.Err, len(res.Rows))
		}
		for _, fd := range res.FieldDescriptions {
			if fd.DataTypeOID != 114 {
				t.Errorf("format %d column %s: OID %d, want 114", format, fd.Name, fd.DataTypeOID)
			}
		}
		for _, r := range res.Rows {
			if string(r[0]) != doc || string(r[1]) != `"x"` {
				t.Errorf("format %d: got %q, %q; want %q, %q", format, r[0], r[1], doc, `"x"`)
			}
		}
	}
	// pgx's own json parameter and result decoding.
	if _, err := c.Exec(ctx, `INSERT INTO js VALUES (3, $1)`, map[string]any{"k": []any{1.5, nil}}); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		var got map[string]any
		if err := c.QueryRow(ctx, `SELECT j FROM js WHERE id = 3`, mode).Scan(&got); err != nil {
			t.Fatalf("mode %v: %v", mode, err)
		}
		if k, _ := got["k"].([]any); len(k) != 2 || k[0] != 1.5 || k[1] != nil {
			t.Errorf("mode %v: got %v", mode, got)
		}
	}
	res := pc.ExecParams(ctx, `INSERT INTO js VALUES (4, $1)`, [][]byte{[]byte(`{"a" 1}`)}, []uint32{114}, []int16{1}, nil).Read()
	var pgErr *pgconn.PgError
	if !errors.As(res.Err, &pgErr) || pgErr.Code != "22P02" {
		t.Errorf("malformed binary json: %v, want 22P02", res.Err)
	}
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM js`).Scan(&n); err != nil || n != 3 {
		t.Errorf("count %d, %v; want 3", n, err)
	}
	// pgx's CopyFrom sends json in binary: the text, validated.
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"js"}, []string{"id", "j"}, pgx.CopyFromRows([][]any{{5, json.RawMessage(doc)}})); err != nil {
		t.Fatalf("copy: %v", err)
	}
	var got string
	if err := c.QueryRow(ctx, `SELECT j::text FROM js WHERE id = 5`).Scan(&got); err != nil || got != doc {
		t.Errorf("copied %q, %v; want %q", got, err, doc)
	}
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"js"}, []string{"id", "j"}, pgx.CopyFromRows([][]any{{6, json.RawMessage(`{"a" 1}`)}})); !errors.As(err, &pgErr) || pgErr.Code != "22P02" {
		t.Errorf("copy of malformed json: %v, want 22P02", err)
	}
}
