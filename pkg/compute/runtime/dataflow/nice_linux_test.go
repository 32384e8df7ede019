package dataflow

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// threadNice reads a thread's nice value from /proc/self/task/<tid>/stat
// (field 19); ok is false once the thread is gone.
func threadNice(t *testing.T, tid int) (nice int, ok bool) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if os.IsNotExist(err) || errors.Is(err, syscall.ESRCH) {
		// Gone, or exiting as the file is read.
		return 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) start at 3.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, err := strconv.Atoi(fields[19-3])
	if err != nil {
		t.Fatalf("stat of thread %d: %q: %v", tid, b, err)
	}
	return n, true
}

// TestWorkerThreadsRunNiced: with Config.Nice the workers' OS threads
// really run at the process's nice value plus Nice (as the kernel reports
// it per thread), a runtime without it keeps the default, and a niced
// thread ends with its worker instead of going back to the Go runtime
// for other goroutines to inherit its priority.
func TestWorkerThreadsRunNiced(t *testing.T) {
	base, ok := threadNice(t, os.Getpid()) // the main thread's
	if !ok {
		t.Fatal("no stat for the main thread")
	}
	for _, tc := range []struct {
		nice, want int
	}{{0, base}, {5, min(base+5, 19)}} {
		t.Run(fmt.Sprintf("nice=%d", tc.nice), func(t *testing.T) {
			var niceErr error
			ws, err := New(Config{Workers: 2, Nice: tc.nice, OnNiceError: func(_ int, err error) { niceErr = err }})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			ws.Start(ctx)
			defer func() { cancel(); ws.Stop() }()
			var tids []int
			deadline := time.Now().Add(30 * time.Second) // bounds a failing run only
			for tids = ws.ThreadIDs(); tids[0] == 0 || tids[1] == 0; tids = ws.ThreadIDs() {
				if time.Now().After(deadline) {
					t.Fatal("workers never started")
				}
				time.Sleep(time.Millisecond)
			}
			// Workers run commands on their own thread: the broadcast
			// has run once both answered.
			done := make(chan struct{}, 2)
			ws.Broadcast(func(*Worker) { done <- struct{}{} })
			<-done
			<-done
			if niceErr != nil {
				t.Fatal(niceErr)
			}
			for _, tid := range tids {
				if got, ok := threadNice(t, tid); !ok || got != tc.want {
					t.Errorf("worker thread %d: nice %d (alive %v), want %d", tid, got, ok, tc.want)
				}
			}
			cancel()
			ws.Stop()
			if tc.nice == 0 {
				return
			}
			for _, tid := range tids {
				for {
					if _, alive := threadNice(t, tid); !alive {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("niced worker thread %d outlived its worker", tid)
					}
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
}
