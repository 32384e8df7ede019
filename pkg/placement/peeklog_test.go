package placement

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/logging"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
)

// twoRuntimes is a two-runtime process in miniature: real maintenance and
// interactive runtimes behind a multiplexer, introspection enabled.
type twoRuntimes struct {
	mux *Multiplexer
	ids map[logging.Relation]plan.GlobalID

	mu      sync.Mutex
	answers map[string]chan *runtime.PeekResponse
}

func startTwoRuntimes(t *testing.T, policy Policy) *twoRuntimes {
	t.Helper()
	const workers = 2
	p := &twoRuntimes{ids: map[logging.Relation]plan.GlobalID{}, answers: map[string]chan *runtime.PeekResponse{}}
	tp := newTestProcess(t, workers, policy, false, p.respond, func(runtime.Role) runtime.Config {
		return runtime.Config{Workers: workers, Processes: 1}
	})
	p.mux = tp.mux
	mrt, irt, inter := tp.mrt, tp.irt, tp.inter
	ctx, cancel := context.WithCancel(context.Background())
	mrt.Start(ctx)
	irt.Start(ctx)
	t.Cleanup(func() {
		inter.Close()
		irt.Stop()
		mrt.Stop()
		cancel()
	})
	for i, rel := range logging.Relations() {
		p.ids[rel] = plan.System(uint64(i + 1))
	}
	if err := p.mux.EnableIntrospection(p.ids, 10*time.Millisecond, frontier.At(frontier.Time(time.Now().UnixMilli()))); err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *twoRuntimes) respond(r runtime.Response) {
	pr, ok := r.(*runtime.PeekResponse)
	if !ok {
		return
	}
	p.mu.Lock()
	ch := p.answers[pr.UUID]
	p.mu.Unlock()
	if ch != nil {
		ch <- pr
	}
}

// start issues a peek and returns the channel its response arrives on.
func (p *twoRuntimes) start(uuid string, target plan.GlobalID, ts frontier.Time) chan *runtime.PeekResponse {
	ch := make(chan *runtime.PeekResponse, 2)
	p.mu.Lock()
	p.answers[uuid] = ch
	p.mu.Unlock()
	p.mux.Peek(runtime.Peek{UUID: uuid, Target: target, Timestamp: ts})
	return ch
}

// eventually peeks relation rel (now + 20 ms) until ok accepts the rows.
func (p *twoRuntimes) eventually(t *testing.T, rel logging.Relation, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; ; n++ {
		uuid := fmt.Sprintf("read-%s-%d", rel, n)
		resp := waitFor(t, p.start(uuid, p.ids[rel], frontier.Time(time.Now().UnixMilli())+20))
		if resp.Error != nil {
			t.Fatalf("read %s: %v", rel, resp.Error)
		}
		var rows []string
		for _, rc := range resp.Rows {
			rows = append(rows, fmt.Sprintf("%s x%d", rc.Row, rc.Count))
		}
		got := strings.Join(rows, "; ")
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never satisfied the test: %s", rel, got)
		}
	}
}

func waitFor(t *testing.T, ch chan *runtime.PeekResponse) *runtime.PeekResponse {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no peek response")
		return nil
	}
}

// peekCount sums the count column of peek_durations rows "(process, le,
// count) xN".
func peekCount(rows string) int64 {
	var total int64
	for _, r := range strings.Split(rows, "; ") {
		var proc, le, n, mult int64
		if _, err := fmt.Sscanf(r, "(%d, %d, %d) x%d", &proc, &le, &n, &mult); err == nil {
			total += n * mult
		}
	}
	return total
}

// TestInteractivePeeksInIntrospection: peeks the interactive runtime serves
// appear in the maintenance runtime's active-peeks relation while pending
// and in its peek-duration histogram once answered, even though the
// interactive runtime keeps no logging of its own. All reads here are
// routed to the interactive runtime (they are served from maintenance's
// published introspection indexes), so every count below comes through the
// forwarding; without it the pending peek never shows and the histogram
// stays empty.
func TestInteractivePeeksInIntrospection(t *testing.T) {
	p := startTwoRuntimes(t, RouteInteractive)
	// A peek far in the future on a maintained (introspection) index waits
	// on the interactive runtime.
	pending := p.start("pending-peek", p.ids[logging.Arrangements], frontier.Time(time.Now().Add(time.Hour).UnixMilli()))
	p.eventually(t, logging.Peeks, func(got string) bool {
		return strings.Contains(got, "'pending-peek', '"+p.ids[logging.Arrangements].String()+"'")
	})
	before := peekCount(p.eventually(t, logging.PeekDurations, func(got string) bool { return peekCount(got) > 0 }))
	p.mux.CancelPeek("pending-peek")
	if resp := waitFor(t, pending); !resp.Canceled {
		t.Fatalf("pending peek answered %+v, want canceled", resp)
	}
	// The canceled peek leaves the active peeks and is counted (with the
	// reads issued meanwhile: the count only grows).
	p.eventually(t, logging.Peeks, func(got string) bool { return !strings.Contains(got, "'pending-peek'") })
	p.eventually(t, logging.PeekDurations, func(got string) bool { return peekCount(got) > before })
}

// TestMultiplexerLogsOnlyInteractivePeeks checks the forwarding itself:
// one start and one finish per interactive peek (even when the runtime
// answers twice), none for maintenance peeks, which their own runtime logs.
func TestMultiplexerLogsOnlyInteractivePeeks(t *testing.T) {
	h := &harness{}
	var logMu sync.Mutex
	var pl *recordingPeekLog
	h.mux = mustMultiplexer(NewMultiplexer(func(r runtime.Response) {}, RouteMaintenance, func(respondFor func(runtime.Role) func(runtime.Response)) (Runtimes, error) {
		h.m = &fakeRuntime{name: "m", log: &h.log, mu: &logMu, respond: respondFor(runtime.Maintenance)}
		h.i = &fakeRuntime{name: "i", log: &h.log, mu: &logMu, respond: respondFor(runtime.Interactive)}
		pl = &recordingPeekLog{fakeRuntime: h.m}
		return Runtimes{Maintenance: pl, Interactive: h.i}, nil
	}))
	_ = h.mux.CreateDataflow(dataflow(plan.User(1), plan.ClassMaintained))
	_ = h.mux.CreateDataflow(dataflow(plan.Transient(2), plan.ClassOneShotRead))
	h.mux.Peek(runtime.Peek{UUID: "on-maintenance", Target: plan.User(1), Timestamp: 1})
	h.mux.Peek(runtime.Peek{UUID: "on-interactive", Target: plan.Transient(2), Timestamp: 1})
	want := []string{"start on-interactive", "finish on-interactive"}
	if fmt.Sprint(pl.events) != fmt.Sprint(want) {
		t.Fatalf("peek log %v, want %v", pl.events, want)
	}
}

type recordingPeekLog struct {
	*fakeRuntime
	events []string
}

func (r *recordingPeekLog) ForeignPeekStarted(p runtime.Peek) {
	r.events = append(r.events, "start "+p.UUID)
}

func (r *recordingPeekLog) ForeignPeekFinished(uuid string, d time.Duration) {
	if d < 0 {
		r.events = append(r.events, "negative duration "+uuid)
	}
	r.events = append(r.events, "finish "+uuid)
}
