package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/hack/bench/internal/report"
	"github.com/tandemdb/tandem/hack/bench/internal/stats"
	"github.com/tandemdb/tandem/pkg/sql/oracle"
)

// adhocParams sizes the ad-hoc comparison: the row counts of `big` (small
// has a tenth of them), and how often each query runs.
type adhocParams struct {
	sizes            []int
	partitions       int
	warmups, repeats int
}

func adhocSizes(e *env) adhocParams {
	return adhocParams{
		sizes:      pick(e, []int{1_000_000}, []int{1_000_000, 10_000_000}),
		partitions: 16,
		warmups:    2,
		repeats:    pick(e, 5, 9),
	}
}

// adhocQuery is one query of the scenario, the same text in both systems.
type adhocQuery struct{ name, sql string }

// adhocQueries are a count, a grouped aggregate, a filtered aggregate
// (the filter is not on the indexed key, so neither system can seek) and
// a join of the two relations on their indexed key (output: small's rows).
var adhocQueries = []adhocQuery{
	{"count", "SELECT count(*) FROM big"},
	{"group", "SELECT partition, count(*), sum(key) FROM big GROUP BY partition ORDER BY partition"},
	{"filtered", "SELECT count(*), sum(key) FROM big WHERE partition < 4"},
	{"join", "SELECT count(*), sum(big.partition) FROM big JOIN small ON big.key = small.key"},
}

// runAdhoc compares one-shot queries over Tandem's indexes with the same
// queries over PostgreSQL tables holding the same rows (key, key %
// partitions, a 16-byte value), serializable, size by size. PostgreSQL
// runs first and is stopped before Tandem starts; its answers are the
// reference Tandem's are checked against.
func runAdhoc(ctx context.Context, e *env) (*result, error) {
	p := adhocSizes(e)
	bindir, err := oracle.FindPostgres()
	if err != nil {
		return nil, fmt.Errorf("%w (install it with hack/postgres.sh)", err)
	}
	rep := &report.Report{}
	for _, n := range p.sizes {
		pgArm, answers, err := adhocPostgres(ctx, e, p, n, bindir)
		if err != nil {
			return &result{report: rep}, fmt.Errorf("postgres at %d rows: %w", n, err)
		}
		rep.Arms = append(rep.Arms, pgArm)
		for _, arm := range []struct {
			name        string
			interactive bool
		}{{"solo", false}, {"two_runtime", true}} {
			a, err := adhocTandem(ctx, e, p, n, arm.name, arm.interactive, answers)
			if err != nil {
				return &result{report: rep}, fmt.Errorf("tandem %s at %d rows: %w", arm.name, n, err)
			}
			rep.Arms = append(rep.Arms, a)
		}
	}
	return &result{report: rep}, nil
}

