package spine

import (
	"os"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/batch"
)

// TestMain runs the package's tests with arrangement arenas on
// (batch.SetOffHeap), so that every test here exercises their lifetime.
func TestMain(m *testing.M) {
	batch.SetOffHeap(true)
	os.Exit(m.Run())
}
