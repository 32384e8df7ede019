package enginetest

import (
	"errors"
	"fmt"
	"maps"
	"testing"

	"pgregory.net/rapid"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/reference"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// TestCompactionPreservesReads: a trace receives random batches and does
// random amounts of merge work while a reader advances its logical hold
// (since) and a cutter holds a physical cut, as the operators do. After
// every action, every read at a time t with since <= t < upper equals the
// accumulation of the updates through t, whatever was merged and compacted;
// a read before since fails with ErrCompacted instead of returning rows;
// and the cutter's cut still exists: the batches through it end exactly
// there and read like the updates before it.
func TestCompactionPreservesReads(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tr := trace.New(frontier.Minimum())
		reader, cutter := tr.NewHandle("reader"), tr.NewHandle("cutter")
		defer reader.Release()
		defer cutter.Release()
		if err := cutter.SetLogical(frontier.Closed()); err != nil {
			rt.Fatal(err)
		}
		var (
			all          []keyed
			upper, since frontier.Time
			cut          frontier.Time
			boundaries   = []frontier.Time{0}
		)
		for step := range rapid.IntRange(1, 30).Draw(rt, "steps") {
			switch rapid.IntRange(0, 3).Draw(rt, fmt.Sprintf("action%d", step)) {
			case 0: // a batch
				next := upper + frontier.Time(rapid.IntRange(1, 3).Draw(rt, "width"))
				var b batch.Builder
				for range rapid.IntRange(0, 6).Draw(rt, "updates") {
					u := keyed{
						key:  row.Pack(row.Int64(int64(rapid.IntRange(0, 4).Draw(rt, "key")))),
						val:  row.Pack(row.Int64(int64(rapid.IntRange(0, 2).Draw(rt, "val")))),
						t:    upper + frontier.Time(rapid.IntRange(0, int(next-upper)-1).Draw(rt, "t")),
						diff: int64(rapid.SampledFrom([]int{1, 1, -1, 2}).Draw(rt, "diff")),
					}
					all = append(all, u)
					b.Push(u.key, u.val, u.t, u.diff)
				}
				bat, err := b.Build(batch.Description{Lower: frontier.At(upper), Upper: frontier.At(next), Since: frontier.Minimum()})
				if err != nil {
					rt.Fatal(err)
				}
				if err := tr.Insert(bat); err != nil {
					rt.Fatal(err)
				}
				upper = next
				boundaries = append(boundaries, upper)
				if err := reader.SetPhysical(frontier.At(upper)); err != nil {
					rt.Fatal(err)
				}
			case 1: // merge work
				fuel := rapid.SampledFrom([]int{1, 8, 64, 1 << 20}).Draw(rt, "fuel")
				tr.Exert(&fuel)
			case 2: // the reader gives up times before a new since
				since = frontier.Time(rapid.IntRange(int(since), int(upper)).Draw(rt, "since"))
				if err := reader.SetLogical(frontier.At(since)); err != nil {
					rt.Fatal(err)
				}
			case 3: // the cutter moves its cut to a later batch boundary
				var later []frontier.Time
				for _, b := range boundaries {
					if b >= cut {
						later = append(later, b)
					}
				}
				cut = rapid.SampledFrom(later).Draw(rt, "cut")
				if err := cutter.SetPhysical(frontier.At(cut)); err != nil {
					rt.Fatal(err)
				}
			}
			checkReads(rt, tr, all, since, upper)
			checkCut(rt, cutter, all, since, cut)
		}
	})
}

func accumulateKeyed(all []keyed, at, below frontier.Time) map[string]int64 {
	m := map[string]int64{}
	for _, u := range all {
		if u.t <= at && u.t < below {
			k := reference.FormatRow(u.key) + " -> " + reference.FormatRow(u.val)
			if m[k] += u.diff; m[k] == 0 {
				delete(m, k)
			}
		}
	}
	return m
}

func scanned(bs []*batch.Batch, at frontier.Time) map[string]int64 {
	m := map[string]int64{}
	trace.ScanAsOf(bs, at, func(key, val []byte, diff int64) bool {
		m[reference.FormatRow(key)+" -> "+reference.FormatRow(val)] = diff
		return true
	})
	return m
}

func checkReads(rt *rapid.T, tr *trace.Trace, all []keyed, since, upper frontier.Time) {
	for at := since; at < upper; at++ {
		r, err := tr.ReadAt(at)
		if err != nil {
			rt.Fatalf("read at %d (since %d, upper %d): %v", at, since, upper, err)
		}
		if got, want := scanned(r.Batches, at), accumulateKeyed(all, at, upper); !maps.Equal(got, want) {
			rt.Fatalf("read at %d (since %d): got %v, want %v", at, since, got, want)
		}
	}
	if since > 0 {
		if _, err := tr.ReadAt(since - 1); !errors.Is(err, trace.ErrCompacted) {
			rt.Fatalf("read at %d before since %d: err %v, want ErrCompacted", since-1, since, err)
		}
	}
}

func checkCut(rt *rapid.T, cutter *trace.Handle, all []keyed, since, cut frontier.Time) {
	bs, err := cutter.BatchesThrough(frontier.At(cut))
	if err != nil {
		rt.Fatalf("batches through the held cut %d: %v", cut, err)
	}
	if n := len(bs); n > 0 && bs[n-1].Upper() != frontier.At(cut) {
		rt.Fatalf("batches through the held cut %d end at %v", cut, bs[n-1].Upper())
	}
	for at := since; at < cut; at++ {
		if got, want := scanned(bs, at), accumulateKeyed(all, at, cut); !maps.Equal(got, want) {
			rt.Fatalf("batches through cut %d read at %d: got %v, want %v", cut, at, got, want)
		}
	}
}
