package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/protocol/scripttest"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat; 100
// on every Linux architecture Go supports.
const clockTicks = 100

// cpuTime returns the user plus system CPU time process pid has used.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields after it are
	// counted from its closing parenthesis. utime and stime are fields 14
	// and 15.
	rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// idleScript leaves a two-runtime replica with a published index whose
// source ticks once an hour and one read routed to the interactive runtime
// waiting for a time the index will not reach for half an hour: the read
// must wait on the publisher's notification, and nothing else is to do.
const idleScript = `
connect c1 nonce-1
send c1 create_instance {}
send c1 update_configuration peek_routing=interactive
send c1 create_dataflow {"id":"u19","debug_name":"idle_index","source_imports":[{"id":"u20","desc":{"names":["counter"],"types":[{"type":"int64","nullable":false}]},"connection":{"kind":"loadgen","options":{"generator":"COUNTER","start":"${START}","tick_ms":"3600000"}}}],"index_imports":null,"objects_to_build":null,"index_exports":[{"id":"u21","on":"u20","key":[{"op":"column"}]}],"subscribe_sinks":null,"class":"maintained","as_of":"[${START}]","until":"[]"}
send c1 init_complete
send c1 peek waiting u21 ${START+1800000}
metric tandem_compute_peeks_routed_total{role="interactive"} >= 1
expect-none c1 waiting
sleep ${IDLE_MS}ms
expect-none c1 waiting
`

// TestIdleTwoRuntimeReplicaUsesNoCPU measures the CPU time a two-runtime
// replica of 2 workers per runtime uses while idle, with a read parked on
// the interactive runtime. Workers that polled, or a read that re-checked
// its index on a timer, would show here: one spinning worker costs a full
// core, and a read re-checking its index every millisecond cost 220 ms in
// the 3 s window (measured by sabotaging sharing.Import.Wait). The bound,
// 100 ms, is far above what parked threads use (0 ticks measured, also at
// load average 11) and below any polling loop worth the name.
func TestIdleTwoRuntimeReplicaUsesNoCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("starts replica processes")
	}
	const window = 3 * time.Second
	// settleFor bounds the wait for start-up to finish (see below); the
	// script keeps its connection, and its read, through it and the window.
	const settleFor = 20 * time.Second
	r := startReplicaWith(t, 1, 2, true)
	done := make(chan error, 1)
	go func() {
		done <- scripttest.RunScript(t.Context(), r.Replica, "testdata", idleScript,
			scripttest.Options{Vars: map[string]int64{"IDLE_MS": (settleFor + window + 3*time.Second).Milliseconds()}})
	}()
	// Wait until the read is routed and parked, then let start-up settle.
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := scripttest.RunScript(t.Context(), r.Replica, "testdata",
			`metric tandem_compute_peeks_routed_total{role="interactive"} >= 1`, scripttest.Options{Timeout: time.Second})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the read never reached the interactive runtime: %v", err)
		}
	}
	// Start-up work (garbage collection, the introspection dataflows'
	// first steps) may still be running: on a loaded machine the replica's
	// threads get a fraction of a core, and a fixed one-second pause once
	// let 190 ms of it into the window. Wait for a quiet second (at most
	// one clock tick) instead; a replica that polls never has one.
	pid := r.procs[0].cmd.Process.Pid
	before, err := cpuTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	for settled := time.Now().Add(settleFor); ; {
		time.Sleep(time.Second)
		now, err := cpuTime(pid)
		if err != nil {
			t.Fatal(err)
		}
		if now-before <= time.Second/clockTicks {
			before = now
			break
		}
		if time.Now().After(settled) {
			t.Fatalf("replica never idle for a second in %v (%v CPU in the last one): something polls", settleFor, now-before)
		}
		before = now
	}
	time.Sleep(window)
	after, err := cpuTime(pid)
	if err != nil {
		t.Fatal(err)
	}
	used := after - before
	t.Logf("idle two-runtime replica (2+2 workers, one parked interactive read): %v CPU in %v (%.2f%% of one core)",
		used, window, 100*used.Seconds()/window.Seconds())
	if err := <-done; err != nil {
		t.Fatalf("idle script: %v", err)
	}
	if limit := window / 30; used > limit {
		t.Fatalf("idle replica used %v CPU in %v, want at most %v: something polls", used, window, limit)
	}
}
