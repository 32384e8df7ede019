package environment

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"google.golang.org/grpc"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/controller/testparams"
	"github.com/tandemdb/tandem/pkg/orchestrator/process"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/storage"
)

// fakeClock is a wall clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// openClockStack is openTableStack with the timestamp oracle on a fake
// clock and no ticker: table uppers advance only when the test calls
// store.Tick, at the clock's time.
func openClockStack(t *testing.T, dir string, clock *fakeClock) *stack {
	t.Helper()
	s := &stack{}
	var err error
	if s.cat, err = catalog.Open(dir); err != nil {
		t.Fatal(err)
	}
	if s.store, err = storage.Open(filepath.Join(dir, "storage"), storage.Options{Now: clock.Now}); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	storage.NewService(s.store).Register(srv)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	if s.orch, err = process.New(process.Config{ReplicaBinary: realReplica(t), Log: testr.New(t), LogDir: filepath.Join(dir, "logs"),
		Env: []string{"TANDEM_STORAGE_ADDR=" + lis.Addr().String()}}); err != nil {
		t.Fatal(err)
	}
	s.ctl = controller.New(controller.Config{Log: testr.New(t), Orchestrator: s.orch, Storage: s.store, Oracle: s.store.Oracle(), Now: clock.Now})
	s.ctl.Start()
	if s.env, err = Open(context.Background(), Config{Log: testr.New(t), Catalog: s.cat, Storage: s.store, Compute: s.ctl,
		ParamDefaults: testparams.Parameters(t)}); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTemporalViewFollowsTheClock maintains an index and a materialized
// view whose WHERE compares rows with now(), then only moves the clock
// (no write): each row must appear when its window opens and leave when
// it closes, and at every step the view must equal the one-shot query of
// the same predicate, whose now() is the same instant. A row deleted
// inside its window leaves at once.
func TestTemporalViewFollowsTheClock(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := &fakeClock{now: t0}
	s := openClockStack(t, dir, clock)
	defer s.close()
	eng := sql.NewEngine(s.env)
	eng.SetClock(clock.Now)
	// One-shot queries read strict serializable; the view is read
	// serializable (at the latest time its index or shard is complete,
	// which follows the table uppers the ticks advance) until it has
	// caught up, then strict serializable, which reads there too.
	strict, serializable := eng.NewSession("u"), eng.NewSession("u")
	se := strict
	exec := func(q string) [][]string {
		t.Helper()
		res, err := se.ExecuteSQL(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var out [][]string
		for _, r := range res[len(res)-1].Rows {
			var cells []string
			for _, d := range r {
				cells = append(cells, d.String())
			}
			out = append(out, cells)
		}
		return out
	}
	// Rows valid for 20 seconds from their time `at`.
	const pred = "at <= now() AND at + interval '20 seconds' > now()"
	exec("SET transaction_isolation = 'strict serializable'")
	se = serializable
	exec("SET transaction_isolation = 'serializable'")
	se = strict
	exec("CREATE TABLE ev (id int, at timestamptz)")
	exec("INSERT INTO ev VALUES (1, '2030-01-01 11:59:50+00'), (2, '2030-01-01 12:00:10+00'), " +
		"(3, '2030-01-01 12:00:25.0005+00'), (4, NULL), (5, '2030-01-01 12:00:05+00')")
	exec("CREATE VIEW live AS SELECT id FROM ev WHERE " + pred)
	exec("CREATE INDEX live_idx ON live (id)")
	exec("CREATE MATERIALIZED VIEW live_count AS SELECT count(*) AS n FROM ev WHERE " + pred)
	// A subscription to the same query sees each entry and exit at its
	// exact logical time.
	se = eng.NewSession("u")
	subscriber := se
	exec("BEGIN")
	exec("DECLARE c CURSOR FOR SUBSCRIBE TO (SELECT id FROM ev WHERE " + pred + ")")
	se = strict
	if plan := fmt.Sprint(exec("EXPLAIN SELECT id FROM ev WHERE " + pred)); strings.Contains(plan, "TemporalFilter") {
		t.Errorf("a one-shot EXPLAIN shows a temporal filter: %s", plan)
	}

	ids := func(rows [][]string) string {
		var out []string
		for _, r := range rows {
			out = append(out, r[0])
		}
		return strings.Join(out, ",")
	}
	// step moves the clock and the table uppers to t0+offset, with no
	// write, and reads the view once it has caught up.
	step := func(offset time.Duration, want string) {
		t.Helper()
		clock.Set(t0.Add(offset))
		if err := s.store.Tick(); err != nil {
			t.Fatal(err)
		}
		oneShot := ids(exec("SELECT id FROM ev WHERE " + pred + " ORDER BY id"))
		if oneShot != want {
			t.Errorf("at %v: one-shot query has %q, want %q", offset, oneShot, want)
		}
		var view, count string
		deadline := time.Now().Add(30 * time.Second)
		se = serializable
		defer func() { se = strict }()
		for {
			view = ids(exec("SELECT id FROM live ORDER BY id"))
			count = ids(exec("SELECT n FROM live_count"))
			if (view == want && count == wantCount(want)) || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if view != oneShot {
			t.Errorf("at %v: the view has %q, the one-shot query %q", offset, view, oneShot)
		}
		// A strict serializable read of the view (the default isolation)
		// is at the index's latest complete time too, so it follows the
		// clock with nothing written.
		se = strict
		if got := ids(exec("SELECT id FROM live ORDER BY id")); got != view {
			t.Errorf("at %v: a strict serializable read of the view has %q, a serializable one %q", offset, got, view)
		}
		if count != wantCount(want) {
			t.Errorf("at %v: the materialized view counts %s, want %s", offset, count, wantCount(want))
		}
	}
	// Windows: 1 [11:59:50, 12:00:10), 5 [12:00:05, 12:00:25), 2 [12:00:10,
	// 12:00:30), 3 [12:00:25.001, 12:00:45.001) (its bounds round up to
	// the millisecond), 4 none (NULL).
	step(0, "1")
	step(5*time.Second, "1,5")
	step(9999*time.Millisecond, "1,5")
	step(10*time.Second, "2,5")
	step(25*time.Second, "2")
	step(25*time.Second+time.Millisecond, "2,3")
	exec("DELETE FROM ev WHERE id = 2") // inside its window: leaves at once
	step(26*time.Second, "3")
	step(45*time.Second, "3")
	step(45*time.Second+time.Millisecond, "")

	// The subscription's changes after its snapshot, as "ms after t0:
	// diff id", must put every window edge at its exact millisecond.
	se = subscriber
	var changes []string
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(changes, "45001:-1 3") && time.Now().Before(deadline) {
		for _, r := range exec("FETCH ALL c WITH (timeout = '1s')") {
			ts, err := strconv.ParseInt(r[0], 10, 64)
			if err != nil {
				t.Fatalf("mz_timestamp %q: %v", r[0], err)
			}
			if ms := ts - t0.UnixMilli(); ms > 100 {
				changes = append(changes, fmt.Sprintf("%d:%s %s", ms, r[1], r[2]))
			}
		}
	}
	se = strict
	t.Logf("subscription changes: %q", changes)
	for _, want := range []string{"5000:1 5", "10000:-1 1", "10000:1 2", "25000:-1 5", "25001:1 3", "45001:-1 3"} {
		if !slices.Contains(changes, want) {
			t.Errorf("the subscription has no change %q: %q", want, changes)
		}
	}
}

// wantCount is count(*) of a comma-separated list of ids.
func wantCount(ids string) string {
	if ids == "" {
		return "0"
	}
	return fmt.Sprint(len(strings.Split(ids, ",")))
}
