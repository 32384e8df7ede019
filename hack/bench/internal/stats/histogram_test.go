package stats

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

func TestBucketsCoverEveryValueWithBoundedError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	values := []uint64{0, 1, 127, 128, 255, 256, 257, 511, 512, 1 << 40, 1<<63 - 1}
	for range 10000 {
		values = append(values, rng.Uint64()>>uint(rng.IntN(64)))
	}
	for _, v := range values {
		i := bucketIndex(v)
		if i < 0 || i >= numBuckets {
			t.Fatalf("value %d: bucket %d out of range", v, i)
		}
		up := bucketUpper(i)
		if up < v {
			t.Fatalf("value %d: bucket %d upper edge %d is below it", v, i, up)
		}
		if i > 0 && bucketUpper(i-1) >= v {
			t.Fatalf("value %d: previous bucket's edge %d already covers it", v, bucketUpper(i-1))
		}
		if v >= 2*subBuckets && float64(up-v) > float64(v)/subBuckets {
			t.Fatalf("value %d: edge %d exceeds the 1/%d error bound", v, up, subBuckets)
		}
	}
}

func TestQuantiles(t *testing.T) {
	uniform := make([]time.Duration, 0, 10000)
	for i := 1; i <= 10000; i++ {
		uniform = append(uniform, time.Duration(i)*time.Millisecond)
	}
	bimodal := make([]time.Duration, 0, 1000)
	for i := range 1000 {
		d := 2 * time.Millisecond
		if i%100 == 0 { // 1% slow
			d = 900 * time.Millisecond
		}
		bimodal = append(bimodal, d)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var expo []time.Duration
	for range 20000 {
		expo = append(expo, time.Duration(rng.ExpFloat64()*float64(5*time.Millisecond)))
	}
	cases := []struct {
		name   string
		values []time.Duration
	}{
		{"single", []time.Duration{7 * time.Millisecond}},
		{"constant", []time.Duration{3 * time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond}},
		{"uniform", uniform},
		{"bimodal", bimodal},
		{"exponential", expo},
		{"sub-microsecond", []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var h Histogram
			for _, v := range tc.values {
				h.Record(v)
			}
			sorted := append([]time.Duration(nil), tc.values...)
			sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
			if got, want := h.Max(), sorted[len(sorted)-1]; got != want {
				t.Errorf("max = %v, want exactly %v", got, want)
			}
			if got, want := h.Count(), uint64(len(sorted)); got != want {
				t.Errorf("count = %d, want %d", got, want)
			}
			for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
				// The exact nearest-rank quantile.
				rank := int(float64(len(sorted))*q + 0.999999)
				want := sorted[max(rank, 1)-1]
				got := h.Quantile(q)
				if got < want {
					t.Errorf("q%.3f = %v, below the true %v (must never under-report)", q, got, want)
				}
				if float64(got-want) > float64(want)/subBuckets+1 {
					t.Errorf("q%.3f = %v, more than 1/%d above the true %v", q, got, subBuckets, want)
				}
			}
		})
	}
}

func TestEmptyHistogram(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 || h.Max() != 0 || h.Count() != 0 {
		t.Fatalf("empty histogram reports %v/%v/%d", h.Quantile(0.5), h.Max(), h.Count())
	}
}

func TestMergeEqualsRecordingTogether(t *testing.T) {
	var a, b, both Histogram
	for i := range 500 {
		d := time.Duration(i*i) * time.Microsecond
		both.Record(d)
		if i%2 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(&b)
	for _, q := range []float64{0, 0.5, 0.99, 1} {
		if a.Quantile(q) != both.Quantile(q) {
			t.Errorf("q%v: merged %v, together %v", q, a.Quantile(q), both.Quantile(q))
		}
	}
	if a.Min() != both.Min() || a.Max() != both.Max() || a.Count() != both.Count() {
		t.Errorf("merged min/max/count %v/%v/%d, together %v/%v/%d", a.Min(), a.Max(), a.Count(), both.Min(), both.Max(), both.Count())
	}
}
