package pgwire

import (
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestPgxNumericScaleRoundTrip writes numerics with trailing zeros through
// pgx's binary and text parameters into an unconstrained column and reads
// them back in both formats: the display scale (dscale) survives storage,
// the wire and computation (10.0/4 is 2.5000000000000000).
func TestPgxNumericScaleRoundTrip(t *testing.T) {
	addr := startServer(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := connect(t, addr, "")
	if _, err := c.Exec(ctx, `CREATE TABLE nsr (id int, x numeric)`); err != nil {
		t.Fatal(err)
	}
	// Binary parameters (pgx's extended protocol) and text ones (the
	// simple protocol interpolates them as literals).
	ins := []struct {
		mode pgx.QueryExecMode
		id   int
		x    any
	}{
		{pgx.QueryExecModeCacheStatement, 1, pgtype.Numeric{Int: big.NewInt(150), Exp: -2, Valid: true}},
		{pgx.QueryExecModeCacheStatement, 2, pgtype.Numeric{Int: big.NewInt(0), Exp: -3, Valid: true}},
		{pgx.QueryExecModeCacheStatement, 3, pgtype.Numeric{Int: big.NewInt(1), Exp: 2, Valid: true}},
		{pgx.QueryExecModeSimpleProtocol, 4, "-1.10"},
		{pgx.QueryExecModeSimpleProtocol, 5, "2.500"},
	}
	for _, in := range ins {
		if _, err := c.Exec(ctx, `INSERT INTO nsr VALUES ($1, $2::numeric)`, in.mode, in.id, in.x); err != nil {
			t.Fatalf("insert %d: %v", in.id, err)
		}
	}
	want := []struct {
		int int64
		exp int32
	}{{150, -2}, {0, -3}, {1, 2} /* 100 at scale 0: pgx reads it as 1e2 */, {-110, -2}, {2500, -3}, {25000000000000000, -16}}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		rows, err := c.Query(ctx, `SELECT x FROM nsr UNION ALL SELECT 10.0 / 4 ORDER BY 1 NULLS LAST`, mode)
		if err != nil {
			t.Fatal(err)
		}
		var got []pgtype.Numeric
		for rows.Next() {
			var n pgtype.Numeric
			if err := rows.Scan(&n); err != nil {
				t.Fatalf("mode %v: %v", mode, err)
			}
			got = append(got, n)
		}
		if rows.Err() != nil || len(got) != len(want) {
			t.Fatalf("mode %v: %d rows, %v", mode, len(got), rows.Err())
		}
		// In value order: -1.10, 0.000, 1.50, 2.500, 2.5000000000000000, 100.
		order := []int{3, 1, 0, 4, 5, 2}
		for i, n := range got {
			w := want[order[i]]
			if n.Int.Cmp(big.NewInt(w.int)) != 0 || n.Exp != w.exp {
				t.Errorf("mode %v row %d: %v e%d, want %d e%d", mode, i, n.Int, n.Exp, w.int, w.exp)
			}
		}
	}
}
