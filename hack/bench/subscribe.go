package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/hack/bench/internal/plot"
	"github.com/tandemdb/tandem/hack/bench/internal/report"
	"github.com/tandemdb/tandem/hack/bench/internal/stats"
)

// subscribeGroups is the number of groups of the subscribed view sv.
const subscribeGroups = 10

// subscribeView is the indexed view the scenario subscribes to: a count
// per group of the table t, so a write changes exactly one row of it.
var subscribeSetup = []stmt{
	{"CREATE TABLE", "CREATE TABLE t (k bigint, v text)"},
	{"INSERT of many rows", tableRows(tableKeys)},
	{"CREATE VIEW with GROUP BY", fmt.Sprintf("CREATE VIEW sv AS SELECT k %% %d AS g, count(*) AS n FROM t GROUP BY k %% %d", subscribeGroups, subscribeGroups)},
	{"CREATE INDEX on a view", "CREATE INDEX sv_g ON sv (g)"},
}

// runSubscribe measures SUBSCRIBE to an indexed view while an unrelated big
// index hydrates and while quiet: the time to the first row of a new
// SUBSCRIBE (open loop: each request declares a SUBSCRIBE cursor, fetches
// its first row and ends it), and the update lag of a long-running
// SUBSCRIBE (from a write being sent until the changed row arrives). Arms
// solo (enable_compute_interactive_dataflows off: maintenance serves every
// SUBSCRIBE) and two_runtime (on: the interactive runtime serves them
// through live imports).
func runSubscribe(ctx context.Context, e *env) (*result, error) {
	return runRuntimeArms(ctx, e, "subscribe",
		"subscribe: time to first row of a new SUBSCRIBE while an index hydrates",
		"subscribe: time to first row CDF", oneSeries(subscribeArm))
}

func subscribeArm(ctx context.Context, e *env, p isolationParams, name string, interactive bool) (*report.Arm, plot.Series, []plot.Phase, error) {
	c, admin, err := startChurnArm(ctx, e, p, interactive, subscribeSetup)
	if err != nil {
		return nil, plot.Series{}, nil, err
	}
	defer c.Stop()
	defer admin.Close(context.Background())
	if err := waitQuery(ctx, admin, "read of an indexed view", "SELECT g, n FROM sv", subscribeGroups, time.Minute); err != nil {
		return nil, plot.Series{}, nil, err
	}
	subscribers, err := openClients(ctx, 3, serializable(c))
	if err != nil {
		return nil, plot.Series{}, nil, err
	}
	defer subscribers.close()
	var firstMu sync.Mutex
	var firstRows []timedLag
	firstRow := &readLoad{name: "subscribe", workers: len(subscribers.conns), maxRate: 10, op: func(ctx context.Context, w int) error {
		conn, err := subscribers.conn(ctx, w)
		if err != nil {
			return err
		}
		at := time.Now()
		d, err := subscribeFirstRow(ctx, conn, "sv")
		if err != nil {
			return err
		}
		firstMu.Lock()
		firstRows = append(firstRows, timedLag{at, d})
		firstMu.Unlock()
		return nil
	}}
	if err := firstRow.measure(ctx, e, p.capacityFor); err != nil {
		return nil, plot.Series{}, nil, &missingError{feature: "DECLARE c CURSOR FOR SUBSCRIBE; FETCH 1 c", cause: err}
	}
	var lags []timedLag
	var timeouts []time.Time
	watch := func(ctx context.Context, r *churnRun) error {
		end := r.origin
		if n := len(r.quiet); n > 0 {
			end = r.quiet[n-1].end
		}
		var err error
		lags, timeouts, err = updateLags(ctx, serializable(c), end)
		return err
	}
	run, err := runChurnTimeline(ctx, e, "subscribe/"+name, p, admin, []*readLoad{firstRow}, watch)
	if err != nil {
		return nil, plot.Series{}, nil, err
	}
	arm := report.NewArm(name)
	if err := addLoad(arm, "subscribe_op", firstRow, run.samples[firstRow.name], run.churn); err != nil {
		return nil, plot.Series{}, nil, err
	}
	if err := addLoad(arm, "subscribe_op_quiet", firstRow, run.samples[firstRow.name], run.quiet); err != nil {
		return nil, plot.Series{}, nil, err
	}
	churnFirst, quietFirst := lagSummary(firstRows, run.churn), lagSummary(firstRows, run.quiet)
	arm.Latency("first_row", churnFirst)
	arm.Latency("first_row_quiet", quietFirst)
	if r, ok := latencyRatio(churnFirst, quietFirst); ok {
		arm.Float("first_row_p50_churn_over_quiet", round(r, 2))
	}
	arm.Latency("update_lag", lagSummary(lags, run.churn))
	arm.Latency("update_lag_quiet", lagSummary(lags, run.quiet))
	arm.Int("update_lag_timeouts", int64(len(timeouts)))
	arm.Latency("hydration", run.hydrations.Summary())
	addRates(arm, firstRow)
	var pts []plot.Point
	for _, f := range firstRows {
		pts = append(pts, plot.Point{T: f.at.Sub(run.origin).Seconds(), Ms: float64(f.lag) / float64(time.Millisecond)})
	}
	return arm, plot.Series{Name: name + " first_row", Points: pts}, plotPhases(run.churn, run.origin), nil
}

