package pgwire

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/pkg/sql/sqltest"
)

// TestStreamedSelect: with the backend's results streamed (as a spilled
// large peek is), a SELECT without ORDER BY is sent row by row with the
// finishing applied on the way and the count in its tag, over both
// protocols; ORDER BY still sorts; a portal fetched in parts still works;
// every peek result is closed.
func TestStreamedSelect(t *testing.T) {
	fake := sqltest.New()
	addr := startServerOn(t, fake, Config{})
	c := connect(t, addr, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mustExec := func(q string, args ...any) {
		t.Helper()
		if _, err := c.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec("CREATE TABLE kv (k bigint NOT NULL, v text)")
	for i := range 600 {
		mustExec("INSERT INTO kv VALUES ($1, $2)", i, fmt.Sprintf("v%d", i%7))
	}
	mustExec("CREATE INDEX kv_k ON kv (k)")
	fake.StreamPeeks()

	keys := func(q string, mode pgx.QueryExecMode) ([]int64, string) {
		t.Helper()
		rows, err := c.Query(ctx, q, mode)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var out []int64
		for rows.Next() {
			var k int64
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			out = append(out, k)
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out, rows.CommandTag().String()
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
		all, tag := keys("SELECT k FROM kv", mode)
		if len(all) != 600 || tag != "SELECT 600" {
			t.Fatalf("mode %v: %d rows, tag %q", mode, len(all), tag)
		}
		slices.Sort(all)
		if all[0] != 0 || all[599] != 599 {
			t.Fatalf("mode %v: rows %v...", mode, all[:3])
		}
		some, tag := keys("SELECT k FROM kv LIMIT 10 OFFSET 595", mode)
		if len(some) != 5 || tag != "SELECT 5" {
			t.Fatalf("mode %v: limit/offset gave %d rows, tag %q", mode, len(some), tag)
		}
		sorted, tag := keys("SELECT k FROM kv ORDER BY k DESC LIMIT 3", mode)
		if !slices.Equal(sorted, []int64{599, 598, 597}) || tag != "SELECT 3" {
			t.Fatalf("mode %v: ordered %v, tag %q", mode, sorted, tag)
		}
	}
	if n := fake.OpenPeeks(); n != 0 {
		t.Fatalf("%d peek results left open", n)
	}
}
