//go:build !unix

package batch

// Without anonymous mappings every batch keeps its columns on the Go heap.
func mapMemory(int) ([]byte, bool) { return nil, false }

func unmapMemory([]byte) {}
