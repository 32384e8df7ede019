package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/hack/bench/internal/plot"
	"github.com/tandemdb/tandem/hack/bench/internal/report"
	"github.com/tandemdb/tandem/hack/bench/internal/stats"
	"github.com/tandemdb/tandem/pkg/sql/oracle"
)

// postgresParams sizes the side-by-side comparison.
type postgresParams struct {
	rows, groups int
	capacityFor  time.Duration
	warmup, run  time.Duration
	grace        time.Duration
	writes       int
}

func postgresSizes(e *env) postgresParams {
	return postgresParams{
		rows:        pick(e, 50_000, 200_000),
		groups:      1000,
		capacityFor: pick(e, 2*time.Second, 5*time.Second),
		warmup:      pick(e, 2*time.Second, 5*time.Second),
		run:         pick(e, 8*time.Second, 30*time.Second),
		grace:       pick(e, 5*time.Second, 10*time.Second),
		writes:      pick(e, 5, 20),
	}
}

// The shared schema: the same rows and the same aggregate in both systems.
const (
	pgCreateTable = "CREATE TABLE kv (k bigint, v bigint)"
	pgViewQuery   = "SELECT k %% %d AS g, count(*) AS n, sum(v) AS s FROM kv GROUP BY k %% %d"
)

// runPostgres compares a point read on Tandem's indexed aggregate view
// with the same read in PostgreSQL (computing the query, and from a
// materialized view), and freshness after a write: Tandem's incremental
// update seen through SUBSCRIBE against REFRESH MATERIALIZED VIEW.
func runPostgres(ctx context.Context, e *env) (*result, error) {
	p := postgresSizes(e)
	bindir, err := oracle.FindPostgres()
	if err != nil {
		return nil, fmt.Errorf("%w (install it with hack/postgres.sh)", err)
	}
	e.logf("postgres: using %s", bindir)
	rep := &report.Report{}
	var series []plot.Series

	// PostgreSQL first: it needs no build.
	pgDir, err := os.MkdirTemp("", "tandem-bench-pg-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(pgDir)
	pg, err := oracle.StartPostgres(ctx, pgDir)
	if err != nil {
		return nil, fmt.Errorf("start PostgreSQL: %w", err)
	}
	defer pg.Stop()
	pgConnect := func(ctx context.Context) (*pgx.Conn, error) { return pg.Connect(ctx, "postgres") }
	pgAdmin, err := pgConnect(ctx)
	if err != nil {
		return nil, err
	}
	defer pgAdmin.Close(context.Background())
	e.logf("postgres: loading %d rows into PostgreSQL", p.rows)
	view := fmt.Sprintf(pgViewQuery, p.groups, p.groups)
	for _, s := range []string{
		pgCreateTable,
		fmt.Sprintf("INSERT INTO kv SELECT g, g * 7 %% 1000 FROM generate_series(0, %d) AS g", p.rows-1),
		fmt.Sprintf("CREATE INDEX kv_g ON kv ((k %% %d))", p.groups),
		"CREATE MATERIALIZED VIEW agg_mv AS " + view,
		"CREATE INDEX agg_mv_g ON agg_mv (g)",
		"ANALYZE kv",
	} {
		if _, err := pgAdmin.Exec(ctx, s); err != nil {
			return nil, fmt.Errorf("PostgreSQL setup %q: %w", s, err)
		}
	}
	pgQuery := fmt.Sprintf("SELECT n, s FROM (%s) AS agg WHERE g = %%d", strings.ReplaceAll(view, "%", "%%"))
	for _, arm := range []struct{ name, sql string }{
		{"postgres_query", pgQuery},
		{"postgres_matview", "SELECT n, s FROM agg_mv WHERE g = %d"},
	} {
		e.logf("postgres/%s: point reads", arm.name)
		a, s, err := pointReadArm(ctx, e, p, arm.name, arm.sql, pgConnect)
		if err != nil {
			return nil, fmt.Errorf("arm %s: %w", arm.name, err)
		}
		if arm.name == "postgres_matview" {
			fresh, err := refreshFreshness(ctx, pgAdmin, p)
			if err != nil {
				return nil, fmt.Errorf("arm %s freshness: %w", arm.name, err)
			}
			a.Latency("freshness", fresh.Summary())
		}
		rep.Arms = append(rep.Arms, a)
		series = append(series, s)
	}

	// Tandem: the same rows through pgwire, the view indexed.
	c, err := e.startTandem(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Stop()
	tConnect := serializable(c)
	admin, err := tConnect(ctx)
	if err != nil {
		return nil, err
	}
	defer admin.Close(context.Background())
	if err := require(ctx, admin, "tables", pgCreateTable); err != nil {
		return nil, err
	}
	e.logf("postgres: loading %d rows into Tandem", p.rows)
	if err := insertRows(ctx, admin, p.rows); err != nil {
		return nil, &missingError{feature: "multi-row INSERT into a table", cause: err}
	}
	for _, s := range []struct{ feature, sql string }{
		{"CREATE VIEW with GROUP BY", "CREATE VIEW agg AS " + view},
		{"CREATE INDEX on a view", "CREATE INDEX agg_idx ON agg (g)"},
	} {
		if err := require(ctx, admin, s.feature, s.sql); err != nil {
			return nil, err
		}
	}
	if err := waitQuery(ctx, admin, "point read on an indexed aggregate view over a table", "SELECT n, s FROM agg WHERE g = 1", 1, 45*time.Second); err != nil {
		return nil, err
	}
	// How Tandem answers the read (fast-path peek of the index, or a
	// one-shot dataflow) decides its latency; the report says which.
	plan, err := explainFirstLine(ctx, admin, fmt.Sprintf("SELECT n, s FROM agg WHERE g = %d", 1))
	if err != nil {
		return nil, &missingError{feature: "EXPLAIN of a point read", cause: err}
	}
	e.logf("postgres/tandem: point reads (plan: %s)", plan)
	a, s, err := pointReadArm(ctx, e, p, "tandem", "SELECT n, s FROM agg WHERE g = %d", tConnect)
	if err != nil {
		return nil, fmt.Errorf("arm tandem: %w", err)
	}
	fresh, err := subscribeFreshness(ctx, tConnect, admin, p)
	if err != nil {
		return nil, fmt.Errorf("arm tandem freshness: %w", err)
	}
	a.Latency("freshness", fresh.Summary())
	a.String("plan", plan)
	rep.Arms = append([]*report.Arm{a}, rep.Arms...)
	series = append([]plot.Series{s}, series...)
	return &result{report: rep, figures: []figure{
		{"cdf", func(w ioWriter) error {
			return plot.CDF(w, "postgres: point read on an aggregate view, Tandem vs PostgreSQL", series)
		}},
	}}, nil
}

// insertRows loads rows 0..n-1 (k, k*7 % 1000) in multi-row INSERTs.
func insertRows(ctx context.Context, conn *pgx.Conn, n int) error {
	const batch = 1000
	for lo := 0; lo < n; lo += batch {
		var b strings.Builder
		b.WriteString("INSERT INTO kv VALUES ")
		for k := lo; k < min(lo+batch, n); k++ {
			if k > lo {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(%d,%d)", k, k*7%1000)
		}
		if _, err := conn.Exec(ctx, b.String()); err != nil {
			return fmt.Errorf("insert rows %d..: %w", lo, err)
		}
	}
	return nil
}

// pointReadArm measures point reads of random groups, open loop at 30% of
// capacity, after a discarded warm-up. sqlFmt takes the group as %d: the
// key is sent as a literal, as psql or a console sends it, in both systems.
func pointReadArm(ctx context.Context, e *env, p postgresParams, name, sqlFmt string, connect connector) (*report.Arm, plot.Series, error) {
	cl, err := openClients(ctx, 4, connect)
	if err != nil {
		return nil, plot.Series{}, err
	}
	defer cl.close()
	k := &readLoad{name: "point_read", workers: len(cl.conns), maxRate: 200, op: func(ctx context.Context, w int) error {
		g := rand.IntN(p.groups)
		n, err := cl.query(ctx, w, fmt.Sprintf(sqlFmt, g))
		if err == nil && n != 1 {
			err = fmt.Errorf("group %d: %d rows, want 1", g, n)
		}
		return err
	}}
	if err := k.measure(ctx, e, p.capacityFor); err != nil {
		return nil, plot.Series{}, err
	}
	origin := time.Now().Add(200 * time.Millisecond)
	samples, err := openLoop(ctx, []*readLoad{k}, origin, p.warmup+p.run, p.grace)
	if err != nil {
		return nil, plot.Series{}, err
	}
	measured := []phase{{"run", origin.Add(p.warmup), origin.Add(p.warmup + p.run)}}
	arm := report.NewArm(name)
	if err := addLoad(arm, "point_read", k, samples["point_read"], measured); err != nil {
		return nil, plot.Series{}, err
	}
	addRates(arm, k)
	return arm, plot.Series{Name: name, Points: points(samples["point_read"], origin)}, nil
}

// refreshFreshness times, per write, an INSERT and the REFRESH
// MATERIALIZED VIEW that makes it visible.
func refreshFreshness(ctx context.Context, conn *pgx.Conn, p postgresParams) (stats.Series, error) {
	var s stats.Series
	for i := range p.writes {
		begin := time.Now()
		if _, err := conn.Exec(ctx, "INSERT INTO kv VALUES ($1, 1)", p.rows+i); err != nil {
			return s, err
		}
		if _, err := conn.Exec(ctx, "REFRESH MATERIALIZED VIEW agg_mv"); err != nil {
			return s, err
		}
		s.Record(time.Since(begin))
	}
	return s, nil
}

// subscribeFreshness follows the view with SUBSCRIBE and times, per write,
// from the INSERT being sent until the updated aggregate arrives.
func subscribeFreshness(ctx context.Context, connect connector, admin *pgx.Conn, p postgresParams) (stats.Series, error) {
	var s stats.Series
	sub, err := connect(ctx)
	if err != nil {
		return s, err
	}
	defer sub.Close(context.Background())
	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &watchWriter{}
	errc := make(chan error, 1)
	go func() {
		_, err := sub.PgConn().CopyTo(subCtx, w, "COPY (SUBSCRIBE agg) TO STDOUT")
		errc <- err
	}()
	for i := range p.writes {
		k := p.rows + i
		g := k % p.groups
		var n int64
		if err := admin.QueryRow(ctx, "SELECT n FROM agg WHERE g = $1", g).Scan(&n); err != nil {
			return s, fmt.Errorf("read group %d: %w", g, err)
		}
		// The SUBSCRIBE row for the update carries the new count.
		want := fmt.Sprintf("\t%d\t%d\t", g, n+1)
		seen := w.await(want)
		begin := time.Now()
		if _, err := admin.Exec(ctx, "INSERT INTO kv VALUES ("+strconv.Itoa(k)+", 1)"); err != nil {
			return s, fmt.Errorf("insert: %w", err)
		}
		select {
		case <-seen:
			s.Record(time.Since(begin))
		case err := <-errc:
			return s, &missingError{feature: "COPY (SUBSCRIBE view) TO STDOUT", cause: err}
		case <-time.After(30 * time.Second):
			s.RecordCensored(time.Since(begin))
		case <-ctx.Done():
			return s, ctx.Err()
		}
	}
	return s, nil
}

// watchWriter receives SUBSCRIBE's COPY stream and signals when a
// line containing an awaited substring arrives.
type watchWriter struct {
	mu      sync.Mutex
	pending []byte
	want    string
	ch      chan struct{}
}

func (w *watchWriter) await(want string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.want, w.ch = want, make(chan struct{})
	return w.ch
}

func (w *watchWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending = append(w.pending, b...)
	for {
		i := bytes.IndexByte(w.pending, '\n')
		if i < 0 {
			break
		}
		line := "\t" + string(w.pending[:i]) + "\t"
		w.pending = w.pending[i+1:]
		if w.ch != nil && strings.Contains(line, w.want) {
			close(w.ch)
			w.ch = nil
		}
	}
	return len(b), nil
}

// explainFirstLine returns the top line of EXPLAIN's plan for sql.
func explainFirstLine(ctx context.Context, conn *pgx.Conn, sql string) (string, error) {
	var line string
	rows, err := conn.Query(ctx, "EXPLAIN "+sql)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	if rows.Next() {
		if err := rows.Scan(&line); err != nil {
			return "", err
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", err
	}
	return strings.TrimSpace(line), nil
}
