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
		for n := 0; time.Now().Before(ph.end); n++ {
			begin := time.Now()
			if _, err := conn.Exec(ctx, "CREATE INDEX big_idx ON big (key)"); err != nil {
				return hyd, fmt.Errorf("churn: create index: %w", err)
			}
			phaseCtx, cancel := context.WithDeadline(ctx, ph.end.Add(time.Minute))
			_, err := countRows(phaseCtx, conn, "SELECT value FROM big WHERE key = 0")
			cancel()
			switch {
			case err == nil:
				hyd.Record(time.Since(begin))
			case ctx.Err() != nil:
				return hyd, nil
			default:
				return hyd, fmt.Errorf("churn: read through the new index: %w", err)
			}
			if conn.IsClosed() {
				return hyd, errors.New("churn: admin connection closed")
			}
			if _, err := conn.Exec(ctx, "DROP INDEX big_idx"); err != nil {
				return hyd, fmt.Errorf("churn: drop index: %w", err)
			}
		}
	}
	return hyd, nil
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
