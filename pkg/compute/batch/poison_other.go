//go:build !linux

package batch

// protectNone is implemented on Linux only; elsewhere a poisoned arena is
// unmapped like any other (quarantine falls back to unmapMemory).
func protectNone([]byte) bool { return false }
