package runtime_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

// fakePublisher records the publication calls per (id, worker).
type fakePublisher struct {
	mu     sync.Mutex
	events []string
	uppers map[string]frontier.Frontier
	cond   chan struct{}
}

type fakePublication struct {
	p    *fakePublisher
	key  string
	okTr *trace.Trace
}

func (p *fakePublisher) log(s string) {
	p.mu.Lock()
	p.events = append(p.events, s)
	p.mu.Unlock()
	select {
	case p.cond <- struct{}{}:
	default:
	}
}

func (p *fakePublisher) Publish(id plan.GlobalID, worker int, ok, errs *trace.Trace) (runtime.Publication, error) {
	key := fmt.Sprintf("%s/%d", id, worker)
	p.log("publish " + key)
	return &fakePublication{p: p, key: key, okTr: ok}, nil
}

func (f *fakePublication) Refresh() error {
	f.p.mu.Lock()
	f.p.uppers[f.key] = f.okTr.Upper()
	f.p.mu.Unlock()
	f.p.log("refresh " + f.key)
	return nil
}

func (f *fakePublication) Compact(fr frontier.Frontier) error {
	f.p.log(fmt.Sprintf("compact %s %v", f.key, fr))
	return nil
}

func (f *fakePublication) Close() { f.p.log("close " + f.key) }

func (p *fakePublisher) waitFor(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		p.mu.Lock()
		have := map[string]bool{}
		for _, e := range p.events {
			have[e] = true
		}
		p.mu.Unlock()
		missing := ""
		for _, w := range want {
			if !have[w] {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		select {
		case <-p.cond:
		case <-deadline:
			t.Fatalf("publisher never saw %q; events %v", missing, p.events)
		}
	}
}

func TestPublisherHooks(t *testing.T) {
	pub := &fakePublisher{uppers: map[string]frontier.Frontier{}, cond: make(chan struct{}, 1)}
	tbl := render.NewMemoryTable()
	rt, err := runtime.New(runtime.Config{Workers: 2, Role: runtime.Maintenance, Publisher: pub,
		Sources: render.MemorySources{src: tbl}, Respond: func(runtime.Response) {}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	rt.Start(ctx)
	defer rt.Stop()
	if err := rt.CreateDataflow(indexDesc(0)); err != nil {
		t.Fatal(err)
	}
	pub.waitFor(t, "publish u3/0", "publish u3/1")
	if err := tbl.Append([]dataflow.Update{kv(1, 1, 1, 1)}, frontier.At(4)); err != nil {
		t.Fatal(err)
	}
	pub.waitFor(t, "refresh u3/0", "refresh u3/1")
	deadline := time.Now().Add(5 * time.Second)
	for {
		pub.mu.Lock()
		done := pub.uppers["u3/0"] == frontier.At(4) && pub.uppers["u3/1"] == frontier.At(4)
		pub.mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("refresh never saw upper [4]: %v", pub.uppers)
		}
		select {
		case <-pub.cond:
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := rt.AllowCompaction(index, frontier.At(3)); err != nil {
		t.Fatal(err)
	}
	pub.waitFor(t, "compact u3/0 [3]", "compact u3/1 [3]")
	if err := rt.AllowCompaction(index, frontier.Closed()); err != nil {
		t.Fatal(err)
	}
	pub.waitFor(t, "close u3/0", "close u3/1")
}
