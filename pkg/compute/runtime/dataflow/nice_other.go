//go:build !linux

package dataflow

import "errors"

// lowerThreadPriority is Linux only: elsewhere one thread's nice value
// cannot be set.
func lowerThreadPriority(int) error {
	return errors.New("a worker thread's priority can only be lowered on Linux")
}

// threadID is 0 off Linux.
func threadID() int { return 0 }

// onMainThread is false off Linux (nothing is reniced there).
func onMainThread() bool { return false }
