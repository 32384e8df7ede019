package batch

import (
	"fmt"
	"os"
	"testing"
)

// TestMain checks that arenas are on by default (the package's init), so
// that every test here exercises their lifetime, as every replica does
// unless told --offheap-arrangements=false.
func TestMain(m *testing.M) {
	if !OffHeapEnabled() {
		fmt.Fprintln(os.Stderr, "batch: arenas are off by default, want on")
		os.Exit(1)
	}
	os.Exit(m.Run())
}
