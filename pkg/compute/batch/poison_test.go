package batch

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// readFaults reports whether reading s faults (a fault becomes a panic on
// this goroutine, recovered here), and what it read otherwise.
func readFaults(s []byte) (read string, faulted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			faulted = true
		}
	}()
	return string(s), false
}

// TestPoisonFaultsOnUseAfterRelease: under SetPoison a slice kept past its
// batch faults on its first read once the batch's arena is released, even
// a small batch's (poison moves every batch off the heap), and even after
// new arenas were mapped meanwhile (the released addresses stay reserved).
// Without poison (release unmapping the memory) the read would hit
// whatever a later mapping put there, or fault only by chance.
func TestPoisonFaultsOnUseAfterRelease(t *testing.T) {
	SetPoison(true)
	t.Cleanup(func() { SetPoison(false) })
	b := build(t, bigUpdates(0, 1, 10, 0), desc(0, 1))
	if b.arena == nil || !b.arena.poisoned {
		t.Fatal("a batch of 10 updates sealed under poison stayed on the heap")
	}
	c := b.Cursor()
	kept := c.Val()
	if got, faulted := readFaults(kept); faulted || got != "value-0000000000" {
		t.Fatalf("reading a held batch's value: %q, faulted %v", got, faulted)
	}
	a := b.arena
	b, c = nil, Cursor{}
	if !collect(a.released.Load) {
		t.Fatal("the arena of an unreachable batch was not released after 100 collections")
	}
	var churn []*Batch
	for i := range 8 {
		// New arenas must not land on the released one's addresses.
		churn = append(churn, build(t, bigUpdates(i, 7, 10, 0), desc(0, 1)))
	}
	if got, faulted := readFaults(kept); !faulted {
		t.Fatalf("a value kept past its batch's release read %q, want a fault", got)
	}
	runtime.KeepAlive(churn)
}

// TestPoisonQuarantineIsBounded: poisoned arenas beyond maxQuarantined are
// unmapped, oldest first, so a long suite never runs out of mappings.
func TestPoisonQuarantineIsBounded(t *testing.T) {
	quarantined.Lock()
	before := len(quarantined.mems)
	quarantined.Unlock()
	for i := range maxQuarantined + 10 - before {
		mem, ok := mapMemory(4096)
		if !ok {
			t.Fatalf("mapping %d failed", i)
		}
		quarantine(mem)
	}
	quarantined.Lock()
	defer quarantined.Unlock()
	if n := len(quarantined.mems); n != maxQuarantined {
		t.Fatalf("%d arenas quarantined, want the bound %d", n, maxQuarantined)
	}
}
