package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// procCPU is the CPU time one process (or a group of them) used during
// pgbench -S. It is the number to move on a shared machine: wall time and
// TPS change with the load, CPU per transaction much less.
type procCPU struct {
	name string
	cpu  time.Duration
}

// cpuMeter reads the running total of CPU time of each of a server's
// processes; runPgbench calls it before and after the select-only run.
type cpuMeter func() []procCPU

// tandemCPU meters the controller and each replica process.
func tandemCPU(pid func() int, replicas func() ([]int, error)) cpuMeter {
	return func() []procCPU {
		out := []procCPU{{name: "controller", cpu: pidCPU(pid(), false)}}
		pids, _ := replicas()
		for i, p := range pids {
			name := "replica"
			if len(pids) > 1 {
				name = fmt.Sprintf("replica %d", i)
			}
			out = append(out, procCPU{name: name, cpu: pidCPU(p, false)})
		}
		return out
	}
}

// postgresCPU meters the postmaster with its reaped children: pgbench's
// backends exit when it disconnects and their CPU lands in the
// postmaster's cutime and cstime. Background processes that stay alive
// (checkpointer, walwriter) are not counted; they are idle under -S.
func postgresCPU(pid int) cpuMeter {
	return func() []procCPU {
		// A backend exits after pgbench's Terminate message, which
		// pgbench does not wait for: give the postmaster time to reap.
		time.Sleep(300 * time.Millisecond)
		return []procCPU{{name: "postgres", cpu: pidCPU(pid, true)}}
	}
}

// cpuDeltas subtracts two readings of one meter, process by process.
func cpuDeltas(before, after []procCPU) []procCPU {
	prev := map[string]time.Duration{}
	for _, p := range before {
		prev[p.name] = p.cpu
	}
	out := make([]procCPU, 0, len(after))
	for _, p := range after {
		out = append(out, procCPU{name: p.name, cpu: p.cpu - prev[p.name]})
	}
	return out
}

// pidCPU reads utime+stime of a process from /proc, and with children
// also cutime+cstime (its children it has waited for). The unit is the
// kernel's USER_HZ clock tick, 10 ms on Linux. An unreadable process
// counts as zero.
func pidCPU(pid int, children bool) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	ticks, err := parseStatCPU(string(b), children)
	if err != nil {
		return 0
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// parseStatCPU sums the CPU fields of a /proc/PID/stat line, in clock
// ticks. The command name in parentheses may hold spaces, so fields are
// counted from its closing parenthesis: utime is the 14th field of the
// line, stime the 15th, cutime and cstime the 16th and 17th.
func parseStatCPU(stat string, children bool) (int64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat %q: no command name", stat)
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 15 {
		return 0, fmt.Errorf("stat %q: %d fields after the name, want 15", stat, len(f))
	}
	n := 2
	if children {
		n = 4
	}
	var sum int64
	for _, s := range f[11 : 11+n] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat %q: %w", stat, err)
		}
		sum += v
	}
	return sum, nil
}

// processCPU is the CPU time the controller and its replicas used so far.
func processCPU(m cpuMeter) time.Duration {
	var total time.Duration
	for _, p := range m() {
		total += p.cpu
	}
	return total
}

// printCPU prints each process's CPU per transaction and their sum.
func printCPU(w io.Writer, system string, res *benchResult) {
	if res == nil || len(res.cpu) == 0 || res.run.Transactions == 0 {
		return
	}
	n := float64(res.run.Transactions)
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / n }
	var total time.Duration
	parts := make([]string, 0, len(res.cpu))
	for _, p := range res.cpu {
		total += p.cpu
		parts = append(parts, fmt.Sprintf("%s %.1f us (%.2f s)", p.name, per(p.cpu), p.cpu.Seconds()))
	}
	fmt.Fprintf(w, "\n%s, CPU per transaction of pgbench -S over %d transactions (/proc utime+stime; pgbench: its rusage):\n  %s; total %.1f us\n",
		system, res.run.Transactions, strings.Join(parts, ", "), per(total))
}
