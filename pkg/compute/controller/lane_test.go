package controller_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/tandemdb/tandem/pkg/compute/controller"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/internaltls"
	"github.com/tandemdb/tandem/pkg/orchestrator/process"
)

// laneBreaker is the controller's lane dialer with a hand on every lane:
// the test takes lanes down (breakAll) or refuses new ones (refuse), and
// counts the commands lanes carried.
type laneBreaker struct {
	inner  controller.PeekLaneDialer
	refuse atomic.Bool
	// swallow makes lanes accept commands and drop them, as a lane whose
	// connection is dying does with what it has not written yet.
	swallow atomic.Bool
	sent    atomic.Int64
	mu      sync.Mutex
	lanes   []controller.Lane
}

func (b *laneBreaker) DialLane(ctx context.Context, adv, computectl, nonce string, onResponse func(*computepb.Response)) (controller.Lane, error) {
	if b.refuse.Load() {
		return nil, errors.New("lane refused by the test")
	}
	l, err := b.inner.DialLane(ctx, adv, computectl, nonce, onResponse)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.lanes = append(b.lanes, l)
	b.mu.Unlock()
	return countingLane{Lane: l, b: b}, nil
}

func (b *laneBreaker) breakAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.lanes {
		l.Close()
	}
	b.lanes = nil
}

type countingLane struct {
	controller.Lane
	b *laneBreaker
}

func (l countingLane) Send(c *computepb.Command) bool {
	if l.b.swallow.Load() {
		l.b.sent.Add(1)
		return true
	}
	if !l.Lane.Send(c) {
		return false
	}
	l.b.sent.Add(1)
	return true
}

// pointReaders read random keys of u1 (keys 0..keys-1) from readers
// goroutines until stop, a quarter of them cancelled after a random few
// hundred microseconds. Every read must end: with its key's one row, or
// with its context's error when it was cancelled.
type pointReaders struct {
	t        *testing.T
	ctl      *controller.Controller
	keys     int
	answered atomic.Int64
	canceled atomic.Int64
	stop     chan struct{}
	wg       sync.WaitGroup
}

func startPointReaders(t *testing.T, ctl *controller.Controller, keys, readers int, seed uint64) *pointReaders {
	pr := &pointReaders{t: t, ctl: ctl, keys: keys, stop: make(chan struct{})}
	for i := range readers {
		pr.wg.Add(1)
		go func() {
			defer pr.wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			for {
				select {
				case <-pr.stop:
					return
				default:
				}
				pr.readOnce(rng)
			}
		}()
	}
	return pr
}

func (pr *pointReaders) readOnce(rng *rand.Rand) {
	key := int64(rng.IntN(pr.keys))
	// Long enough for a replica restart and rehydration of a small index.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cancelled := rng.IntN(4) == 0
	if cancelled {
		time.AfterFunc(time.Duration(rng.IntN(500))*time.Microsecond, cancel)
	}
	res, err := pr.ctl.Peek(ctx, controller.PeekRequest{Cluster: "default", Target: plan.User(1), LiteralKeys: [][]byte{row.Pack(row.Int64(key))}})
	switch {
	case err != nil && cancelled && errors.Is(err, context.Canceled):
		pr.canceled.Add(1)
	case err != nil:
		pr.t.Errorf("read of key %d: %v", key, err)
	case len(res.Rows) != 1 || res.Rows[0].Count != 1:
		pr.t.Errorf("read of key %d: %d rows, want 1", key, len(res.Rows))
	default:
		d, err := res.Rows[0].Row.Unpack()
		if err != nil || len(d) == 0 || d[0] != row.Int64(key) {
			pr.t.Errorf("read of key %d answered row %v (%v)", key, d, err)
		}
		pr.answered.Add(1)
	}
}

func (pr *pointReaders) finish() {
	close(pr.stop)
	pr.wg.Wait()
}

