package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/hack/bench/internal/load"
	"github.com/tandemdb/tandem/hack/bench/internal/stats"
	"github.com/tandemdb/tandem/hack/internal/proc"
)

// churnRun is one arm's timeline: a discarded warm-up, then repeats of
// (quiet, churn), then a last quiet phase, with open-loop reads throughout
// and index churn on the big source during each churn phase.
type churnRun struct {
	origin       time.Time
	quiet, churn []phase
	samples      map[string][]load.Sample
	hydrations   stats.Series
}

// runChurnTimeline drives kinds open-loop over the whole timeline while
// churnIndexes creates and drops an index on the source "big" in every
// churn phase. It fails when no index hydrated: then nothing was measured.
// watch, when not nil, runs alongside with the planned phases (origin,
// quiet and churn are set; samples are not yet); the run waits for it to
// return (it is not cancelled when the load ends, which can be before the
// last phase boundary has been observed) and its error fails the run.
func runChurnTimeline(ctx context.Context, e *env, label string, p isolationParams, admin *pgx.Conn, kinds []*readLoad, watch func(context.Context, *churnRun) error) (*churnRun, error) {
	r := &churnRun{origin: time.Now().Add(500 * time.Millisecond)}
	t := r.origin.Add(p.warmup)
	for range p.repeats {
		r.quiet = append(r.quiet, phase{"quiet", t, t.Add(p.quiet)})
		t = t.Add(p.quiet)
		r.churn = append(r.churn, phase{"churn", t, t.Add(p.churn)})
		t = t.Add(p.churn)
	}
	r.quiet = append(r.quiet, phase{"quiet", t, t.Add(p.quiet)})
	total := t.Add(p.quiet).Sub(r.origin)
	e.logf("%s: open loop for %v (%d churn phases of %v)", label, total.Round(time.Second), len(r.churn), p.churn)

	churnCtx, stopChurn := context.WithCancel(ctx)
	defer stopChurn()
	var wg sync.WaitGroup
	var churnErr, watchErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.hydrations, churnErr = churnIndexes(churnCtx, e, admin, r.churn)
	}()
	if watch != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			watchErr = watch(ctx, r)
		}()
	}
	samples, err := openLoop(ctx, kinds, r.origin, total, p.grace)
	stopChurn()
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if churnErr != nil {
		return nil, churnErr
	}
	if watchErr != nil {
		return nil, watchErr
	}
	if r.hydrations.Count() == 0 {
		return nil, errors.New("no index hydrated during the churn phases: the churn did not happen, so the arm measured nothing")
	}
	r.samples = samples
	return r, nil
}

// timedLag is a staleness observation and when it was made.
type timedLag struct {
	at  time.Time
	lag time.Duration
}

// lagSummary summarises the observations made during phases.
func lagSummary(lags []timedLag, phases []phase) stats.Latency {
	var s stats.Series
	for _, l := range lags {
		for _, p := range phases {
			if p.contains(l.at) {
				s.Record(l.lag)
				break
			}
		}
	}
	return s.Summary()
}

// churnIndexes repeatedly creates an index on the big source, waits for it
// to hydrate (a point read through it answers) and drops it, during each
// churn phase. It returns the create-to-readable durations; an index still
// hydrating when its phase ends is recorded as censored.
func churnIndexes(ctx context.Context, e *env, conn *pgx.Conn, phases []phase) (stats.Series, error) {
	var hyd stats.Series
	for i, ph := range phases {
		if err := sleepUntil(ctx, ph.start); err != nil {
			return hyd, nil
		}
		e.logf("  churn phase %d/%d", i+1, len(phases))
		for time.Now().Before(ph.end) {
			d, err := hydrateOnce(ctx, conn, ph.end.Add(time.Minute))
			switch {
			case err == nil:
				hyd.Record(d)
			case ctx.Err() != nil:
				return hyd, nil
			default:
				return hyd, err
			}
		}
	}
	return hyd, nil
}

