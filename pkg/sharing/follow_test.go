package sharing

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// TestPublishedTraceMerges: the point's shared handle must not pin the
// publisher's physical frontier where it was published, or the published
// trace never merges and its chain grows by a batch per step forever.
func TestPublishedTraceMerges(t *testing.T) {
	reg := NewRegistry()
	k := Key{ID: "u20"}
	tr := trace.New(frontier.Minimum())
	own := tr.NewHandle("export")
	defer own.Release()
	pub, err := reg.Publish(k, "maintenance", tr)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 256 {
		appendBatch(t, tr, uint64(i))
		up := tr.Upper()
		if err := own.SetLogical(up); err != nil {
			t.Fatal(err)
		}
		if err := own.SetPhysical(up); err != nil {
			t.Fatal(err)
		}
		if err := reg.AdvanceStandingHold(k, up); err != nil {
			t.Fatal(err)
		}
		if err := pub.Compact(up); err != nil {
			t.Fatal(err)
		}
		if err := pub.Refresh(); err != nil {
			t.Fatal(err)
		}
	}
	// A spine keeps O(log n) batches (plus merges in progress).
	if n := tr.Stats().Batches; n > 24 {
		t.Fatalf("published trace holds %d batches after 256 inserts (physical %v): it does not merge", n, tr.Physical())
	}
}

// byTime sums updates by time and key.
type byTime map[frontier.Time]map[uint64]int64

func (m byTime) add(t frontier.Time, key uint64, d int64) {
	if m[t] == nil {
		m[t] = map[uint64]int64{}
	}
	m[t][key] += d
}

// followScenario drives a publisher that inserts random batches, compacts
// and merges as its own compaction stream says, and a live reader
// (Follow) that, at random moments, reads the batches published since its
// cursor and moves on. It checks after every read that the reader never
// reads below the published since, finds a batch boundary at its cursor,
// and that what it accumulated equals the publisher's input as of every
// time before its cursor. With sabotage the follower's holds are released
// right after they are taken. It returns the first violation.
func followScenario(seed uint64, sabotage bool) error {
	rng := rand.New(rand.NewPCG(seed, seed^0x51f0))
	reg := NewRegistry()
	k := Key{ID: "u21", Incarnation: seed}
	tr := trace.New(frontier.Minimum())
	own := tr.NewHandle("export u21")
	defer own.Release()
	pub, err := reg.Publish(k, "maintenance", tr)
	if err != nil {
		return err
	}
	input := byTime{}
	insert := func() error {
		up, _ := tr.Upper().Time()
		next := up + 1 + frontier.Time(rng.IntN(3))
		var b batch.Builder
		for range rng.IntN(4) {
			key, t, d := rng.Uint64N(6), up+frontier.Time(rng.Uint64N(uint64(next-up))), int64(rng.IntN(3))-1
			if d == 0 {
				d = 1
			}
			input.add(t, key, d)
			b.Push(binary.BigEndian.AppendUint64(nil, key), []byte("v"), t, d)
		}
		bat, err := b.Build(batch.Description{Lower: frontier.At(up), Upper: frontier.At(next), Since: frontier.Minimum()})
		if err != nil {
			return err
		}
		return tr.Insert(bat)
	}
	f, err := reg.Import(k).Follow(0)
	if err != nil {
		return err
	}
	defer f.Release()
	if sabotage {
		_ = f.Release()
	}
	// got is what the follower read; running is input minus got,
	// accumulated over the times checked so far.
	got, running := byTime{}, map[uint64]int64{}
	cursor := frontier.Time(0)
	for step := 0; step < 300; step++ {
		switch rng.IntN(4) {
		case 0, 1:
			if err := insert(); err != nil {
				return err
			}
		case 2: // the publisher's compaction stream, both runtimes applied
			up, _ := tr.Upper().Time()
			c := frontier.Join(frontier.At(frontier.Time(rng.Uint64N(uint64(up)+1))), tr.Since())
			if l, _ := own.Frontiers(); l.Less(c) {
				_ = own.SetLogical(c)
				_ = own.SetPhysical(c)
			}
			if err := reg.AdvanceStandingHold(k, c); err != nil {
				return err
			}
			if err := pub.Compact(c); err != nil {
				return err
			}
			fuel := 1 << 20
			tr.Exert(&fuel)
		case 3: // the follower reads what was published since its cursor
			s := reg.Import(k).Snapshot()
			if !s.Since.LessEqualTime(cursor) {
				return fmt.Errorf("step %d: since %v passed the follower's cursor %d", step, s.Since, cursor)
			}
			next, err := readFrom(s.Batches, cursor, got)
			if err != nil {
				return fmt.Errorf("step %d: %w", step, err)
			}
			if next > cursor {
				// Updates at times before the cursor are final on both
				// sides: the publisher inserts at its upper and later, and
				// the follower reads only batches from its cursor on.
				for at := cursor; at < next; at++ {
					if err := sameAsOf(input, got, running, at); err != nil {
						return fmt.Errorf("step %d: %w", step, err)
					}
				}
				cursor = next
				if err := f.Advance(frontier.At(cursor)); err != nil {
					return err
				}
			}
		}
		if err := pub.Refresh(); err != nil {
			return err
		}
	}
	return nil
}