// TestPeekLaneEveryReadAnsweredOnceUnderBreaksAndKills runs point reads
// with random cancels against a real replica while its peek lane is taken
// down again and again, loses the commands it was given, turned off by enable_peek_lane, refused (the reads
// fall back to the command stream) and while the replica process is killed: every read ends with
// its row or its cancellation, reads took the lane while it was up and
// not while it was refused, and no read or hold is left behind.
func TestPeekLaneEveryReadAnsweredOnceUnderBreaksAndKills(t *testing.T) {
	lanes := &laneBreaker{}
	e := newRealEnv(t, nil, func(c *controller.Config) { c.LaneDialer = lanes })
	e.replica("r1", 1, 1)
	const keys = 2000
	start := frontier.Time(time.Now().UnixMilli()) - 1000
	if _, err := e.ctl.CreateDataflow("default", kvIndex(1, 100, keys, start)); err != nil {
		t.Fatal(err)
	}
	e.waitFor("r1 hydrated", 60*time.Second, func() bool { return e.hydrated("r1", plan.User(1)) })
	e.waitFor("r1's peek lane", 30*time.Second, func() bool { return e.replicaStatus("r1").PeekLanes == 1 })
	baseHolds := e.ctl.OutstandingReadHolds()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	pr := startPointReaders(t, e.ctl, keys, 4, seed)
	phase := func(name string, d time.Duration, during func()) {
		t.Helper()
		before := pr.answered.Load()
		deadline := time.Now().Add(d)
		for time.Now().Before(deadline) {
			if during != nil {
				during()
			}
			time.Sleep(50 * time.Millisecond)
		}
		e.waitFor(name+": reads answered", 60*time.Second, func() bool { return pr.answered.Load() > before+20 })
	}

	phase("lane up", 500*time.Millisecond, nil)
	if lanes.sent.Load() == 0 {
		t.Fatal("no peek took the lane while it was up")
	}
	phase("lane broken again and again", time.Second, lanes.breakAll)
	// Commands lost with a lane: the controller sends them again on the
	// stream when it goes down.
	for range 3 {
		lanes.swallow.Store(true)
		time.Sleep(100 * time.Millisecond)
		lanes.breakAll()
		lanes.swallow.Store(false)
		e.waitFor("the lane back", 10*time.Second, func() bool { return e.replicaStatus("r1").PeekLanes == 1 })
	}
	phase("after lost commands", 200*time.Millisecond, nil)

	e.ctl.SetParameter(controller.ParamEnablePeekLane, "off")
	sentBefore := lanes.sent.Load()
	phase("enable_peek_lane off", 500*time.Millisecond, nil)
	if got := lanes.sent.Load(); got != sentBefore {
		t.Fatalf("%d commands took the lane with enable_peek_lane off", got-sentBefore)
	}
	e.ctl.SetParameter(controller.ParamEnablePeekLane, "on")

	lanes.refuse.Store(true)
	lanes.breakAll()
	e.waitFor("the lane down", 10*time.Second, func() bool { return e.replicaStatus("r1").PeekLanes == 0 })
	sentBefore = lanes.sent.Load()
	phase("lane refused", 500*time.Millisecond, nil)
	if got := lanes.sent.Load(); got != sentBefore {
		t.Fatalf("%d commands took a lane that was down", got-sentBefore)
	}

	lanes.refuse.Store(false)
	epoch := e.replicaStatus("r1").Epoch
	if err := syscall.Kill(e.pid("r1", 0), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.waitFor("r1 back with its lane", 90*time.Second, func() bool {
		st := e.replicaStatus("r1")
		return st.Epoch > epoch && st.PeekLanes == 1 && e.hydrated("r1", plan.User(1))
	})
	sentBefore = lanes.sent.Load()
	phase("after the restart", 500*time.Millisecond, nil)
	if lanes.sent.Load() == sentBefore {
		t.Fatal("no peek took the lane after the replica restarted")
	}
	pr.finish()

	e.waitFor("no read left behind", 10*time.Second, func() bool {
		return e.ctl.Status().Clusters[0].PendingPeeks == 0 && e.ctl.OutstandingReadHolds() == baseHolds
	})
	t.Logf("%d reads answered, %d cancelled; %d commands on lanes", pr.answered.Load(), pr.canceled.Load(), lanes.sent.Load())
}

// TestPeekLaneOverTCPWithMutualTLS is the Kubernetes shape of the lane:
// a replica with --peek-lane=tcp and the deployment's certificates serves
// its lane with mutual TLS, and point reads take it.
func TestPeekLaneOverTCPWithMutualTLS(t *testing.T) {
	dir := t.TempDir()
	auth, err := internaltls.EnsureAuthority(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := auth.Issue("replica")
	if err != nil {
		t.Fatal(err)
	}
	own, err := auth.Issue("controller")
	if err != nil {
		t.Fatal(err)
	}
	ccfg, err := internaltls.ClientConfig(own)
	if err != nil {
		t.Fatal(err)
	}
	logs := t.TempDir()
	t.Cleanup(func() { dumpReplicaLogs(t, logs) })
	orch, err := process.New(process.Config{ReplicaBinary: realReplica(t), Log: testr.New(t).WithName("orch"),
		LogDir: logs, MinBackoff: 50 * time.Millisecond, Env: []string{"TANDEM_PEEK_LANE=tcp",
			"TANDEM_INTERNAL_TLS_CA=" + rep.CA, "TANDEM_INTERNAL_TLS_CERT=" + rep.Cert, "TANDEM_INTERNAL_TLS_KEY=" + rep.Key}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { orch.Close() })
	lanes := &laneBreaker{inner: controller.PeekLaneDialer{TLS: ccfg}}
	e := newRealEnv(t, orch, func(c *controller.Config) {
		c.Dialer, c.LaneDialer = controller.GRPCDialer{TLS: ccfg}, lanes
	})
	e.replica("r1", 1, 1)
	const keys = 100
	start := frontier.Time(time.Now().UnixMilli()) - 1000
	if _, err := e.ctl.CreateDataflow("default", kvIndex(1, 100, keys, start)); err != nil {
		t.Fatal(err)
	}
	e.waitFor("r1 hydrated", 60*time.Second, func() bool { return e.hydrated("r1", plan.User(1)) })
	e.waitFor("r1's peek lane", 30*time.Second, func() bool { return e.replicaStatus("r1").PeekLanes == 1 })
	pr := startPointReaders(t, e.ctl, keys, 2, 1)
	e.waitFor("reads answered", 30*time.Second, func() bool { return pr.answered.Load() > 50 })
	pr.finish()
	if lanes.sent.Load() == 0 {
		t.Fatal("no read took the TCP lane")
	}
}