// hydrateOnce creates an index on the big source, waits until a point read
// through it answers (before deadline), drops it, and returns the
// create-to-readable time.
func hydrateOnce(ctx context.Context, conn *pgx.Conn, deadline time.Time) (time.Duration, error) {
	begin := time.Now()
	if _, err := conn.Exec(ctx, "CREATE INDEX big_idx ON big (key)"); err != nil {
		return 0, fmt.Errorf("churn: create index: %w", err)
	}
	readCtx, cancel := context.WithDeadline(ctx, deadline)
	_, err := countRows(readCtx, conn, "SELECT value FROM big WHERE key = 0")
	cancel()
	d := time.Since(begin)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("churn: read through the new index: %w", err)
	}
	if conn.IsClosed() {
		return 0, errors.New("churn: admin connection closed")
	}
	if _, err := conn.Exec(ctx, "DROP INDEX big_idx"); err != nil {
		return 0, fmt.Errorf("churn: drop index: %w", err)
	}
	return d, nil
}

// hydrationAB hydrates the big source's index rounds times with the step
// bounds on and rounds times with them off, alternating (on, off, then
// off, on, ...), on one controller with nothing else running, and returns
// both series. Measured this way the bounds' cost is a ratio of
// hydrations taken seconds apart; the arms two_runtime and
// two_runtime_unbounded run minutes apart, when the machine may differ. It
// leaves the bounds on.
func hydrationAB(ctx context.Context, e *env, conn *pgx.Conn, rounds int) (on, off stats.Series, err error) {
	e.logf("  hydrations with the step bounds on and off, alternating (%d each)", rounds)
	for i := range rounds {
		order := []bool{true, false}
		if i%2 == 1 {
			order = []bool{false, true}
		}
		for _, bounded := range order {
			if err := setStepBoundsTo(ctx, conn, bounded); err != nil {
				return on, off, err
			}
			d, err := hydrateOnce(ctx, conn, time.Now().Add(2*time.Minute))
			if err != nil {
				return on, off, err
			}
			if bounded {
				on.Record(d)
			} else {
				off.Record(d)
			}
		}
	}
	return on, off, setStepBoundsTo(ctx, conn, true)
}

// stmt is a setup statement and the feature it needs.
type stmt struct{ feature, sql string }

// startChurnArm starts a fresh controller for one arm, sets
// enable_compute_interactive_dataflows, runs the scenario's setup and
// creates the churned source "big" (bigKeys KEY VALUE rows, no index yet).
// The caller stops the controller and closes the admin connection.
func startChurnArm(ctx context.Context, e *env, p isolationParams, interactive bool, setup []stmt) (_ *proc.Controller, _ *pgx.Conn, err error) {
	c, err := e.startTandem(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	admin, err := serializable(c)(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			admin.Close(context.Background())
		}
	}()
	if err := setInteractive(ctx, e, c, admin, interactive); err != nil {
		return nil, nil, err
	}
	setup = append(setup, stmt{"KEY VALUE load generator source",
		fmt.Sprintf("CREATE SOURCE big FROM LOAD GENERATOR KEY VALUE (KEYS %d, VALUE SIZE %d)", p.bigKeys, p.valueSize)})
	for _, s := range setup {
		if err := require(ctx, admin, s.feature, s.sql); err != nil {
			return nil, nil, err
		}
	}
	return c, admin, nil
}

// serializable connects with transaction_isolation = serializable: the
// reads the issue measures, answered at the read frontier rather than
// waiting for a source's next tick as strict serializable reads must.
func serializable(c *proc.Controller) connector {
	return func(ctx context.Context) (*pgx.Conn, error) {
		conn, err := c.Connect(ctx)
		if err != nil {
			return nil, err
		}
		if _, err := conn.Exec(ctx, "SET transaction_isolation = 'serializable'"); err != nil {
			conn.Close(context.Background())
			return nil, &missingError{feature: "SET transaction_isolation = 'serializable'", cause: err}
		}
		return conn, nil
	}
}
