package offload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tandemdb/tandem/pkg/compute/batch"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/peek"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/trace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// randomRead builds a random arrangement (some keys with many values) and
// returns a read of it at a random time.
func randomRead(t *testing.T, rng *rand.Rand) trace.Read {
	t.Helper()
	tr := trace.New(frontier.Minimum())
	for lo := frontier.Time(0); lo < 5; lo++ {
		var b batch.Builder
		for range rng.IntN(3000) {
			k := rng.Int64N(50)
			if rng.IntN(4) == 0 {
				k = 7 // a skewed key
			}
			diff := int64(1)
			if rng.IntN(5) == 0 {
				diff = -1
			}
			v := row.Pack(row.Int64(k), row.Int64(rng.Int64N(100)))
			b.Push(row.Pack(row.Int64(k)), v, lo, diff)
			if diff < 0 { // keep multiplicities non-negative
				b.Push(row.Pack(row.Int64(k)), v, lo, 1)
			}
		}
		bat, err := b.Build(batch.Description{Lower: frontier.At(lo), Upper: frontier.At(lo + 1), Since: frontier.Minimum()})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Insert(bat); err != nil {
			t.Fatal(err)
		}
	}
	r, err := tr.ReadAt(frontier.Time(rng.IntN(5)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func run(t *testing.T, pool *Pool, r trace.Read, opts peek.Options, pol Policy) ([]peek.RowCount, error) {
	t.Helper()
	type out struct {
		rows []peek.RowCount
		err  error
	}
	ch := make(chan out, 1)
	w := peek.NewWalk(r, opts)
	if pool.Run(context.Background(), w, pol, func(rows []peek.RowCount, err error) { ch <- out{rows, err} }) {
		rows, err := w.Result()
		return rows, err
	}
	select {
	case o := <-ch:
		return o.rows, o.err
	case <-time.After(20 * time.Second):
		t.Fatal("walk never finished")
		return nil, nil
	}
}

func TestIdenticalResultsAcrossModes(t *testing.T) {
	pool := NewPool(2)
	defer pool.Close()
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 1))
		r := randomRead(t, rng)
		var opts peek.Options
		if rng.IntN(2) == 0 {
			opts.Keys = [][]byte{row.Pack(row.Int64(7)), row.Pack(row.Int64(rng.Int64N(50)))}
		}
		var want string
		for i, pol := range []Policy{{Mode: Inline}, {Mode: Budgeted, Budget: 1 + rng.IntN(50)}, {Mode: Always}} {
			rows, err := run(t, pool, r, opts, pol)
			got := fmt.Sprint(rows, err)
			if i == 0 {
				want = got
			} else if got != want {
				t.Fatalf("seed %d: %v differs from inline", seed, pol.Mode)
			}
		}
	}
	inline, offloaded := pool.Counts()
	if inline == 0 || offloaded == 0 {
		t.Fatalf("counts inline=%d offloaded=%d: both paths should have run", inline, offloaded)
	}
}

func TestCancelOffloadedWalk(t *testing.T) {
	pool := NewPool(1)
	defer pool.Close()
	r := randomRead(t, rand.New(rand.NewPCG(3, 3)))
	for range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		errc := make(chan error, 1)
		pool.Run(ctx, peek.NewWalk(r, peek.Options{}), Policy{Mode: Always}, func(_ []peek.RowCount, err error) { errc <- err })
		if err := <-errc; !errors.Is(err, context.Canceled) && err != nil {
			t.Fatalf("canceled walk ended with %v", err)
		}
	}
}

// TestManyCanceledWalksLeaveNothing checks, with goleak in TestMain and an
// explicit Close, that no goroutine survives many canceled offloaded walks,
// and that each walk's done ran exactly once.
func TestManyCanceledWalksLeaveNothing(t *testing.T) {
	pool := NewPool(3)
	r := randomRead(t, rand.New(rand.NewPCG(4, 4)))
	var mu sync.Mutex
	calls := map[int]int{}
	var wg sync.WaitGroup
	for i := range 500 {
		ctx, cancel := context.WithCancel(context.Background())
		wg.Add(1)
		finished := pool.Run(ctx, peek.NewWalk(r, peek.Options{}), Policy{Mode: Budgeted, Budget: 1}, func([]peek.RowCount, error) {
			mu.Lock()
			calls[i]++
			mu.Unlock()
			wg.Done()
		})
		if finished { // an empty walk ends within its first record
			mu.Lock()
			calls[i]++
			mu.Unlock()
			wg.Done()
		}
		if i%2 == 0 {
			cancel()
		} else {
			defer cancel()
		}
	}
	wg.Wait()
	pool.Close()
	for i, n := range calls {
		if n != 1 {
			t.Fatalf("walk %d finished %d times", i, n)
		}
	}
	if len(calls) != 500 {
		t.Fatalf("%d of 500 walks finished", len(calls))
	}
}

func TestPolicyUpdate(t *testing.T) {
	p, err := DefaultPolicy.Update(map[string]string{"peek_walk_mode": "offload", "peek_walk_budget": "7"})
	if err != nil || p.Mode != Always || p.Budget != 7 {
		t.Fatalf("got %+v, %v", p, err)
	}
	for _, bad := range []map[string]string{{"peek_walk_mode": "fast"}, {"peek_walk_budget": "0"}, {"peek_walk_budget": "x"}} {
		if _, err := DefaultPolicy.Update(bad); err == nil {
			t.Errorf("accepted %v", bad)
		}
	}
}
