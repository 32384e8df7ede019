package pgwire

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestCopyFromBinaryMoreTypes loads numeric, date, time, timestamptz,
// interval and array columns with pgx's CopyFrom (binary COPY FROM
// STDIN), NULLs included, and reads them back as text; a numeric too wide
// for its column, an int4[] element out of smallint[]'s range and a
// malformed field fail with PostgreSQL's codes and write nothing.
func TestCopyFromBinaryMoreTypes(t *testing.T) {
	c := connect(t, startServer(t, Config{}), "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, "SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "CREATE TABLE bc (id int, n numeric(8,2), u numeric, d date, tm time, tz timestamptz, iv interval, a int[], s smallint[], x text[], na numeric[])"); err != nil {
		t.Fatal(err)
	}
	var n1, n2 pgtype.Numeric
	if err := n1.Scan("1234.5"); err != nil {
		t.Fatal(err)
	}
	if err := n2.Scan("-0.000123456789"); err != nil {
		t.Fatal(err)
	}
	one, three := int32(1), int32(3)
	cols := []string{"id", "n", "u", "d", "tm", "tz", "iv", "a", "s", "x", "na"}
	rows := [][]any{
		{int32(1), n1, n2, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), pgtype.Time{Microseconds: (13*3600+4*60+5)*1e6 + 6, Valid: true},
			time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), pgtype.Interval{Months: 14, Days: 3, Microseconds: 4e6, Valid: true},
			[]*int32{&one, nil, &three}, []int16{-2, 7}, []string{"a b", ""}, []pgtype.Numeric{n1, n2}},
		{int32(2), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
	}
	if n, err := c.CopyFrom(ctx, pgx.Identifier{"bc"}, cols, pgx.CopyFromRows(rows)); err != nil || n != 2 {
		t.Fatalf("binary COPY: %d, %v", n, err)
	}
	res, err := c.PgConn().Exec(ctx, "SELECT n, u, d, tm, tz, iv, a, s, x, na FROM bc ORDER BY id").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res[0].Rows {
		var fields []string
		for _, v := range r {
			if v == nil {
				v = []byte("NULL")
			}
			fields = append(fields, string(v))
		}
		got = append(got, strings.Join(fields, "|"))
	}
	want := []string{
		`1234.50|-0.000123456789|2024-02-29|13:04:05.000006|2024-01-02 03:04:05+00|1 year 2 mons 3 days 00:00:04|{1,NULL,3}|{-2,7}|{"a b",""}|{1234.5,-0.000123456789}`,
		"NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var wide pgtype.Numeric
	if err := wide.Scan("12345678.5"); err != nil {
		t.Fatal(err)
	}
	_, err = c.CopyFrom(ctx, pgx.Identifier{"bc"}, []string{"id", "n"}, pgx.CopyFromRows([][]any{{int32(3), wide}}))
	if pgCode(err) != "22003" {
		t.Errorf("numeric too wide for numeric(8,2): %v, want 22003", err)
	}
	// Hand-made data for what pgx would refuse to send.
	int4Array := binary.BigEndian.AppendUint32(nil, 1)          // ndim
	int4Array = binary.BigEndian.AppendUint32(int4Array, 0)     // no NULLs
	int4Array = binary.BigEndian.AppendUint32(int4Array, 23)    // int4 elements
	int4Array = binary.BigEndian.AppendUint32(int4Array, 1)     // length
	int4Array = binary.BigEndian.AppendUint32(int4Array, 1)     // lower bound
	int4Array = binary.BigEndian.AppendUint32(int4Array, 4)     // element length
	int4Array = binary.BigEndian.AppendUint32(int4Array, 40000) // element
	for _, tc := range []struct {
		name, col string
		field     []byte
		code      string
	}{
		{"int4 element out of smallint[]", "s", int4Array, "22003"},
		{"date of 8 bytes", "d", make([]byte, 8), "22P03"},
		{"numeric of 3 bytes", "u", []byte{0, 1, 0}, "22P03"},
	} {
		data := binaryCopyRow([]byte{0, 0, 0, 3}, tc.field)
		_, err := c.PgConn().CopyFrom(ctx, bytes.NewReader(data), "COPY bc (id, "+tc.col+") FROM STDIN (FORMAT binary)")
		if pgCode(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM bc").Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows after refused COPYs: %d, %v", n, err)
	}
}

// binaryCopyRow is binary COPY data of one row of the given fields.
func binaryCopyRow(fields ...[]byte) []byte {
	out := append([]byte("PGCOPY\n\377\r\n\x00"), 0, 0, 0, 0, 0, 0, 0, 0)
	out = binary.BigEndian.AppendUint16(out, uint16(len(fields)))
	for _, f := range fields {
		out = binary.BigEndian.AppendUint32(out, uint32(len(f)))
		out = append(out, f...)
	}
	return binary.BigEndian.AppendUint16(out, 0xFFFF)
}
