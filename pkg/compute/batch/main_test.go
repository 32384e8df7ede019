package batch

import (
	"os"
	"testing"
)

// TestMain runs the package's tests with arenas on (SetOffHeap), so that
// every test here exercises their lifetime.
func TestMain(m *testing.M) {
	SetOffHeap(true)
	os.Exit(m.Run())
}
