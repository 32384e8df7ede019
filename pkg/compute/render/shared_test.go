package render

import (
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// fakeShared publishes a fixed chain.
type fakeShared struct {
	batches []*batch.Batch
	upper   frontier.Frontier
}

func (f *fakeShared) Snapshot() ([]*batch.Batch, frontier.Frontier, bool, bool) {
	return f.batches, f.upper, true, false
}

func (f *fakeShared) OnChange(func()) func() { return func() {} }

// TestMirrorSyncDoesNoMergeWork: a shared import's mirror takes the
// publisher's batches as they are (its pin holds the physical frontier at
// the lower, so its inserts start no merge): syncing a chain of large
// batches does no merge work at all, however large they are, so the
// import's schedule is bounded by the chain's length, not its updates.
func TestMirrorSyncDoesNoMergeWork(t *testing.T) {
	const n = 20_000
	var chain []*batch.Batch
	for i := range 4 {
		var b batch.Builder
		for _, u := range buildUpdates(n, uint64(i)) {
			b.Push(u.Key, u.Val, frontier.Time(10*i+1), u.Diff)
		}
		bt, err := b.Build(batch.Description{Lower: frontier.At(frontier.Time(10 * i)), Upper: frontier.At(frontier.Time(10*i + 10)), Since: frontier.Minimum()})
		if err != nil {
			t.Fatal(err)
		}
		chain = append(chain, bt)
	}
	pub := &fakeShared{upper: frontier.At(10)}
	m := newMirror(pub, "test")
	for i := range chain {
		pub.batches, pub.upper = chain[:i+1], chain[i].Upper()
		advanced, err := m.sync(frontier.At(0))
		if err != nil {
			t.Fatal(err)
		}
		if !advanced || m.tr.Upper() != chain[i].Upper() {
			t.Fatalf("sync %d: advanced %v, upper %v, want %v", i, advanced, m.tr.Upper(), chain[i].Upper())
		}
		if w := m.tr.MergeWork(); w != 0 {
			t.Fatalf("sync %d: the mirror did %d units of merge work, want none", i, w)
		}
	}
	if got := m.tr.Stats().Batches; got != len(chain) {
		t.Fatalf("mirror holds %d batches, want the publisher's %d", got, len(chain))
	}
}
