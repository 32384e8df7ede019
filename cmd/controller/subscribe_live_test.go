package main

import (
	"bufio"
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestSubscribeOnInteractiveRuntime is the end-to-end test of SUBSCRIBE on
// the interactive runtime: with enable_compute_interactive_dataflows on, a
// SUBSCRIBE WITH (PROGRESS) to an indexed table, through pgwire, streams
// the snapshot and then the changes of later writes, with progress rows
// that never go back and never pass an update still to come; and the
// replica's interactive runtime reports a live import
// (tandem_compute_index_imports_total{read="live",role="interactive"}),
// so it was the interactive runtime that served it.
func TestSubscribeOnInteractiveRuntime(t *testing.T) {
	bin := buildBinaries(t)
	rc := startController(t, bin, t.TempDir(), "--system-parameter-default=enable_compute_interactive_dataflows=on")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	url := "postgres://tandem@" + rc.pgwireAddr + "/tandem?sslmode=disable"
	writer, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close(ctx)
	for _, q := range []string{
		"CREATE TABLE live_t (k bigint, v text)",
		"INSERT INTO live_t VALUES (1, 'a'), (2, 'b')",
		"CREATE INDEX live_t_k ON live_t (k)",
	} {
		if _, err := writer.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	sub, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close(ctx)
	if _, err := sub.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := sub.Exec(ctx, "DECLARE c CURSOR FOR SUBSCRIBE TO live_t WITH (PROGRESS)"); err != nil {
		t.Fatal(err)
	}
	s := &liveSubscription{t: t, conn: sub.PgConn(), state: map[string]int64{}}
	s.await(ctx, "1 a,2 b")
	for _, q := range []string{
		"INSERT INTO live_t VALUES (3, 'c')",
		"DELETE FROM live_t WHERE k = 1",
	} {
		if _, err := writer.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.await(ctx, "2 b,3 c")
	if s.progress == 0 {
		t.Fatal("no progress row arrived")
	}
	if _, err := sub.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	var live float64
	for _, addr := range rc.replicaMetricsAddrs(t) {
		live += scrapeLiveImports(ctx, t, addr)
	}
	if live == 0 {
		t.Fatal(`no replica reports tandem_compute_index_imports_total{read="live",role="interactive"}: the SUBSCRIBE was not served by the interactive runtime`)
	}
}

// liveSubscription reads a SUBSCRIBE WITH (PROGRESS) cursor: rows
// (mz_timestamp, mz_progressed, mz_diff, k, v).
type liveSubscription struct {
	t        *testing.T
	conn     *pgconn.PgConn
	state    map[string]int64
	last     uint64 // the latest progress timestamp
	progress int
}

// await fetches until the accumulated rows are want ("k v" sorted, comma
// separated), checking progress on every row.
func (s *liveSubscription) await(ctx context.Context, want string) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := s.conn.Exec(ctx, "FETCH ALL c WITH (timeout = '200ms')").ReadAll()
		if err != nil {
			s.t.Fatalf("fetch: %v", err)
		}
		for _, r := range res {
			for _, row := range r.Rows {
				s.take(row)
			}
		}
		if got := s.rows(); got == want {
			return
		} else if time.Now().After(deadline) {
			s.t.Fatalf("subscription holds %q, want %q", got, want)
		}
	}
}

func (s *liveSubscription) take(row [][]byte) {
	s.t.Helper()
	if len(row) != 5 {
		s.t.Fatalf("subscribe row has %d columns, want 5", len(row))
	}
	ts, err := strconv.ParseUint(string(row[0]), 10, 64)
	if err != nil {
		s.t.Fatalf("mz_timestamp %q: %v", row[0], err)
	}
	if ts < s.last {
		s.t.Fatalf("row at %d after progress to %d", ts, s.last)
	}
	if string(row[1]) == "t" {
		s.last, s.progress = ts, s.progress+1
		return
	}
	diff, err := strconv.ParseInt(string(row[2]), 10, 64)
	if err != nil {
		s.t.Fatalf("mz_diff %q: %v", row[2], err)
	}
	s.state[string(row[3])+" "+string(row[4])] += diff
}

func (s *liveSubscription) rows() string {
	var out []string
	for r, n := range s.state {
		for ; n > 0; n-- {
			out = append(out, r)
		}
		if n < 0 {
			out = append(out, "negative "+r)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// scrapeLiveImports returns the interactive runtime's live import count
// from a replica's /metrics.
func scrapeLiveImports(ctx context.Context, t *testing.T, addr string) float64 {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "tandem_compute_index_imports_total{") ||
			!strings.Contains(line, `read="live"`) || !strings.Contains(line, `role="interactive"`) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		return v
	}
	return 0
}
