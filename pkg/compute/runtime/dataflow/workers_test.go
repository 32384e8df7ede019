package dataflow

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func keyHash(u Update) uint64 {
	h := fnv.New64a()
	h.Write(u.Key)
	return h.Sum64()
}

// feed is a test source: the test pushes updates and an upper from its own
// goroutine; the operator emits them on its worker.
type feed struct {
	mu      sync.Mutex
	pending []Update
	upper   frontier.Frontier
	act     func()
	dropped bool
}

func (f *feed) push(ups []Update, upper frontier.Frontier) {
	f.mu.Lock()
	f.pending = append(f.pending, ups...)
	f.upper = upper
	act := f.act
	f.mu.Unlock()
	act()
}

func (f *feed) Schedule(op *Operator) {
	f.mu.Lock()
	ups, upper := f.pending, f.upper
	f.pending = nil
	f.mu.Unlock()
	op.Output(0).SendUpdates(ups)
	op.SetHold(upper)
}

func (f *feed) Drop() { f.dropped = true }

// collector records what each worker's input received and checks that no
// update arrives at a time its input frontier has already passed.
type collector struct {
	mu        sync.Mutex
	got       map[int][]Update // by worker
	late      []string
	frontiers map[int][]frontier.Frontier
	closed    chan int
}

func newCollector() *collector {
	return &collector{got: map[int][]Update{}, frontiers: map[int][]frontier.Frontier{}, closed: make(chan int, 64)}
}

func (c *collector) logic(op *Operator) Logic {
	var last frontier.Frontier
	return LogicFunc(func(op *Operator) {
		in := op.Input(0)
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, d := range in.Take() {
			for _, u := range d.([]Update) {
				if !last.LessEqualTime(u.Time) {
					c.late = append(c.late, fmt.Sprintf("worker %d: update at %d after frontier %v", op.Worker().Index(), u.Time, last))
				}
				c.got[op.Worker().Index()] = append(c.got[op.Worker().Index()], u)
			}
		}
		if f := in.Frontier(); f != last {
			c.frontiers[op.Worker().Index()] = append(c.frontiers[op.Worker().Index()], f)
			last = f
			if f.IsClosed() {
				c.closed <- op.Worker().Index()
			}
		}
	})
}

func TestExchangeAndFrontiers(t *testing.T) {
	for _, tt := range []struct{ w, p int }{{1, 1}, {2, 1}, {4, 1}, {2, 2}, {1, 3}} {
		t.Run(fmt.Sprintf("W%dxP%d", tt.w, tt.p), func(t *testing.T) {
			testExchange(t, tt.w, tt.p)
		})
	}
}

