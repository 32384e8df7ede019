package load

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// sleepOp models a server that takes d per request, on the bubble's fake
// clock, and honours cancellation.
func sleepOp(d time.Duration) Op {
	return func(ctx context.Context, _ int) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func TestRunTiming(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	type expect struct {
		latency, queue time.Duration
		censored       bool
	}
	cases := []struct {
		name    string
		rate    float64
		dur     time.Duration
		grace   time.Duration
		workers int
		service time.Duration
		want    func(i int) expect
		n       int
	}{
		{
			name: "idle server: latency is service time, no queueing",
			rate: 10, dur: time.Second, grace: time.Second, workers: 2, service: ms(5), n: 10,
			want: func(int) expect { return expect{latency: ms(5)} },
		},
		{
			// One worker, arrivals every 100 ms, 250 ms each: arrival i
			// starts at i*250 ms, so it queued i*150 ms. A closed loop
			// would report 250 ms for every request.
			name: "saturated server: queueing grows linearly and is counted",
			rate: 10, dur: time.Second, grace: 10 * time.Second, workers: 1, service: ms(250), n: 10,
			want: func(i int) expect { return expect{latency: ms(150*i + 250), queue: ms(150 * i)} },
		},
		{
			// One worker stuck for 10 s; the phase ends at 1.5 s. Nothing
			// completes, so everything is a lower bound up to the end.
			name: "stuck server: everything censored at the phase end",
			rate: 10, dur: time.Second, grace: ms(500), workers: 1, service: 10 * time.Second, n: 10,
			want: func(i int) expect {
				if i == 0 {
					return expect{latency: ms(1500), queue: 0, censored: true}
				}
				return expect{latency: ms(1500 - 100*i), queue: ms(1500 - 100*i), censored: true}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now().Add(ms(50))
				s := Schedule{Start: start, Rate: tc.rate, Duration: tc.dur, Grace: tc.grace}
				samples, err := Run(t.Context(), s, tc.workers, sleepOp(tc.service))
				if err != nil {
					t.Fatal(err)
				}
				if len(samples) != tc.n {
					t.Fatalf("%d samples, want %d", len(samples), tc.n)
				}
				for i, sm := range samples {
					if want := start.Add(ms(100 * i)); !sm.Scheduled.Equal(want) {
						t.Errorf("arrival %d scheduled at %v, want %v", i, sm.Scheduled.Sub(start), want.Sub(start))
					}
					w := tc.want(i)
					if sm.Latency != w.latency || sm.QueueDelay != w.queue || sm.Censored != w.censored {
						t.Errorf("arrival %d: latency %v queue %v censored %v, want %v %v %v",
							i, sm.Latency, sm.QueueDelay, sm.Censored, w.latency, w.queue, w.censored)
					}
				}
				c := Collect(samples, nil)
				if got := c.Latency.Summary(); got.Censored != tc.want(0).censored {
					t.Errorf("collected summary censored=%v", got.Censored)
				}
			})
		})
	}
}

func TestRunEndsEarlyWhenAllComplete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		begin := time.Now()
		s := Schedule{Start: begin, Rate: 100, Duration: time.Second, Grace: time.Hour}
		if _, err := Run(t.Context(), s, 4, sleepOp(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(begin); took > 2*time.Second {
			t.Fatalf("run took %v of fake time; it should not wait out a grace nobody needs", took)
		}
	})
}

func TestRunCancelledKeepsOnlyIssuedArrivals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 450*time.Millisecond)
		defer cancel()
		s := Schedule{Start: time.Now(), Rate: 10, Duration: 10 * time.Second, Grace: time.Second}
		samples, err := Run(ctx, s, 1, sleepOp(time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if len(samples) != 5 { // arrivals at 0, 100, ..., 400 ms
			t.Fatalf("%d samples after cancelling at 450 ms, want 5", len(samples))
		}
	})
}

func TestCollectSeparatesErrors(t *testing.T) {
	boom := errors.New("boom")
	samples := []Sample{
		{Latency: time.Millisecond},
		{Latency: 2 * time.Millisecond, Err: boom},
		{Latency: time.Second, Censored: true},
	}
	c := Collect(samples, nil)
	if c.Errors != 1 || !errors.Is(c.FirstError, boom) {
		t.Fatalf("errors %d (%v), want 1 (boom)", c.Errors, c.FirstError)
	}
	if got := c.Latency.Summary(); got.Count != 2 || !got.Censored || got.MaxMs != 1000 {
		t.Fatalf("latency summary %+v: want the error left out and the censored bound kept", got)
	}
}

func TestArrivals(t *testing.T) {
	base := time.Unix(0, 0)
	cases := []struct {
		rate float64
		dur  time.Duration
		want int
	}{
		{10, time.Second, 10},
		{3, time.Second, 3},
		{0.5, 3 * time.Second, 2}, // at 0 s and 2 s
		{7, 0, 0},
	}
	for _, tc := range cases {
		s := Schedule{Start: base, Rate: tc.rate, Duration: tc.dur}
		if got := s.Arrivals(); got != tc.want {
			t.Errorf("rate %v over %v: %d arrivals, want %d", tc.rate, tc.dur, got, tc.want)
		}
	}
}

func TestCapacity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got, err := Capacity(t.Context(), time.Second, 2, sleepOp(10*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if got < 190 || got > 200 {
			t.Fatalf("capacity %v/s, want about 200/s (2 workers x 10 ms)", got)
		}
	})
}

func TestCapacityReportsFailure(t *testing.T) {
	boom := errors.New("relation does not exist")
	_, err := Capacity(t.Context(), time.Second, 1, func(context.Context, int) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("capacity error %v, want it to wrap the request's error", err)
	}
}

func TestCapacitySlowerThanWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 4 workers, 3 s per request, a 1 s window: 4 requests in 3 s.
		got, err := Capacity(t.Context(), time.Second, 4, sleepOp(3*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if want := 4.0 / 3; got < want*0.99 || got > want*1.01 {
			t.Fatalf("capacity %v/s, want %v/s: in-flight requests must finish and count", got, want)
		}
	})
}
