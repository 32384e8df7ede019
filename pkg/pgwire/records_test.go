package pgwire

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestPgxRecordColumns reads the columns SEARCH and CYCLE add: a record
// (OID 2249) and record[]s (OID 2287), described with those OIDs, in
// binary (extended protocol: record_send's field count, then per field
// its OID, length and bytes; array_send of records) decoded by pgx and
// by hand, and in text (simple protocol) as PostgreSQL prints them.
func TestPgxRecordColumns(t *testing.T) {
	addr := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, addr, "")
	const q = `WITH RECURSIVE t(n, s) AS (SELECT 1, 'a b' UNION ALL SELECT n + 1, NULL FROM t WHERE n < 2)
		SEARCH BREADTH FIRST BY n, s SET bfs CYCLE s SET c USING p SELECT bfs, p FROM t ORDER BY n`
	wantOIDs := []uint32{2249, 2287}

	// Binary.
	rows, err := c.Query(ctx, q, pgx.QueryExecModeCacheStatement)
	if err != nil {
		t.Fatal(err)
	}
	var raw [][][]byte
	for i, fd := range rows.FieldDescriptions() {
		if fd.DataTypeOID != wantOIDs[i] || fd.Format != pgx.BinaryFormatCode {
			t.Errorf("binary column %s: OID %d format %d, want OID %d in binary", fd.Name, fd.DataTypeOID, fd.Format, wantOIDs[i])
		}
	}
	for rows.Next() {
		var vals [][]byte
		for _, v := range rows.RawValues() {
			vals = append(vals, append([]byte(nil), v...))
		}
		raw = append(raw, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(raw) != 2 {
		t.Fatalf("%d rows", len(raw))
	}
	// The second row: ROW(1::bigint, 2, NULL) and {(a b), ()}.
	if got, want := decodeRecord(t, raw[1][0]), "[20:1 20:2 NULL]"; got != want {
		t.Errorf("binary record = %s, want %s", got, want)
	}
	if got, want := decodeRecordArray(t, raw[1][1]), "[[25:a b] [NULL]]"; got != want {
		t.Errorf("binary record[] = %s, want %s", got, want)
	}
	// pgx's own record codec reads the record.
	var seven int64
	var x string
	var null *int64
	if err := c.QueryRow(ctx, `SELECT ROW(7, 'x', NULL::int)`).Scan(pgtype.CompositeFields{&seven, &x, &null}); err != nil {
		t.Fatal(err)
	}
	if seven != 7 || x != "x" || null != nil {
		t.Errorf("pgx record = %d, %q, %v", seven, x, null)
	}

	// Text.
	rows, err = c.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for i, fd := range rows.FieldDescriptions() {
		if fd.DataTypeOID != wantOIDs[i] {
			t.Errorf("text column %s: OID %d, want %d", fd.Name, fd.DataTypeOID, wantOIDs[i])
		}
	}
	for rows.Next() {
		for _, v := range rows.RawValues() {
			text = append(text, string(v))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(text), `[(0,1,"a b") {"(\"a b\")"} (1,2,) {"(\"a b\")",()}]`; got != want {
		t.Errorf("text = %s, want %s", got, want)
	}
}

// decodeRecord reads record_send's form as OID:value pairs, text values
// for int8 and text fields.
func decodeRecord(t *testing.T, b []byte) string {
	t.Helper()
	n := int(binary.BigEndian.Uint32(b))
	b = b[4:]
	out := make([]string, n)
	for i := range n {
		oid, l := binary.BigEndian.Uint32(b), int32(binary.BigEndian.Uint32(b[4:]))
		b = b[8:]
		if l < 0 {
			out[i] = "NULL"
			continue
		}
		v := b[:l]
		b = b[l:]
		switch oid {
		case 20:
			out[i] = fmt.Sprintf("20:%d", int64(binary.BigEndian.Uint64(v)))
		default:
			out[i] = fmt.Sprintf("%d:%s", oid, v)
		}
	}
	if len(b) != 0 {
		t.Fatalf("record has %d trailing bytes", len(b))
	}
	return fmt.Sprint(out)
}

// decodeRecordArray reads array_send's form of a record[]: one
// dimension, element OID 2249.
func decodeRecordArray(t *testing.T, b []byte) string {
	t.Helper()
	ndim, elemOID := binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[8:])
	if ndim != 1 || elemOID != 2249 {
		t.Fatalf("record[]: %d dimensions, element OID %d", ndim, elemOID)
	}
	n := int(binary.BigEndian.Uint32(b[12:]))
	b = b[20:]
	out := make([]string, n)
	for i := range n {
		l := int(binary.BigEndian.Uint32(b))
		out[i] = decodeRecord(t, b[4:4+l])
		b = b[4+l:]
	}
	return fmt.Sprint(out)
}
