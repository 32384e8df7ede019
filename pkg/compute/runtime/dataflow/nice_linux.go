package dataflow

import (
	"fmt"
	"syscall"
)

// lowerThreadPriority adds delta to the calling OS thread's nice value
// (capped at 19, the lowest priority). Linux schedules threads, so
// PRIO_PROCESS with a thread id changes that thread alone; raising one's
// own nice value needs no privilege.
func lowerThreadPriority(delta int) error {
	tid := syscall.Gettid()
	// The raw getpriority system call returns 20 - nice.
	raw, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if err != nil {
		return fmt.Errorf("read the priority of thread %d: %w", tid, err)
	}
	nice := min(20-raw+delta, 19)
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil {
		return fmt.Errorf("set nice %d on thread %d: %w", nice, tid, err)
	}
	return nil
}

// threadID returns the calling OS thread's id.
func threadID() int { return syscall.Gettid() }

// onMainThread reports whether the calling goroutine runs on the process's
// main thread (whose thread id is the process id).
func onMainThread() bool { return syscall.Gettid() == syscall.Getpid() }
