package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/tandemdb/tandem/pkg/sql/oracle"
)

// pprofAddrs are the /debug/pprof servers of the controller and of its
// replica (one process: with several, they would contend for the port
// and only the first would serve).
type pprofAddrs struct{ controller, replica string }

func freePprofAddrs() (pprofAddrs, error) {
	var a pprofAddrs
	for _, p := range []*string{&a.controller, &a.replica} {
		port, err := oracle.FreePort()
		if err != nil {
			return a, err
		}
		*p = "127.0.0.1:" + strconv.Itoa(port)
	}
	return a, nil
}

// traceSeconds is the length of the execution traces taken at the end of
// the run (a trace costs CPU, so it does not overlap the CPU profiles).
const traceSeconds = 2

// profile takes CPU profiles of the controller and the replica for most
// of the run, then execution traces of both (go tool trace), all at once
// in both processes, into o.profileDir.
func profile(ctx context.Context, a pprofAddrs, o options, logf func(string, ...any)) {
	secs := max(1, int(o.bench.duration.Seconds())-5-traceSeconds)
	both(func(name, addr string) {
		path := filepath.Join(o.profileDir, name+".pprof")
		url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs)
		if err := fetchTo(ctx, url, path); err != nil {
			logf("profile: %v", err)
			return
		}
		logf("tandem: %s CPU profile of %ds in %s", name, secs, path)
	}, a)
	both(func(name, addr string) {
		path := filepath.Join(o.profileDir, name+".trace")
		url := fmt.Sprintf("http://%s/debug/pprof/trace?seconds=%d", addr, traceSeconds)
		if err := fetchTo(ctx, url, path); err != nil {
			logf("trace: %v", err)
			return
		}
		logf("tandem: %s execution trace of %ds in %s", name, traceSeconds, path)
	}, a)
}

// both runs f for the controller and the replica at the same time.
func both(f func(name, addr string), a pprofAddrs) {
	var wg sync.WaitGroup
	for _, x := range [][2]string{{"controller", a.controller}, {"replica", a.replica}} {
		wg.Add(1)
		go func() { defer wg.Done(); f(x[0], x[1]) }()
	}
	wg.Wait()
}