// subscribeFirstRow declares a SUBSCRIBE cursor on view in a transaction
// block, fetches its first row (waiting as long as it takes) and ends the
// block, which drops the subscription. It returns the time from the
// DECLARE until the first row arrived.
func subscribeFirstRow(ctx context.Context, conn *pgx.Conn, view string) (time.Duration, error) {
	if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
		return 0, err
	}
	begin := time.Now()
	n, err := declareAndFetch(ctx, conn, view)
	d := time.Since(begin)
	if _, cerr := conn.Exec(context.Background(), "COMMIT"); err == nil {
		err = cerr
	}
	if err == nil && n == 0 {
		err = errors.New("FETCH 1 returned no row")
	}
	return d, err
}

func declareAndFetch(ctx context.Context, conn *pgx.Conn, view string) (int, error) {
	if _, err := conn.Exec(ctx, "DECLARE c CURSOR FOR SUBSCRIBE "+view); err != nil {
		return 0, err
	}
	return countRows(ctx, conn, "FETCH 1 c")
}

// updateLags follows sv with one long-running SUBSCRIBE and, until end,
// writes one row at a time into t (about twice a second, at random
// moments), timing each from the INSERT being sent until the view's
// changed count arrives. It returns the lags and when each write whose
// change was not seen within 30 s was sent.
func updateLags(ctx context.Context, connect connector, end time.Time) (lags []timedLag, timeouts []time.Time, err error) {
	sub, err := connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer sub.Close(context.Background())
	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &watchWriter{}
	errc := make(chan error, 1)
	go func() {
		_, err := sub.PgConn().CopyTo(subCtx, w, "COPY (SUBSCRIBE sv) TO STDOUT")
		errc <- err
	}()
	writer, err := connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer writer.Close(context.Background())
	for k := tableKeys; time.Now().Before(end); k++ {
		g := k % subscribeGroups
		var n int64
		if err := writer.QueryRow(ctx, "SELECT n FROM sv WHERE g = $1", g).Scan(&n); err != nil {
			return lags, timeouts, fmt.Errorf("read group %d: %w", g, err)
		}
		seen := w.await(updateLine(g, n+1))
		begin := time.Now()
		if _, err := writer.Exec(ctx, "INSERT INTO t VALUES ("+strconv.Itoa(k)+", 'w')"); err != nil {
			return lags, timeouts, fmt.Errorf("insert: %w", err)
		}
		select {
		case <-seen:
			lags = append(lags, timedLag{begin, time.Since(begin)})
		case err := <-errc:
			return lags, timeouts, &missingError{feature: "COPY (SUBSCRIBE view) TO STDOUT", cause: err}
		case <-time.After(30 * time.Second):
			timeouts = append(timeouts, begin)
		case <-ctx.Done():
			return lags, timeouts, ctx.Err()
		}
		pause := time.Duration(250+rand.IntN(500)) * time.Millisecond
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return lags, timeouts, ctx.Err()
		}
	}
	return lags, timeouts, nil
}

// updateLine is what a SUBSCRIBE row of sv carrying count n for group g
// contains in COPY text ("mz_timestamp\tmz_diff\tg\tn"), as watchWriter
// matches it (each line framed by tabs).
func updateLine(g int, n int64) string { return fmt.Sprintf("\t1\t%d\t%d\t", g, n) }

// latencyRatio is a's median over b's, when both have samples.
func latencyRatio(a, b stats.Latency) (float64, bool) {
	if a.Count == 0 || b.Count == 0 || b.P50Ms <= 0 {
		return 0, false
	}
	return a.P50Ms / b.P50Ms, true
}
