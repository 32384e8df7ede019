package pgwire

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPgxTimestampTZArrayRoundTrip: timestamptz[] (OID 1185) written with
// pgx's binary parameter and read back in binary (the instants) and in
// text (the elements in the session's TimeZone).
func TestPgxTimestampTZArrayRoundTrip(t *testing.T) {
	addr := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, addr, "")
	for _, q := range []string{"SET TimeZone = 'Asia/Kolkata'", "CREATE TABLE tza (id int, a timestamptz[])"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	in := []time.Time{time.Date(2024, 1, 2, 3, 4, 5, 250000, time.UTC), time.Date(1999, 12, 31, 23, 0, 0, 0, time.FixedZone("x", -5*3600))}
	if _, err := c.Exec(ctx, "INSERT INTO tza VALUES (1, $1), (2, '{}')", in); err != nil {
		t.Fatal(err)
	}
	// A text parameter's zone-less elements are local time in TimeZone,
	// also through a run-time cast of a text value.
	if _, err := c.Exec(ctx, "INSERT INTO tza VALUES (3, $1::text::timestamptz[])", pgx.QueryExecModeExec, `{"2024-01-02 08:34:05.00025"}`); err != nil {
		t.Fatal(err)
	}
	var first time.Time
	if err := c.QueryRow(ctx, "SELECT ($1::timestamptz[])[1]", pgx.QueryExecModeExec, `{"2024-01-02 08:34:05.00025"}`).Scan(&first); err != nil || !first.Equal(in[0]) {
		t.Errorf("text timestamptz[] parameter: %v, %v; want %v", first, err, in[0])
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		rows, err := c.Query(ctx, "SELECT a FROM tza ORDER BY id", mode)
		if err != nil {
			t.Fatal(err)
		}
		if oid := rows.FieldDescriptions()[0].DataTypeOID; oid != 1185 {
			t.Errorf("mode %v: OID %d, want 1185", mode, oid)
		}
		var got [][]time.Time
		for rows.Next() {
			var a []time.Time
			if err := rows.Scan(&a); err != nil {
				t.Fatalf("mode %v: scan: %v", mode, err)
			}
			got = append(got, a)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || len(got[0]) != 2 || !got[0][0].Equal(in[0]) || !got[0][1].Equal(in[1]) || len(got[1]) != 0 || len(got[2]) != 1 || !got[2][0].Equal(in[0]) {
			t.Errorf("mode %v: read %v, want %v and {}", mode, got, in)
		}
	}
	res, err := c.PgConn().Exec(ctx, "SELECT a FROM tza WHERE id = 1").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"2024-01-02 08:34:05.00025+05:30","2000-01-01 09:30:00+05:30"}`
	if got := string(res[0].Rows[0][0]); got != want {
		t.Errorf("text form %s, want %s", got, want)
	}
}
