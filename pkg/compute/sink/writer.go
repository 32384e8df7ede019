package sink

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// Shard is what a writer needs of storage, defined here so that the engine
// never imports storage: the replica adapts the storage service's client
// (pkg/storage/tablesource.SinkShards). CompareAndAppend fails with an
// error wrapping ErrUpperMismatch when another writer moved the upper, and
// either method with one wrapping ErrShardGone once the shard is dropped.
type Shard interface {
	CompareAndAppend(ctx context.Context, shard string, expected, upper frontier.Time, updates []Update) error
	ReadFrom(ctx context.Context, shard string, from frontier.Time) (updates []Update, upper frontier.Frontier, since frontier.Time, full bool, err error)
}

// Update is one (row, time, diff) change of a sink shard.
type Update struct {
	Row  []byte
	Time frontier.Time
	Diff int64
}

// The errors a Shard reports, as the writer tells them apart.
var (
	// ErrUpperMismatch: the shard's upper was not the expected one.
	ErrUpperMismatch = errors.New("sink shard upper mismatch")
	// ErrShardGone: the shard was dropped (its view is being dropped too).
	ErrShardGone = errors.New("sink shard gone")
)

// Config configures a Writer.
type Config struct {
	// Shard names the sink shard; Storage reaches it.
	Shard   string
	Storage Shard
	// AsOf is the dataflow's as_of.
	AsOf frontier.Time
	Log  logr.Logger
	// OnProgress, if set, is called after the shard's upper advanced (on
	// the writer's goroutine; it must not block).
	OnProgress func()
	// Now is the wall clock (default time.Now): once the dataflow is
	// finished (a closed frontier, e.g. a constant view) nothing more will
	// change, and the shard's upper follows the clock like a table's
	// without writes.
	Now func() time.Time
	// MinBackoff and MaxBackoff bound the wait after a storage error
	// (default 50ms doubling to 2s).
	MinBackoff, MaxBackoff time.Duration
	// Metrics, if set, records the writer's appends, reads, lag and
	// memory, its state under Name (the sink's GlobalId); the writer's
	// state is forgotten when it stops.
	Metrics Metrics
	Name    string

	// live is set by a Factory: the writers it opened share one count of
	// live writers per sink (liveSinks).
	live *liveSinks
}

// Writer is one dataflow's writer of a sink shard: Push hands it the
// dataflow's output as it is produced; its goroutine appends corrections
// to the shard. Push and Close may be called from any goroutine.
type Writer struct {
	cfg    Config
	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{}

	mu       sync.Mutex
	ok, errs []Update
	frontier frontier.Frontier
	upper    frontier.Frontier // the shard's upper as last known
	stopped  error

	metrics sinkMetrics // used by the writer's goroutine only
}

