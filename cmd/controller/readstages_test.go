package main

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tandemdb/tandem/pkg/readtrace"
)

// counts scrapes the _count series of histogram name from a /metrics
// endpoint, summed by stage label over the other labels.
func stageCounts(t *testing.T, addr, name string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"_count{") {
			continue
		}
		_, rest, _ := strings.Cut(line, `stage="`)
		stage, _, _ := strings.Cut(rest, `"`)
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		out[stage] += v
	}
	return out
}

// TestReadRecordsEveryStageOnce: one SELECT of an indexed table through
// the real system is recorded once in every stage of the controller
// process (tandem_read_stage_seconds) and once in each replica stage
// (tandem_compute_read_stage_seconds).
func TestReadRecordsEveryStageOnce(t *testing.T) {
	bin := buildBinaries(t)
	rc := startController(t, bin, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, "postgres://tandem@"+rc.pgwireAddr+"/tandem?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{"CREATE TABLE t (a int)", "INSERT INTO t VALUES (1), (2)", "CREATE INDEX t_a ON t (a)"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if got := stageCounts(t, rc.httpAddr, "tandem_read_stage_seconds"); got["replica"] != 0 {
		t.Fatalf("reads recorded before any SELECT: %v", got)
	}
	var n int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("SELECT count(*): %d, %v", n, err)
	}
	got := stageCounts(t, rc.httpAddr, "tandem_read_stage_seconds")
	for _, s := range readtrace.Stages() {
		if got[s.String()] != 1 {
			t.Errorf("controller stage %s recorded %v times, want 1 (all: %v)", s, got[s.String()], got)
		}
	}
	addrs := rc.replicaMetricsAddrs(t)
	if len(addrs) != 1 {
		t.Fatalf("replica processes %v, want one", addrs)
	}
	rep := stageCounts(t, addrs[0], "tandem_compute_read_stage_seconds")
	for _, s := range []string{"command", "runtime"} {
		if rep[s] != 1 {
			t.Errorf("replica stage %s recorded %v times, want 1 (all: %v)", s, rep[s], rep)
		}
	}
}
