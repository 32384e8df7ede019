package oracle

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// recursiveQueries are WITH RECURSIVE queries over the edge table rec_e:
// transitive closure (UNION over cycles), nodes reachable from node 1,
// walks of at most three edges counted with UNION ALL, and the closure
// restricted by a correlated EXISTS on the node table.
var recursiveQueries = []string{
	"WITH RECURSIVE r(a, b) AS (SELECT src, dst FROM rec_e UNION SELECT r.a, e.dst FROM r JOIN rec_e AS e ON r.b = e.src) SELECT * FROM r",
	"WITH RECURSIVE r(n) AS (SELECT 1::bigint UNION SELECT e.dst FROM r JOIN rec_e AS e ON e.src = r.n) SELECT n FROM r",
	"WITH RECURSIVE w(a, b, hops) AS (SELECT src, dst, 1 FROM rec_e UNION ALL SELECT w.a, e.dst, w.hops + 1 FROM w JOIN rec_e AS e ON e.src = w.b WHERE w.hops < 3) SELECT a, b, count(*) FROM w GROUP BY a, b",
	"WITH RECURSIVE r(n, d) AS (SELECT id, 0 FROM rec_n WHERE id = 2 UNION SELECT e.dst, r.d + 1 FROM r JOIN rec_e AS e ON e.src = r.n WHERE EXISTS (SELECT 1 FROM rec_n WHERE rec_n.id = e.dst) AND r.d < 5) SELECT n, min(d) FROM r GROUP BY n",
}

// randomGraphWrite draws one write to the edge or node table over nodes
// 1..6 (and NULL): inserts, deletes and updates.
func randomGraphWrite(r *rand.Rand) string {
	node := func() string {
		if r.IntN(12) == 0 {
			return "NULL"
		}
		return strconv.Itoa(1 + r.IntN(6))
	}
	switch r.IntN(7) {
	case 0, 1, 2:
		return fmt.Sprintf("INSERT INTO rec_e VALUES (%s, %s), (%s, %s)", node(), node(), node(), node())
	case 3:
		return fmt.Sprintf("DELETE FROM rec_e WHERE src = %s", node())
	case 4:
		return fmt.Sprintf("UPDATE rec_e SET dst = %s WHERE dst = %s", node(), node())
	case 5:
		return fmt.Sprintf("INSERT INTO rec_n VALUES (%s)", node())
	}
	return fmt.Sprintf("DELETE FROM rec_n WHERE id = %s", node())
}

// TestOracleSubscribeRecursive subscribes to WITH RECURSIVE queries over
// a graph that random writes (fixed seed) change, and checks after every
// write that the changes streamed so far add up to PostgreSQL's answer:
// the maintained fixed point follows inserts, deletes and updates of
// edges, retractions included. TANDEM_ORACLE_RECURSIVE_STEPS sets the
// number of writes (default 25), TANDEM_ORACLE_SEED the seed.
func TestOracleSubscribeRecursive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
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
	if _, err := admin.Exec(ctx, "CREATE DATABASE oracle_recursive"); err != nil {
		t.Fatal(err)
	}
	pconn, err := pg.Connect(ctx, "oracle_recursive")
	if err != nil {
		t.Fatal(err)
	}
	defer pconn.Close(ctx)
	tconn := tandemTarget(t, ctx)
	twriter, err := pgx.ConnectConfig(ctx, tconn.Config().Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer twriter.Close(ctx)
	both := func(sql string) {
		t.Helper()
		if _, err := twriter.Exec(ctx, sql); err != nil {
			t.Fatalf("tandem: %s: %v", sql, err)
		}
		if _, err := pconn.Exec(ctx, sql); err != nil {
			t.Fatalf("postgres: %s: %v", sql, err)
		}
	}
	both("CREATE TABLE rec_e (src bigint, dst bigint)")
	both("CREATE TABLE rec_n (id bigint)")
	both("INSERT INTO rec_e VALUES (1, 2), (2, 3), (3, 1)")
	both("INSERT INTO rec_n VALUES (1), (2), (3)")

	steps, seed := envInt(t, "TANDEM_ORACLE_RECURSIVE_STEPS", 25), envInt(t, "TANDEM_ORACLE_SEED", 14)
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	if _, err := tconn.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	defer tconn.Exec(context.Background(), "COMMIT")
	state := make([]map[string]int64, len(recursiveQueries))
	for i, q := range recursiveQueries {
		if _, err := tconn.Exec(ctx, fmt.Sprintf("DECLARE c%d CURSOR FOR SUBSCRIBE (%s)", i, q)); err != nil {
			t.Fatalf("tandem: subscribe to %s: %v", q, err)
		}
		state[i] = map[string]int64{}
	}
	for step := 0; step <= steps; step++ {
		w := ""
		if step > 0 {
			w = randomGraphWrite(r)
			both(w)
		}
		for i, q := range recursiveQueries {
			if got, want := followSubscribe(ctx, t, tconn.PgConn(), pconn.PgConn(), i, q, state[i]); !slices.Equal(got, want) {
				t.Fatalf("seed %d, after step %d (%q): SUBSCRIBE (%s)\n  tandem:   %q\n  postgres: %q", seed, step, w, q, got, want)
			}
		}
	}
}

// followSubscribe fetches cursor c<i> until its accumulated changes equal
// PostgreSQL's answer to q or 30 s pass, and returns both, sorted.
func followSubscribe(ctx context.Context, t *testing.T, tandem, postgres *pgconn.PgConn, i int, q string, state map[string]int64) (got, want []string) {
	t.Helper()
	want, code, err := execText(ctx, postgres, q)
	if err != nil || code != "" {
		t.Fatalf("postgres: %s: %v %s", q, err, code)
	}
	slices.Sort(want)
	deadline := time.Now().Add(30 * time.Second)
	for {
		rows, code, err := execText(ctx, tandem, fmt.Sprintf("FETCH ALL c%d WITH (timeout = '10ms')", i))
		if err != nil || code != "" {
			t.Fatalf("tandem: fetch %s: %v %s", q, err, code)
		}
		for _, r := range rows {
			parts := strings.SplitN(r, "|", 3) // mz_timestamp|mz_diff|columns...
			diff, err := strconv.ParseInt(parts[1], 10, 64)
			if err != nil || len(parts) != 3 {
				t.Fatalf("tandem: subscribe row %q", r)
			}
			state[parts[2]] += diff
		}
		got = expand(state)
		if slices.Equal(got, want) || time.Now().After(deadline) {
			return got, want
		}
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}