// readFrom adds to got the updates of the batches from cursor on and
// returns the chain's upper. The chain must have a boundary at cursor.
func readFrom(bs []*batch.Batch, cursor frontier.Time, got byTime) (frontier.Time, error) {
	next := cursor
	started := false
	for _, b := range bs {
		lo, _ := b.Lower().Time()
		hi, _ := b.Upper().Time()
		if hi <= cursor {
			continue
		}
		if !started && lo != cursor {
			return cursor, fmt.Errorf("no batch boundary at the follower's cursor %d (batch [%d, %d))", cursor, lo, hi)
		}
		started = true
		c := b.Cursor()
		for ; c.KeyValid(); c.StepKey() {
			key := binary.BigEndian.Uint64(c.Key())
			for ; c.ValValid(); c.StepVal() {
				c.ForEachUpdate(func(t frontier.Time, d int64) { got.add(t, key, d) })
			}
		}
		next = hi
	}
	return next, nil
}

// sameAsOf adds the updates of input and got at time at to running (their
// accumulated difference over the earlier times) and reports a key where
// they then differ: the follower's accumulation as of at is not the
// publisher's input as of at.
func sameAsOf(input, got byTime, running map[uint64]int64, at frontier.Time) error {
	for key, d := range input[at] {
		running[key] += d
	}
	for key, d := range got[at] {
		running[key] -= d
	}
	for key, d := range running {
		if d != 0 {
			return fmt.Errorf("as of %d key %d: the publisher's input has %+d more than the follower", at, key, d)
		}
	}
	return nil
}

func TestFollowerReadsEveryBatchOnce(t *testing.T) {
	for seed := range uint64(100) {
		if err := followScenario(seed, false); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// TestFollowerSabotaged shows the scenario has teeth: without the
// follower's holds the publisher compacts and merges past its cursor.
func TestFollowerSabotaged(t *testing.T) {
	for seed := range uint64(200) {
		if err := followScenario(seed, true); err != nil {
			t.Logf("seed %d: %v", seed, err)
			return
		}
	}
	t.Fatal("no run failed with the follower's holds released; the scenario cannot detect a broken mechanism")
}

func TestFollowBelowFloorRefused(t *testing.T) {
	reg := NewRegistry()
	k := Key{ID: "u22"}
	tr := trace.New(frontier.Minimum())
	pub, _ := reg.Publish(k, "m", tr)
	_ = reg.AdvanceStandingHold(k, frontier.At(10))
	_ = pub.Compact(frontier.At(10))
	if _, err := reg.Import(k).Follow(3); !errors.Is(err, ErrCompacted) {
		t.Fatalf("got %v, want ErrCompacted", err)
	}
	f, err := reg.Import(k).Follow(10)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Advance(frontier.Closed()); err != nil {
		t.Fatal(err)
	}
	if err := f.Advance(frontier.At(20)); err != nil {
		t.Fatal(err) // a released follower ignores further advances
	}
}
