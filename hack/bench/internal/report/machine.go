package report

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes the host for the report's "machine" field: CPU count
// as the scheduler sees it, CPU model and total memory. Unreadable /proc
// files leave their part out rather than failing the run.
func Machine() string {
	model, mem := "", int64(0)
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		model = cpuModel(f)
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		mem = memTotalBytes(f)
		f.Close()
	}
	return describe(runtime.NumCPU(), model, mem, runtime.GOOS, runtime.GOARCH)
}

func describe(cpus int, model string, memBytes int64, goos, goarch string) string {
	parts := []string{fmt.Sprintf("%d CPUs", cpus)}
	if model != "" {
		parts = append(parts, model)
	}
	if memBytes > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB RAM", float64(memBytes)/(1<<30)))
	}
	parts = append(parts, goos+"/"+goarch)
	return strings.Join(parts, ", ")
}

// cpuModel returns the first "model name" in /proc/cpuinfo text.
func cpuModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// memTotalBytes returns MemTotal from /proc/meminfo text (given in kB).
func memTotalBytes(r io.Reader) int64 {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}
