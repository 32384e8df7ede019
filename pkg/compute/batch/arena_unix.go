//go:build unix

package batch

import "syscall"

// mapMemory returns size bytes of zeroed, private, anonymous memory outside
// the Go heap, or false if the mapping failed (the caller then keeps the
// columns on the heap).
func mapMemory(size int) ([]byte, bool) {
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false
	}
	return mem, true
}

// unmapMemory returns a mapping from mapMemory to the system. Unmapping
// fails only for a slice mapMemory did not return; that would be a bug in
// this package, and the memory is then left mapped rather than risking a
// crash in a cleanup.
func unmapMemory(mem []byte) { _ = syscall.Munmap(mem) }