func testExchange(t *testing.T, w, p int) {
	col := newCollector()
	fabrics := NewLocalFabrics(p)
	ctx, cancel := context.WithCancel(context.Background())
	var procs []*Workers
	defer func() {
		cancel()
		for _, ws := range procs {
			ws.Stop()
		}
	}()
	var feeds sync.Map
	for i := 0; i < p; i++ {
		cfg := Config{Workers: w, Processes: p, Process: i}
		if p > 1 {
			cfg.Fabric = fabrics[i]
		}
		ws, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, ws)
	}
	built := make(chan error, w*p)
	for _, ws := range procs {
		ws.Install("exchange", func(b *Builder) error {
			f := &feed{upper: frontier.Minimum()}
			src := b.AddOperator("feed", nil, 1, f)
			f.mu.Lock()
			f.act = src.Activator()
			f.mu.Unlock()
			feeds.Store(b.Worker().Index(), f)
			b.AddOperator("collect", []Connection{{From: src.Stream(0), Exchange: keyHash}}, 0, col.logic(nil))
			return nil
		}, func(_ *Worker, err error) { built <- err })
	}
	// Start after installing so that processes build at different moments
	// relative to each other's messages only through scheduling; data for a
	// not-yet-built dataflow is exercised by starting processes in turn.
	for _, ws := range procs {
		ws.Start(ctx)
	}
	for i := 0; i < w*p; i++ {
		if err := <-built; err != nil {
			t.Fatal(err)
		}
	}
	peers := w * p
	var want []Update
	// Each source worker emits keys at increasing times, advancing its upper
	// in several rounds.
	for round := 0; round < 3; round++ {
		for src := 0; src < peers; src++ {
			v, _ := feeds.Load(src)
			var ups []Update
			for k := 0; k < 5; k++ {
				u := Update{Key: []byte(fmt.Sprintf("k%d-%d-%d", src, round, k)), Val: []byte("v"), Time: frontier.Time(10*round + k), Diff: 1}
				ups = append(ups, u)
				want = append(want, u)
			}
			upper := frontier.At(frontier.Time(10 * (round + 1)))
			if round == 2 {
				upper = frontier.Closed()
			}
			v.(*feed).push(ups, upper)
		}
	}
	timeout := time.After(10 * time.Second)
	for i := 0; i < peers; i++ {
		select {
		case <-col.closed:
		case <-timeout:
			t.Fatalf("only %d of %d workers saw a closed frontier", i, peers)
		}
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.late) > 0 {
		t.Fatalf("late data: %v", col.late)
	}
	var got []Update
	for wi, ups := range col.got {
		for _, u := range ups {
			if owner := int(keyHash(u) % uint64(peers)); owner != wi {
				t.Errorf("key %s landed on worker %d, owner %d", u.Key, wi, owner)
			}
		}
		got = append(got, ups...)
	}
	sortUpdates(got)
	sortUpdates(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %d updates, want %d", len(got), len(want))
	}
	for wi, fs := range col.frontiers {
		for i := 1; i < len(fs); i++ {
			if !fs[i-1].LessEqual(fs[i]) {
				t.Errorf("worker %d frontier regressed: %v", wi, fs)
			}
		}
	}
	for _, ws := range procs {
		if ws.Regressions() != 0 || ws.Err() != nil {
			t.Fatalf("regressions %d, err %v", ws.Regressions(), ws.Err())
		}
	}
}

func sortUpdates(us []Update) {
	sort.Slice(us, func(i, j int) bool { return string(us[i].Key) < string(us[j].Key) })
}

// TestMessagesBeforeBuildAreBuffered starts two processes, builds the
// dataflow on process 0 only, lets it send data and frontiers to process
// 1, and only then builds it on process 1: nothing may be lost.
func TestMessagesBeforeBuildAreBuffered(t *testing.T) {
	fabrics := NewLocalFabrics(2)
	col := newCollector()
	var procs []*Workers
	for i := 0; i < 2; i++ {
		ws, err := New(Config{Workers: 1, Processes: 2, Process: i, Fabric: fabrics[i]})
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, ws)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		for _, ws := range procs {
			ws.Stop()
		}
	}()
	for _, ws := range procs {
		ws.Start(ctx)
	}
	var want []Update
	for k := 0; k < 20; k++ {
		want = append(want, Update{Key: []byte(fmt.Sprintf("k%02d", k)), Time: frontier.Time(k), Diff: 1})
	}
	sent := make(chan struct{})
	build := func(emit bool) func(b *Builder) error {
		return func(b *Builder) error {
			done := false
			src := b.AddOperator("src", nil, 1, LogicFunc(func(op *Operator) {
				if !done && emit {
					op.Output(0).SendUpdates(want)
					close(sent)
				}
				done = true
				op.SetHold(frontier.Closed())
			}))
			b.AddOperator("collect", []Connection{{From: src.Stream(0), Exchange: keyHash}}, 0, col.logic(nil))
			return nil
		}
	}
	procs[0].Install("late", build(true), nil)
	<-sent
	// Process 0 has sent its data and closed frontier; give the messages
	// time to land in process 1's inbox before it builds.
	time.Sleep(20 * time.Millisecond)
	procs[1].Install("late", build(false), nil)
	for i := 0; i < 2; i++ {
		select {
		case <-col.closed:
		case <-time.After(5 * time.Second):
			t.Fatal("a worker never saw the closed frontier")
		}
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	var got []Update
	for _, ups := range col.got {
		got = append(got, ups...)
	}
	if len(got) != len(want) || len(col.late) != 0 {
		t.Fatalf("got %d updates (late %v), want %d", len(got), col.late, len(want))
	}
}
