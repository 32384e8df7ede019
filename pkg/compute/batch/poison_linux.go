package batch

import "syscall"

// protectNone returns mem's pages to the system and makes every access to
// them fault, keeping the addresses reserved (a poisoned arena, SetPoison).
func protectNone(mem []byte) bool {
	if err := syscall.Madvise(mem, syscall.MADV_DONTNEED); err != nil {
		return false
	}
	return syscall.Mprotect(mem, syscall.PROT_NONE) == nil
}