// Start starts a writer; Close stops it.
func Start(cfg Config) *Writer {
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = 50 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 2 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.live == nil && cfg.Metrics != nil {
		cfg.live = &liveSinks{m: cfg.Metrics}
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &Writer{cfg: cfg, metrics: cfg.live.open(cfg.Name), cancel: cancel, done: make(chan struct{}), wake: make(chan struct{}, 1),
		frontier: frontier.At(cfg.AsOf), upper: frontier.Minimum()}
	go func() {
		defer close(w.done)
		// Forgotten before Close returns: a closed sink leaves no series.
		defer w.metrics.close()
		err := w.run(ctx)
		w.mu.Lock()
		w.stopped = err
		w.mu.Unlock()
	}()
	w.poke()
	return w
}

// Push hands over output updates (times at or beyond as_of) and the
// dataflow's output frontier (every later update is at or beyond it). It
// never blocks on storage.
func (w *Writer) Push(ok, errs []Update, f frontier.Frontier) {
	w.mu.Lock()
	w.ok = append(w.ok, ok...)
	w.errs = append(w.errs, errs...)
	if w.frontier.LessEqual(f) {
		w.frontier = f
	}
	w.mu.Unlock()
	w.poke()
}

func (w *Writer) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Upper returns the shard's upper as the writer last knew it (Minimum
// before its first read).
func (w *Writer) Upper() frontier.Frontier {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.upper
}

// Close stops the writer and waits for its goroutine. It returns why the
// writer stopped on its own, if it did (the shard was dropped: nil).
func (w *Writer) Close() error {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	if errors.Is(w.stopped, context.Canceled) {
		return nil
	}
	return w.stopped
}

// run reads the shard, then appends corrections whenever the dataflow's
// frontier passes the shard's upper, until ctx ends or the shard is gone.
func (w *Writer) run(ctx context.Context) error {
	c := NewCorrection(w.cfg.AsOf)
	backoff := w.cfg.MinBackoff
	retry := func(err error) error {
		w.cfg.Log.V(1).Info("Sink storage call failed; retrying", "shard", w.cfg.Shard, "error", err.Error(), "backoff", backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, w.cfg.MaxBackoff)
		return nil
	}
	// readFailed handles a failed read of the shard: stop (with run's
	// result) when the shard is gone or ctx ended, else back off.
	readFailed := func(err error) (stop bool, result error) {
		if gone(err) {
			return true, nil
		}
		if err := retry(err); err != nil {
			return true, err
		}
		return false, nil
	}
	for {
		// Take what the dataflow produced.
		w.mu.Lock()
		ok, errs, f := w.ok, w.errs, w.frontier
		w.ok, w.errs = nil, nil
		w.mu.Unlock()
		c.AddDesired(ok, errs)
		var tick <-chan time.Time
		if f.IsClosed() {
			f = frontier.At(max(w.cfg.AsOf+1, frontier.Time(w.cfg.Now().UnixMilli())))
			tick = time.After(finishedTick)
		}
		w.reportState(c, f)

		progressed := false
		if _, known := c.Known(); !known {
			w.metrics.shardRead(ReadAtStart)
			if err := w.read(ctx, c, 0); err != nil {
				if stop, err := readFailed(err); stop {
					return err
				}
				continue
			}
			progressed = true
		} else if batch, upper, ok := c.Batch(f); ok {
			expected, _ := c.Known()
			start := time.Now()
			err := w.cfg.Storage.CompareAndAppend(ctx, w.cfg.Shard, expected, upper, batch)
			took := time.Since(start)
			switch {
			case err == nil:
				w.metrics.appendFinished(AppendSucceeded, len(batch), took)
				c.Appended(batch, upper)
				progressed = true
			case errors.Is(err, ErrUpperMismatch):
				w.metrics.appendFinished(AppendLostRace, len(batch), took)
				// Another writer moved the upper: learn what it wrote, then
				// correct against it.
				w.metrics.shardRead(ReadAfterLostRace)
				if err := w.read(ctx, c, expected); err != nil {
					if stop, err := readFailed(err); stop {
						return err
					}
					continue
				}
				progressed = true
			case gone(err):
				w.metrics.appendFinished(AppendFailed, len(batch), took)
				return nil
			default:
				w.metrics.appendFinished(AppendFailed, len(batch), took)
				if err := retry(err); err != nil {
					return err
				}
				continue
			}
		}
		if progressed {
			backoff = w.cfg.MinBackoff
			u, _ := c.Known()
			w.mu.Lock()
			advanced := w.upper != frontier.At(u)
			if w.upper.LessEqualTime(u) {
				w.upper = frontier.At(u)
			}
			w.mu.Unlock()
			if advanced && w.cfg.OnProgress != nil {
				w.cfg.OnProgress()
			}
			continue // the frontier may allow another step at once
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.wake:
		case <-tick:
		}
	}
}

// reportState reports the write lag against output frontier f and the
// rows held in memory. Before the shard was read the lag is measured from
// as_of, where the sink's reported frontier starts (render's storage
// sink reports the join of as_of and the shard's upper).
func (w *Writer) reportState(c *Correction, f frontier.Frontier) {
	if !w.metrics.enabled() {
		return
	}
	var lag time.Duration
	if ft, open := f.Time(); open {
		durable := w.cfg.AsOf
		if u, known := c.Known(); known {
			durable = max(durable, u)
		}
		if ft > durable {
			lag = time.Duration(ft-durable) * time.Millisecond
		}
	}
	w.metrics.state(lag, len(c.Persisted()))
}

// finishedTick is how often a finished dataflow's shard upper follows the
// clock.
const finishedTick = 100 * time.Millisecond

// read learns the shard's updates from `from` on (everything when from is
// 0).
func (w *Writer) read(ctx context.Context, c *Correction, from frontier.Time) error {
	updates, upper, _, full, err := w.cfg.Storage.ReadFrom(ctx, w.cfg.Shard, from)
	if err != nil {
		return fmt.Errorf("read sink shard %s: %w", w.cfg.Shard, err)
	}
	ut, ok := upper.Time()
	if !ok {
		return fmt.Errorf("read sink shard %s: %w", w.cfg.Shard, ErrShardGone)
	}
	c.LearnShard(updates, ut, full || from == 0)
	return nil
}

// gone reports an error that ends the writer: the shard was dropped (its
// materialized view is being dropped too).
func gone(err error) bool {
	return errors.Is(err, ErrShardGone)
}
