//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// statfsUsage is the filesystem's free space (for unprivileged writers) and
// size, from statfs(2).
func statfsUsage(dir string) (free, size uint64, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	bs := uint64(st.Bsize) //nolint:gosec // block sizes are positive
	return uint64(st.Bavail) * bs, uint64(st.Blocks) * bs, nil
}
