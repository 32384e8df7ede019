package pgwire

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// dtRow is one row of every date/time type as pgx scans it.
type dtRow struct {
	d  pgtype.Date
	t  pgtype.Time
	ts pgtype.Timestamp
	tz pgtype.Timestamptz
	iv pgtype.Interval
}

// TestPgxDateTimeRoundTrip writes every date/time type as pgx parameters
// (binary, then text through the simple protocol) and reads it back in
// the binary and the text result formats.
func TestPgxDateTimeRoundTrip(t *testing.T) {
	c := connect(t, startServer(t, Config{}), "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, "CREATE TABLE dt (k bigint NOT NULL, d date, t time, ts timestamp, tz timestamptz, iv interval)"); err != nil {
		t.Fatal(err)
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	rows := []dtRow{
		{
			d:  pgtype.Date{Time: time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), Valid: true},
			t:  pgtype.Time{Microseconds: 3*3600e6 + 4*60e6 + 5_678_000, Valid: true},
			ts: pgtype.Timestamp{Time: time.Date(2024, 1, 2, 3, 4, 5, 678_901_000, time.UTC), Valid: true},
			tz: pgtype.Timestamptz{Time: time.Date(2024, 7, 2, 3, 4, 5, 0, ny), Valid: true},
			iv: pgtype.Interval{Months: 14, Days: -3, Microseconds: 4*3600e6 + 5, Valid: true},
		},
		{
			d:  pgtype.Date{Time: time.Date(-43, 3, 15, 0, 0, 0, 0, time.UTC), Valid: true}, // 44 BC
			t:  pgtype.Time{Microseconds: 24 * 3600e6, Valid: true},
			ts: pgtype.Timestamp{InfinityModifier: pgtype.NegativeInfinity, Valid: true},
			tz: pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true},
			iv: pgtype.Interval{Valid: true},
		},
		{
			d: pgtype.Date{InfinityModifier: pgtype.Infinity, Valid: true},
		},
	}
	for i, r := range rows {
		if _, err := c.Exec(ctx, "INSERT INTO dt VALUES ($1, $2, $3, $4, $5, $6)", i, r.d, r.t, r.ts, r.tz, r.iv); err != nil {
			t.Fatalf("insert row %d (binary parameters): %v", i, err)
		}
		if _, err := c.Exec(ctx, "INSERT INTO dt VALUES ($1, $2, $3, $4, $5, $6)", pgx.QueryExecModeSimpleProtocol, i+10, r.d, r.t, r.ts, r.tz, r.iv); err != nil {
			t.Fatalf("insert row %d (text literals): %v", i, err)
		}
	}
	for _, zone := range []string{"UTC", "America/New_York", "Asia/Kolkata"} {
		if _, err := c.Exec(ctx, "SET TimeZone = '"+zone+"'"); err != nil {
			t.Fatal(err)
		}
		for _, format := range []int16{pgx.BinaryFormatCode, pgx.TextFormatCode} {
			for i, want := range rows {
				for _, k := range []int{i, i + 10} {
					var got dtRow
					err := c.QueryRow(ctx, "SELECT d, t, ts, tz, iv FROM dt WHERE k = $1", pgx.QueryResultFormats{format}, k).
						Scan(&got.d, &got.t, &got.ts, &got.tz, &got.iv)
					if err != nil {
						t.Fatalf("zone %s format %d row %d: %v", zone, format, k, err)
					}
					checkDTRow(t, got, want, zone, format, k)
				}
			}
		}
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM dt WHERE d = $1 AND iv = $2", rows[0].d, pgtype.Interval{Days: 417, Microseconds: 4*3600e6 + 5, Valid: true}).Scan(&n); err != nil || n != 2 {
		t.Fatalf("parameters in comparisons (14 mons -3 days = 417 days): %d rows, %v", n, err)
	}
	for q, code := range map[string]string{
		"SELECT '2024-02-30'::date":        "22008",
		"SELECT 'soon'::timestamp":         "22007",
		"SET TimeZone = 'Atlantis/Center'": "22023",
		"CREATE VIEW v AS SELECT now()":    "0A000",
	} {
		if _, err := c.Exec(ctx, q); pgCode(err) != code {
			t.Errorf("%s: %v, want %s", q, err, code)
		}
	}
}

func checkDTRow(t *testing.T, got, want dtRow, zone string, format int16, k int) {
	t.Helper()
	same := func(a, b time.Time) bool { return a.Equal(b) }
	ok := got.d.Valid == want.d.Valid && got.d.InfinityModifier == want.d.InfinityModifier &&
		(!want.d.Valid || want.d.InfinityModifier != pgtype.Finite || same(got.d.Time, want.d.Time))
	ok = ok && got.t == want.t && got.iv == want.iv
	ok = ok && got.ts.Valid == want.ts.Valid && got.ts.InfinityModifier == want.ts.InfinityModifier &&
		(!want.ts.Valid || want.ts.InfinityModifier != pgtype.Finite || same(got.ts.Time, want.ts.Time))
	ok = ok && got.tz.Valid == want.tz.Valid && got.tz.InfinityModifier == want.tz.InfinityModifier &&
		(!want.tz.Valid || want.tz.InfinityModifier != pgtype.Finite || same(got.tz.Time, want.tz.Time))
	if !ok {
		t.Errorf("zone %s format %d row %d:\n got %+v\nwant %+v", zone, format, k, got, want)
	}
}
