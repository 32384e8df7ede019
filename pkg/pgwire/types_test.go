package pgwire

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestPgxTypesRoundTrip writes a row of every type through pgx's
// parameters and reads it back, in the binary formats pgx uses in the
// extended protocol and in the text formats of the simple protocol, and
// checks each column's type OID and typmod in RowDescription.
func TestPgxTypesRoundTrip(t *testing.T) {
	addr := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, addr, "")
	if _, err := c.Exec(ctx, `CREATE TABLE every (i2 smallint, i4 int, i8 bigint, f float8, b boolean, t text,
		vc varchar(10), ch char(4), by bytea, ts timestamp, n numeric(10,2), nu numeric, u uuid)`); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2024, 2, 29, 12, 30, 45, 123456000, time.UTC)
	u := [16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}
	n := pgtype.Numeric{Int: big.NewInt(12345), Exp: -1, Valid: true} // 1234.5
	nu := pgtype.Numeric{Int: big.NewInt(-5), Exp: -30, Valid: true}
	if _, err := c.Exec(ctx, `INSERT INTO every VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		int16(-7), int32(2147483647), int64(-9), 1.5, true, "text", "varchar", "ab", []byte{0, 1, 0xff}, ts, n, nu, u); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `INSERT INTO every (n, nu, u) VALUES ($1, $2, $3)`,
		pgtype.Numeric{NaN: true, Valid: true}, pgtype.Numeric{InfinityModifier: pgtype.NegativeInfinity, Valid: true}, nil); err != nil {
		t.Fatal(err)
	}

	wantOIDs := []uint32{21, 23, 20, 701, 16, 25, 1043, 1042, 17, 1114, 1700, 1700, 2950}
	wantMods := []int32{-1, -1, -1, -1, -1, -1, 14, 8, -1, -1, 10<<16 | 2 + 4, -1, -1}
	wantText := "-7|2147483647|-9|1.5|t|text|varchar|ab  |\\x0001ff|2024-02-29 12:30:45.123456|1234.50|-0.000000000000000000000000000005|a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"

	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		rows, err := c.Query(ctx, `SELECT * FROM every WHERE i2 IS NOT NULL`, mode)
		if err != nil {
			t.Fatal(err)
		}
		for i, fd := range rows.FieldDescriptions() {
			if fd.DataTypeOID != wantOIDs[i] || fd.TypeModifier != wantMods[i] {
				t.Errorf("mode %v column %s: OID %d typmod %d, want %d %d", mode, fd.Name, fd.DataTypeOID, fd.TypeModifier, wantOIDs[i], wantMods[i])
			}
		}
		var (
			i2          int16
			i4          int32
			i8          int64
			f           float64
			b           bool
			tx, vc, ch  string
			by          []byte
			gotTS       time.Time
			gotN, gotNu pgtype.Numeric
			gotU        [16]byte
		)
		if !rows.Next() {
			t.Fatalf("mode %v: no row: %v", mode, rows.Err())
		}
		if err := rows.Scan(&i2, &i4, &i8, &f, &b, &tx, &vc, &ch, &by, &gotTS, &gotN, &gotNu, &gotU); err != nil {
			t.Fatalf("mode %v: scan: %v", mode, err)
		}
		rows.Close()
		if i2 != -7 || i4 != 2147483647 || i8 != -9 || f != 1.5 || !b || tx != "text" || vc != "varchar" || ch != "ab  " ||
			string(by) != "\x00\x01\xff" || !gotTS.Equal(ts) || gotU != u {
			t.Errorf("mode %v: got %v %v %v %v %v %q %q %q %x %v %x", mode, i2, i4, i8, f, b, tx, vc, ch, by, gotTS, gotU)
		}
		// numeric(10,2) keeps its scale on the wire: 123450e-2.
		if gotN.Int.Cmp(big.NewInt(123450)) != 0 || gotN.Exp != -2 {
			t.Errorf("mode %v: numeric(10,2) = %v e%d, want 123450e-2", mode, gotN.Int, gotN.Exp)
		}
		if gotNu.Int.Cmp(big.NewInt(-5)) != 0 || gotNu.Exp != -30 {
			t.Errorf("mode %v: numeric = %v e%d, want -5e-30", mode, gotNu.Int, gotNu.Exp)
		}
		var special pgtype.Numeric
		var negInf pgtype.Numeric
		if err := c.QueryRow(ctx, `SELECT n, nu FROM every WHERE i2 IS NULL`, mode).Scan(&special, &negInf); err != nil {
			t.Fatal(err)
		}
		if !special.NaN || negInf.InfinityModifier != pgtype.NegativeInfinity {
			t.Errorf("mode %v: NaN and -Infinity came back as %+v, %+v", mode, special, negInf)
		}
	}

	// The text form of every column, as psql would show it.
	res := c.PgConn().ExecParams(ctx, `SELECT * FROM every WHERE i2 IS NOT NULL`, nil, nil, nil, nil).Read()
	if res.Err != nil || len(res.Rows) != 1 {
		t.Fatalf("text read: %v (%d rows)", res.Err, len(res.Rows))
	}
	got := ""
	for i, v := range res.Rows[0] {
		if i > 0 {
			got += "|"
		}
		got += string(v)
	}
	if got != wantText {
		t.Errorf("text row\n got %s\nwant %s", got, wantText)
	}

	// Parameters bound in text format with explicit OIDs (numeric, uuid,
	// varchar, bpchar, int4), results asked for in binary.
	pc := c.PgConn()
	res = pc.ExecParams(ctx, `SELECT $1::numeric(6,3) + 1, $2::uuid, $3::varchar(3), $4::char(3), $5::int + 1`,
		[][]byte{[]byte("2.5"), []byte("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"), []byte("abcd"), []byte("x"), []byte("41")},
		[]uint32{1700, 2950, 1043, 1042, 23}, []int16{0}, []int16{1}).Read()
	if res.Err != nil || len(res.Rows) != 1 {
		t.Fatalf("text parameters: %v", res.Err)
	}
	var bn pgtype.Numeric
	if err := pgtype.NewMap().Scan(1700, pgtype.BinaryFormatCode, res.Rows[0][0], &bn); err != nil || bn.Int.Int64() != 3500 || bn.Exp != -3 {
		t.Errorf("binary numeric(6,3) result %v e%d, %v; want 3500e-3", bn.Int, bn.Exp, err)
	}
	if got := res.Rows[0][1]; string(got) != string(u[:]) {
		t.Errorf("binary uuid result %x", got)
	}
	if got := string(res.Rows[0][2]) + "|" + string(res.Rows[0][3]); got != "abc|x  " {
		t.Errorf("varchar/char results %q", got)
	}
	if got := res.Rows[0][4]; len(got) != 4 || got[3] != 42 {
		t.Errorf("binary int4 result %x, want 4 bytes 0000002a", got)
	}

	// Bad parameters are refused with PostgreSQL's codes, and nothing is
	// written.
	for _, tc := range []struct {
		sql  string
		arg  any
		code string
	}{
		{`INSERT INTO every (n) VALUES ($1)`, pgtype.Numeric{Int: big.NewInt(1), Exp: 9, Valid: true}, "22003"},
		{`INSERT INTO every (vc) VALUES ($1)`, "01234567890", "22001"},
		{`INSERT INTO every (u) VALUES ($1::text::uuid)`, "nope", "22P02"},
		{`INSERT INTO every (n) VALUES ($1::text::numeric)`, "12a", "22P02"},
	} {
		if _, err := c.Exec(ctx, tc.sql, tc.arg); pgCode(err) != tc.code {
			t.Errorf("%s with %v: %v, want %s", tc.sql, tc.arg, err, tc.code)
		}
	}
	var count int64
	if err := c.QueryRow(ctx, `SELECT count(*) FROM every`).Scan(&count); err != nil || count != 2 {
		t.Errorf("count = %d, %v; want 2", count, err)
	}
}
