package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/hack/bench/internal/plot"
	"github.com/tandemdb/tandem/hack/bench/internal/report"
	"github.com/tandemdb/tandem/hack/bench/internal/stats"
)

// slowPathQuery joins two indexed sources and aggregates: no index answers
// it, so every execution builds, runs and drops a one-shot dataflow.
const slowPathQuery = "SELECT l.partition, count(*) FROM l JOIN r ON l.key = r.key GROUP BY l.partition"

// runTemporary measures slow-path SELECTs (temporary one-shot dataflows)
// quiet and during hydration churn, on each runtime, and the fixed cost of
// creating and dropping a one-shot dataflow.
func runTemporary(ctx context.Context, e *env) (*result, error) {
	return runRuntimeArms(ctx, e, "temporary",
		"temporary: slow-path SELECT (join + aggregate) while an index hydrates",
		"temporary: slow-path SELECT latency CDF", oneSeries(temporaryArm))
}

func temporaryArm(ctx context.Context, e *env, p isolationParams, name string, interactive bool) (*report.Arm, plot.Series, []plot.Phase, error) {
	joinKeys := pick(e, 2000, 10000)
	c, admin, err := startChurnArm(ctx, e, p, interactive, []stmt{
		{"KEY VALUE load generator source", fmt.Sprintf("CREATE SOURCE l FROM LOAD GENERATOR KEY VALUE (KEYS %d, PARTITIONS 10)", joinKeys)},
		{"KEY VALUE load generator source", fmt.Sprintf("CREATE SOURCE r FROM LOAD GENERATOR KEY VALUE (KEYS %d, PARTITIONS 10)", joinKeys)},
		{"KEY VALUE load generator source", "CREATE SOURCE tiny FROM LOAD GENERATOR KEY VALUE (KEYS 10)"},
		{"CREATE INDEX on a source", "CREATE INDEX l_idx ON l (key)"},
		{"CREATE INDEX on a source", "CREATE INDEX r_idx ON r (key)"},
		{"CREATE INDEX on a source", "CREATE INDEX tiny_idx ON tiny (key)"},
	})
	if err != nil {
		return nil, plot.Series{}, nil, err
	}
	defer c.Stop()
	defer admin.Close(context.Background())
	if err := waitQuery(ctx, admin, "slow-path SELECT with a join and an aggregate over indexes", slowPathQuery, 10, time.Minute); err != nil {
		return nil, plot.Series{}, nil, err
	}

	// Fixed cost: the same tiny index read by a fast-path peek and by an
	// aggregate that needs a one-shot dataflow; the difference is the
	// dataflow's creation and teardown.
	fast, err := sequential(ctx, admin, pick(e, 20, 100), "SELECT value FROM tiny WHERE key = 1", 1)
	if err != nil {
		return nil, plot.Series{}, nil, &missingError{feature: "fast-path point read", cause: err}
	}
	oneShot, err := sequential(ctx, admin, pick(e, 20, 100), "SELECT count(*) FROM tiny", 1)
	if err != nil {
		return nil, plot.Series{}, nil, &missingError{feature: "slow-path aggregate SELECT", cause: err}
	}

	readers, err := openClients(ctx, 3, serializable(c))
	if err != nil {
		return nil, plot.Series{}, nil, err
	}
	defer readers.close()
	slow := &readLoad{name: "slow_path", workers: len(readers.conns), maxRate: 20, op: func(ctx context.Context, w int) error {
		n, err := readers.query(ctx, w, slowPathQuery)
		if err == nil && n != 10 {
			err = fmt.Errorf("slow-path query returned %d rows, want 10", n)
		}
		return err
	}}
	if err := slow.measure(ctx, e, p.capacityFor); err != nil {
		return nil, plot.Series{}, nil, err
	}
	run, err := runChurnTimeline(ctx, e, "temporary/"+name, p, admin, []*readLoad{slow}, nil)
	if err != nil {
		return nil, plot.Series{}, nil, err
	}
	arm := report.NewArm(name)
	if err := addLoad(arm, "slow_path", slow, run.samples[slow.name], run.churn); err != nil {
		return nil, plot.Series{}, nil, err
	}
	if err := addLoad(arm, "slow_path_quiet", slow, run.samples[slow.name], run.quiet); err != nil {
		return nil, plot.Series{}, nil, err
	}
	arm.Latency("fast_path_tiny", fast.Summary())
	arm.Latency("oneshot_tiny", oneShot.Summary())
	arm.Float("oneshot_fixed_cost_ms", round(float64(oneShot.Quantile(0.5)-fast.Quantile(0.5))/float64(time.Millisecond), 2))
	arm.Latency("hydration", run.hydrations.Summary())
	addRates(arm, slow)
	return arm, plot.Series{Name: name + " slow_path", Points: points(run.samples[slow.name], run.origin)}, plotPhases(run.churn, run.origin), nil
}

// sequential runs sql n times back to back on one connection (a quiet
// system, so there is no queue to hide) and returns the latencies.
func sequential(ctx context.Context, conn *pgx.Conn, n int, sql string, wantRows int) (stats.Series, error) {
	var s stats.Series
	for range n {
		begin := time.Now()
		rows, err := countRows(ctx, conn, sql)
		if err != nil {
			return s, err
		}
		if rows != wantRows {
			return s, fmt.Errorf("%s: %d rows, want %d", sql, rows, wantRows)
		}
		s.Record(time.Since(begin))
	}
	return s, nil
}
