package render

import (
	"strconv"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// TestLoadGenPollAllocatesPerChunkNotPerRow: a load generator's Poll of a
// 16,384-row chunk allocates its rows in a few shared chunks and grows its
// output by doubling: a few dozen allocations, not one per row (the rows
// were separate objects, and 1.25x growth re-copied the output four or five
// times). The rows it hands out are independent copies, clipped so that
// appending to one cannot overwrite the next.
func TestLoadGenPollAllocatesPerChunkNotPerRow(t *testing.T) {
	const chunk = 16_384
	src, err := LoadGenerators{Now: func() frontier.Time { return 10_000 }}.OpenSource(plan.SourceImport{ID: plan.User(1),
		Connection: plan.SourceConnection{Kind: plan.SourceLoadGen, Options: map[string]string{
			"generator": "KEY VALUE", "keys": strconv.Itoa(100 * chunk), "value_size": "64", "tick_ms": "1000", "start": "0"}}},
		SourceContext{Worker: 0, Peers: 1, Activate: func() {}, Chunk: func() int { return chunk }})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var ups []dataflow.Update
	allocs := testing.AllocsPerRun(5, func() {
		ups, _, err = src.Poll(nil)
	})
	if err != nil || len(ups) != chunk {
		t.Fatalf("Poll: %d rows, %v; want %d", len(ups), err, chunk)
	}
	if allocs > 100 {
		t.Errorf("a Poll of %d rows made %.0f allocations, want at most 100 (per chunk, not per row)", chunk, allocs)
	}
	first := ups[0].Val
	if cap(first) != len(first) {
		t.Errorf("row capacity %d beyond its length %d: an append would overwrite the next row", cap(first), len(first))
	}
	second := string(ups[1].Val)
	_ = append(first, 0xff)
	if string(ups[1].Val) != second {
		t.Error("appending to one row changed the next")
	}
}
