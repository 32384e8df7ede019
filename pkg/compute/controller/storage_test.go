package controller

import (
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

// TestTableCompactionFollowsReadHolds checks that a table's storage since
// is the meet of the controller's holds on it: the read policy's and those
// of the dataflows reading it.
func TestTableCompactionFollowsReadHolds(t *testing.T) {
	h, st := newStorageHarness(t, testHooks{})
	f := h.addReplica("r1", 1)
	if err := h.c.CreateStorageCollection(gid("u1")); err != nil {
		t.Fatal(err)
	}
	asOf, err := h.c.CreateDataflow("default", testDataflow("u2", nil, []string{"u1"}))
	if err != nil {
		t.Fatal(err)
	}
	storageSince := func() frontier.Time { s, _, _ := st.Frontiers("u1"); return s }
	// Time passes: the policy would compact u1, but u2 holds it at its as_of.
	for range 10 {
		st.Tick()
		time.Sleep(10 * time.Millisecond)
	}
	h.eventually("table compacted up to the dataflow's hold", func() bool { return storageSince() == asOf })
	time.Sleep(50 * time.Millisecond)
	if s := storageSince(); s != asOf {
		t.Fatalf("table since %d passed the reading dataflow's as_of %d", s, asOf)
	}
	// The dataflow advances: so does its hold on the table.
	f.report("u2", frontier.At(asOf+50))
	h.eventually("table since follows the dataflow", func() bool { return storageSince() == asOf+50-20 })
	// Dropped, the dataflow holds nothing: the table follows its policy.
	if err := h.c.DropCollection(gid("u2")); err != nil {
		t.Fatal(err)
	}
	st.Tick()
	h.eventually("table since follows its upper", func() bool {
		_, upper, _ := st.Frontiers("u1")
		ut, _ := upper.Time()
		return storageSince() > asOf+50 && storageSince() >= ut-100
	})
}
