package pgwire

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPgxJSONArrayRoundTrip: json[] (OID 199) keeps each document's text
// as written through a binary array parameter (array_send's form with
// element OID 114), a text one and pgx's own encoding, and reads back in
// binary and text results with OID 199 (jsonb[] 3807), also from
// array_agg(json); a malformed element is 22P02 and nothing is written.
func TestPgxJSONArrayRoundTrip(t *testing.T) {
	addr := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, addr, "")
	if _, err := c.Exec(ctx, `CREATE TABLE ja (id int, js json[], bs jsonb[])`); err != nil {
		t.Fatal(err)
	}
	const d1, d2 = ` {"b" : 1, "a":[1,  2]} `, `"x"`
	// array_send: ndim, has-NULL, element OID, length, lower bound, then
	// each element as its length (-1: NULL) and its text.
	bin := binary.BigEndian.AppendUint32(nil, 1)
	bin = binary.BigEndian.AppendUint32(bin, 1)
	bin = binary.BigEndian.AppendUint32(bin, 114)
	bin = binary.BigEndian.AppendUint32(bin, 3)
	bin = binary.BigEndian.AppendUint32(bin, 1)
	for _, e := range []string{d1, "", d2} {
		if e == "" {
			bin = binary.BigEndian.AppendUint32(bin, 0xFFFFFFFF)
			continue
		}
		bin = binary.BigEndian.AppendUint32(bin, uint32(len(e)))
		bin = append(bin, e...)
	}
	pc := c.PgConn()
	text := []byte(`{" {\"b\" : 1, \"a\":[1,  2]} ",NULL,"\"x\""}`)
	for i, p := range []struct {
		v      []byte
		format int16
	}{{text, 0}, {bin, 1}} {
		res := pc.ExecParams(ctx, `INSERT INTO ja (id, js) VALUES ($1, $2)`, [][]byte{{byte('1' + i)}, p.v},
			[]uint32{20, 199}, []int16{0, p.format}, nil).Read()
		if res.Err != nil {
			t.Fatalf("json[] param format %d: %v", p.format, res.Err)
		}
	}
	if _, err := c.Exec(ctx, `INSERT INTO ja VALUES (3, $1, $2)`, []string{d2, `[1, 2]`}, []string{`{"b" : 1, "a": 2}`}); err != nil {
		t.Fatalf("pgx json[] and jsonb[] parameters: %v", err)
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		rows, err := c.Query(ctx, `SELECT js, bs FROM ja ORDER BY id`, mode)
		if err != nil {
			t.Fatal(err)
		}
		for i, fd := range rows.FieldDescriptions() {
			if want := []uint32{199, 3807}[i]; fd.DataTypeOID != want {
				t.Errorf("mode %v column %s: OID %d, want %d", mode, fd.Name, fd.DataTypeOID, want)
			}
		}
		var got [][]*string
		var gotB []*string
		for rows.Next() {
			var js, bs []*string
			if err := rows.Scan(&js, &bs); err != nil {
				t.Fatalf("mode %v: scan: %v", mode, err)
			}
			got, gotB = append(got, js), bs
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("mode %v: %v", mode, err)
		}
		if len(got) != 3 {
			t.Fatalf("mode %v: %d rows, want 3", mode, len(got))
		}
		for i, js := range got[:2] {
			if len(js) != 3 || js[0] == nil || *js[0] != d1 || js[1] != nil || js[2] == nil || *js[2] != d2 {
				t.Errorf("mode %v row %d: json[] %v, want [%q NULL %q]", mode, i+1, deref(js), d1, d2)
			}
		}
		if js := got[2]; len(js) != 2 || *js[0] != d2 || *js[1] != `[1, 2]` || len(gotB) != 1 || *gotB[0] != `{"a": 2, "b": 1}` {
			t.Errorf("mode %v row 3: json[] %v, jsonb[] %v", mode, deref(js), deref(gotB))
		}
	}
	// array_agg(json) is json[]; in binary each element is its text.
	res := pc.ExecParams(ctx, `SELECT array_agg(js[1] ORDER BY id) FROM ja`, nil, nil, nil, []int16{1}).Read()
	if res.Err != nil || len(res.Rows) != 1 || res.FieldDescriptions[0].DataTypeOID != 199 {
		t.Fatalf("array_agg(json): %v, %v", res.Err, res.FieldDescriptions)
	}
	if n := binary.BigEndian.Uint32(res.Rows[0][0][8:]); n != 114 {
		t.Errorf("array_agg(json) element OID %d, want 114", n)
	}
	if _, err := c.Exec(ctx, `INSERT INTO ja (id, js) VALUES (4, '{"{\"a\" 1}"}')`); pgCode(err) != "22P02" {
		t.Errorf("malformed json[] element: %v, want 22P02", err)
	}
	if got := count(t, c, "SELECT count(*) FROM ja"); got != 3 {
		t.Errorf("rows after a refused write: %d, want 3", got)
	}
}

func deref(ss []*string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "NULL"
		if s != nil {
			out[i] = *s
		}
	}
	return out
}