// adhocPostgres loads n rows into a throwaway PostgreSQL with its default
// settings, vacuums and analyses them, and times each query after warming
// the caches. It returns the arm and each query's answer.
func adhocPostgres(ctx context.Context, e *env, p adhocParams, n int, bindir string) (*report.Arm, map[string]string, error) {
	e.logf("adhoc: PostgreSQL (%s), %d rows", bindir, n)
	dir, err := os.MkdirTemp("", "tandem-bench-adhoc-pg-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	pg, err := oracle.StartPostgres(ctx, dir)
	if err != nil {
		return nil, nil, fmt.Errorf("start PostgreSQL: %w", err)
	}
	defer pg.Stop()
	conn, err := pg.Connect(ctx, "postgres")
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close(context.Background())
	load := func(table string, rows int) []string {
		return []string{
			fmt.Sprintf("CREATE TABLE %s (key bigint, partition bigint, value bytea)", table),
			fmt.Sprintf("INSERT INTO %s SELECT g, g %% %d, decode(substr(md5(g::text), 1, 32), 'hex') FROM generate_series(0, %d) AS g",
				table, p.partitions, rows-1),
			fmt.Sprintf("CREATE INDEX %s_key ON %s (key)", table, table),
			"VACUUM ANALYZE " + table,
		}
	}
	begin := time.Now()
	for _, s := range append(load("big", n), load("small", n/10)...) {
		if _, err := conn.Exec(ctx, s); err != nil {
			return nil, nil, fmt.Errorf("PostgreSQL setup %q: %w", s, err)
		}
	}
	e.logf("adhoc: PostgreSQL loaded in %.1fs", time.Since(begin).Seconds())
	a := report.NewArm(fmt.Sprintf("postgres_%s", rowsLabel(n)))
	answers, err := timeQueries(ctx, e, p, conn, a, nil)
	return a, answers, err
}

// adhocTandem creates the two relations as KEY VALUE sources indexed on
// key, waits for both indexes, and times each query on a serializable
// connection, checking every answer against PostgreSQL's.
func adhocTandem(ctx context.Context, e *env, p adhocParams, n int, name string, interactive bool, want map[string]string) (*report.Arm, error) {
	e.logf("adhoc: Tandem %s, %d rows", name, n)
	c, admin, stop, err := e.startWithAdmin(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	if err := setInteractive(ctx, e, c, admin, interactive); err != nil {
		return nil, err
	}
	begin := time.Now()
	for _, rel := range []struct {
		name string
		keys int
	}{{"big", n}, {"small", n / 10}} {
		if err := require(ctx, admin, "KEY VALUE load generator source", fmt.Sprintf(
			"CREATE SOURCE %s FROM LOAD GENERATOR KEY VALUE (KEYS %d, PARTITIONS %d, VALUE SIZE 16)", rel.name, rel.keys, p.partitions)); err != nil {
			return nil, err
		}
		if err := require(ctx, admin, "CREATE INDEX on a source", fmt.Sprintf("CREATE INDEX %s_key ON %s (key)", rel.name, rel.name)); err != nil {
			return nil, err
		}
		probe := fmt.Sprintf("SELECT value FROM %s WHERE key = %d", rel.name, rel.keys-1)
		if err := waitQuery(ctx, admin, "point read through a hydrated index", probe, 1, 30*time.Minute); err != nil {
			return nil, err
		}
	}
	a := report.NewArm(fmt.Sprintf("tandem_%s_%s", name, rowsLabel(n)))
	a.Float("hydration_s", time.Since(begin).Seconds())
	e.logf("adhoc: Tandem %s hydrated in %.1fs", name, time.Since(begin).Seconds())
	_, err = timeQueries(ctx, e, p, admin, a, want)
	return a, err
}

// timeQueries runs each query p.warmups times unmeasured and p.repeats
// times measured, one at a time, and records the latencies as QUERY_ms.
// With want, every answer must equal the reference; it returns the
// answers it saw.
func timeQueries(ctx context.Context, e *env, p adhocParams, conn *pgx.Conn, a *report.Arm, want map[string]string) (map[string]string, error) {
	got := map[string]string{}
	for _, q := range adhocQueries {
		var s stats.Series
		for i := range p.warmups + p.repeats {
			begin := time.Now()
			ans, err := answer(ctx, conn, q.sql)
			elapsed := time.Since(begin)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", q.name, err)
			}
			if w, ok := want[q.name]; ok && ans != w {
				return nil, fmt.Errorf("%s: answer %q, PostgreSQL's %q", q.name, ans, w)
			}
			got[q.name] = ans
			if i >= p.warmups {
				s.Record(elapsed)
			}
		}
		a.Latency(q.name+"_ms", s.Summary())
		e.logf("adhoc: %s %s: p50 %.1f ms (%s)", a.Name, q.name, float64(s.Quantile(0.5).Microseconds())/1000, ans(got[q.name]))
	}
	a.String("join_output_rows", strings.SplitN(got["join"], ",", 2)[0])
	return got, nil
}

// answer runs sql and returns its rows as text, rows separated by ";".
func answer(ctx context.Context, conn *pgx.Conn, sql string) (string, error) {
	rows, err := conn.Query(ctx, sql, pgx.QueryResultFormats{pgx.TextFormatCode})
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		for i, v := range rows.RawValues() {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(v)
		}
	}
	return b.String(), rows.Err()
}

// ans shortens an answer for the progress line.
func ans(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// rowsLabel names a size: 1M, 10M, 200k.
func rowsLabel(n int) string {
	if n%1_000_000 == 0 {
		return fmt.Sprintf("%dM", n/1_000_000)
	}
	return fmt.Sprintf("%dk", n/1000)
}
