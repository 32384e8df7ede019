package oracle

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestOracleSubscribe subscribes to queries using CTEs and subqueries and
// checks that, after each write, the changes streamed so far add up to
// what PostgreSQL answers for the same query: the maintained dataflow
// behind a SUBSCRIBE stays correct as its inputs change.
func TestOracleSubscribe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pg, err := StartPostgres(ctx, t.TempDir())
	if errors.Is(err, ErrNoPostgres) && os.Getenv("TANDEM_ORACLE_REQUIRED") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	admin, err := pg.Connect(ctx, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE oracle_subscribe"); err != nil {
		t.Fatal(err)
	}
	pconn, err := pg.Connect(ctx, "oracle_subscribe")
	if err != nil {
		t.Fatal(err)
	}
	defer pconn.Close(ctx)
	tconn := tandemTarget(t, ctx)
	// Writes go through a second session: the cursors' session is in a
	// transaction block, whose INSERTs would wait for COMMIT (and whose
	// UPDATEs and DELETEs are refused), as in PostgreSQL.
	twriter, err := pgx.ConnectConfig(ctx, tconn.Config().Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer twriter.Close(ctx)

	both := func(sql string) {
		t.Helper()
		for name, c := range map[string]func() error{
			"tandem":   func() error { _, err := twriter.Exec(ctx, sql); return err },
			"postgres": func() error { _, err := pconn.Exec(ctx, sql); return err },
		} {
			if err := c(); err != nil {
				t.Fatalf("%s: %s: %v", name, sql, err)
			}
		}
	}
	both("CREATE TABLE sub_acct (id bigint, owner text, balance bigint)")
	both("CREATE TABLE sub_blocked (owner text)")
	both("INSERT INTO sub_acct VALUES (1, 'ann', 100), (2, 'bob', 300)")

	queries := []string{
		"SELECT id FROM sub_acct WHERE owner NOT IN (SELECT owner FROM sub_blocked)",
		"SELECT id, owner IN (SELECT owner FROM sub_blocked) FROM sub_acct",
		"SELECT id, balance - (SELECT min(balance) FROM sub_acct) FROM sub_acct WHERE balance >= (SELECT avg(balance) FROM sub_acct)",
		"SELECT id FROM sub_acct a WHERE EXISTS (SELECT 1 FROM sub_blocked b WHERE b.owner = a.owner)",
		"WITH o AS (SELECT owner, balance FROM sub_acct) SELECT x.owner, y.balance FROM o x JOIN o y ON x.owner = y.owner WHERE NOT EXISTS (SELECT 1 FROM sub_blocked)",
	}
	writes := []string{
		"INSERT INTO sub_blocked VALUES ('bob')",
		"INSERT INTO sub_acct VALUES (3, 'cy', 50), (4, NULL, 700)",
		"INSERT INTO sub_blocked VALUES (NULL)",
		"DELETE FROM sub_blocked WHERE owner IS NULL",
		"UPDATE sub_acct SET balance = balance * 2 WHERE owner = 'ann'",
		"DELETE FROM sub_blocked",
		"DELETE FROM sub_acct WHERE id > 2",
	}
	// Cursors live in a transaction block.
	if _, err := tconn.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	defer tconn.Exec(context.Background(), "COMMIT")
	state := make([]map[string]int64, len(queries))
	for i, q := range queries {
		if _, err := tconn.Exec(ctx, fmt.Sprintf("DECLARE c%d CURSOR FOR SUBSCRIBE (%s)", i, q)); err != nil {
			t.Fatalf("tandem: subscribe to %s: %v", q, err)
		}
		state[i] = map[string]int64{}
	}
	// The first step checks the snapshot.
	for step, w := range append([]string{""}, writes...) {
		if w != "" {
			both(w)
		}
		for i, q := range queries {
			want, code, err := execText(ctx, pconn.PgConn(), q)
			if err != nil || code != "" {
				t.Fatalf("postgres: %s: %v %s", q, err, code)
			}
			slices.Sort(want)
			var got []string
			// Generous: against the real controller under a loaded CI
			// machine the subscription may lag the write by seconds.
			deadline := time.Now().Add(30 * time.Second)
			for {
				rows, code, err := execText(ctx, tconn.PgConn(), fmt.Sprintf("FETCH ALL c%d WITH (timeout = '100ms')", i))
				if err != nil || code != "" {
					t.Fatalf("tandem: fetch %s: %v %s", q, err, code)
				}
				for _, r := range rows {
					// mz_timestamp|mz_diff|columns...
					parts := strings.SplitN(r, "|", 3)
					diff, err := strconv.ParseInt(parts[1], 10, 64)
					if err != nil || len(parts) != 3 {
						t.Fatalf("tandem: subscribe row %q", r)
					}
					state[i][parts[2]] += diff
				}
				got = expand(state[i])
				if slices.Equal(got, want) || time.Now().After(deadline) {
					break
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("after step %d (%q): SUBSCRIBE (%s)\n  tandem:   %q\n  postgres: %q", step, w, q, got, want)
			}
		}
	}
}

// expand lists the rows of a multiset with their multiplicities, sorted;
// a negative multiplicity shows as a row prefixed with "-".
func expand(m map[string]int64) []string {
	var out []string
	for _, r := range slices.Sorted(maps.Keys(m)) {
		n := m[r]
		for ; n > 0; n-- {
			out = append(out, r)
		}
		for ; n < 0; n++ {
			out = append(out, "-"+r)
		}
	}
	slices.Sort(out)
	return out
}
