package pgwire

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestSimpleProtocolPointReadsWithParseCache sends point reads with the
// simple protocol, the keys changing and keeping their length (each one
// after the first served from the connection's parse cache), and checks
// every answer, and that an error found after the literal is the same
// whether its statement was parsed or taken from the cache.
func TestSimpleProtocolPointReadsWithParseCache(t *testing.T) {
	addr := startServer(t, Config{})
	c := connect(t, addr, "default_query_exec_mode=simple_protocol")
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE kv (k bigint NOT NULL, v text)",
		"INSERT INTO kv SELECT g, 'v' || g FROM generate_series(10, 99) g",
		"CREATE INDEX kv_k ON kv (k)",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, k := range []int{42, 17, 99, 10, 55, 7, 42} {
		var v string
		err := c.QueryRow(ctx, fmt.Sprintf("SELECT v FROM kv WHERE k = %d", k)).Scan(&v)
		switch {
		case k < 10:
			if err == nil {
				t.Fatalf("k = %d: got %q, want no row", k, v)
			}
		case err != nil || v != fmt.Sprintf("v%d", k):
			t.Fatalf("k = %d: got %q, %v", k, v, err)
		}
	}
	var positions []int32
	for _, k := range []int{12, 34} {
		_, err := c.Exec(ctx, fmt.Sprintf("SELECT v FROM kv WHERE k = %d AND nosuch = 1", k))
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42703" {
			t.Fatalf("k = %d: got %v, want 42703", k, err)
		}
		positions = append(positions, pe.Position)
	}
	if positions[0] != positions[1] {
		t.Fatalf("error positions %v: want the same", positions)
	}
}
