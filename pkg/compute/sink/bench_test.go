package sink

import (
	"fmt"
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
	snap := make([]storage.Update, rows)
	for i := range snap {
		snap[i] = storage.Update{Row: row.Pack(row.Int64(int64(i)), row.Text(fmt.Sprint("value-", i))), Time: 10, Diff: 1}
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
		w := Start(Config{Shard: "u9", Storage: st, AsOf: 10, Log: logr.Discard()})
		w.Push(snap, nil, frontier.At(11))
		for s := range 100 {
			t := frontier.Time(11 + s)
			var ups []storage.Update
			for j := range 10 {
				ups = append(ups, storage.Update{Row: snap[s*10+j].Row, Time: t, Diff: -1})
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
