package sink

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/storage"
)

// BenchmarkWriterHydrate measures a writer storing a view's snapshot of
// 100,000 rows (one compare-and-append into an in-process store, fsync
// included) and then 100 small steps of 10 changes each.
func BenchmarkWriterHydrate(b *testing.B) {
	const rows = 100_000
	snap := make([]Update, rows)
	for i := range snap {
		snap[i] = Update{Row: row.Pack(row.Int64(int64(i)), row.Text(fmt.Sprint("value-", i))), Time: 10, Diff: 1}
	}
	for range b.N {
		b.StopTimer()
		st, err := storage.Open(b.TempDir(), storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := st.CreateSinkShard("u9", 10); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		w := Start(Config{Shard: "u9", Storage: storeShard{st}, AsOf: 10, Log: logr.Discard()})
		w.Push(snap, nil, frontier.At(11))
		for s := range 100 {
			t := frontier.Time(11 + s)
			var ups []Update
			for j := range 10 {
				ups = append(ups, Update{Row: snap[s*10+j].Row, Time: t, Diff: -1})
			}
			w.Push(ups, nil, frontier.At(t+1))
		}
		for w.Upper() != frontier.At(111) {
			time.Sleep(100 * time.Microsecond)
		}
		b.StopTimer()
		w.Close()
		st.Close()
	}
	b.ReportMetric(float64(rows)/(b.Elapsed().Seconds()/float64(b.N)), "rows/s")
}

// BenchmarkAppendSteps measures how many frontier steps per second reach a
// sink shard (an in-process store; each compare-and-append fsyncs its
// shard's log), each step carrying 10 changes:
//   - store: compare-and-append called in a loop, no writer (the storage
//     ceiling: one fsync per step);
//   - store-16-shards: the same on 16 shards at once;
//   - writer-paced: a writer pushed one step at a time, each waited for
//     (one append per step, as at low rates);
//   - writer-flood: every step pushed at once, as a dataflow catching up
//     produces them; the writer takes whatever frontier it finds when an
//     append returns, so steps coalesce and appends/step reports how many
//     appends (and fsyncs) were needed per step.
func BenchmarkAppendSteps(b *testing.B) {
	const perStep = 10
	step := func(s int) []Update {
		ups := make([]Update, perStep)
		for j := range ups {
			ups[j] = Update{Row: row.Pack(row.Int64(int64(s*perStep + j))), Time: frontier.Time(10 + s), Diff: 1}
		}
		return ups
	}
	open := func(b *testing.B) *storage.Store {
		st, err := storage.Open(b.TempDir(), storage.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		if err := st.CreateSinkShard("u9", 10); err != nil {
			b.Fatal(err)
		}
		return st
	}
	b.Run("store", func(b *testing.B) {
		st := open(b)
		ctx := context.Background()
		b.ResetTimer()
		for s := range b.N {
			if err := st.CompareAndAppend(ctx, "u9", frontier.Time(10+s), frontier.Time(11+s), storageUpdates(step(s))); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
	})
	// store-16-shards: 16 shards appended to concurrently (16 materialized
	// views), b.N steps in all: whether fsyncs of different shards overlap.
	b.Run("store-16-shards", func(b *testing.B) {
		const shards = 16
		st := open(b)
		for i := range shards {
			if err := st.CreateSinkShard(fmt.Sprint("s", i), 10); err != nil {
				b.Fatal(err)
			}
		}
		ctx := context.Background()
		var next atomic.Int64
		var wg sync.WaitGroup
		b.ResetTimer()
		for i := range shards {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for s := 0; next.Add(1) <= int64(b.N); s++ {
					if err := st.CompareAndAppend(ctx, fmt.Sprint("s", i), frontier.Time(10+s), frontier.Time(11+s), storageUpdates(step(s))); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
	})
	writer := func(b *testing.B, paced bool) {
		st := open(b)
		m := newFakeMetrics()
		w := Start(Config{Shard: "u9", Storage: storeShard{st}, AsOf: 10, Log: logr.Discard(), Metrics: m, Name: "u9"})
		defer w.Close()
		for w.Upper() != frontier.At(10) {
			time.Sleep(50 * time.Microsecond)
		}
		b.ResetTimer()
		for s := range b.N {
			w.Push(step(s), nil, frontier.At(frontier.Time(11+s)))
			for paced && w.Upper() != frontier.At(frontier.Time(11+s)) {
				time.Sleep(10 * time.Microsecond)
			}
		}
		for w.Upper() != frontier.At(frontier.Time(10+b.N)) {
			time.Sleep(10 * time.Microsecond)
		}
		b.StopTimer()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
		m.mu.Lock()
		b.ReportMetric(float64(m.appends[AppendSucceeded])/float64(b.N), "appends/step")
		m.mu.Unlock()
	}
	b.Run("writer-paced", func(b *testing.B) { writer(b, true) })
	b.Run("writer-flood", func(b *testing.B) { writer(b, false) })
}
