package stats

import (
	"math"
	"math/bits"
	"time"
)

// subBucketBits sets the precision: each power-of-two range is split into
// 1<<subBucketBits linear sub-buckets, bounding the relative error of any
// recorded value's bucket by 2^-subBucketBits (under 0.8%).
const subBucketBits = 7

const (
	subBuckets = 1 << subBucketBits
	// numBuckets covers every non-negative int64 (bit length up to 63).
	numBuckets = (63-subBucketBits)*subBuckets + 2*subBuckets
)

// Histogram counts non-negative durations in log-linear buckets. The zero
// value is empty and ready to use. It is not safe for concurrent use.
type Histogram struct {
	counts []uint64
	total  uint64
	min    time.Duration
	max    time.Duration
}

// bucketIndex maps v >= 0 to its bucket. Values below 2*subBuckets have a
// bucket each; above that, a value keeps its top subBucketBits+1 bits.
func bucketIndex(v uint64) int {
	shift := bits.Len64(v) - (subBucketBits + 1)
	if shift < 0 {
		shift = 0
	}
	return shift*subBuckets + int(v>>uint(shift))
}

// bucketUpper is the largest value that maps to bucket i.
func bucketUpper(i int) uint64 {
	if i < 2*subBuckets {
		return uint64(i)
	}
	shift := i/subBuckets - 1
	mantissa := uint64(i - shift*subBuckets)
	return (mantissa+1)<<uint(shift) - 1
}

// Record adds one observation; negative durations count as zero (they
// can only come from clock steps and must not corrupt the buckets).
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	if h.counts == nil {
		h.counts = make([]uint64, numBuckets)
	}
	h.counts[bucketIndex(uint64(d))]++
	if h.total == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.total++
}

// Merge adds every observation of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.total == 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]uint64, numBuckets)
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.total == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.total += o.total
}

// Count is the number of observations.
func (h *Histogram) Count() uint64 { return h.total }

// Max is the exact largest observation (0 when empty).
func (h *Histogram) Max() time.Duration { return h.max }

// Min is the exact smallest observation (0 when empty).
func (h *Histogram) Min() time.Duration { return h.min }

// Quantile returns the value at quantile q in [0, 1]: the smallest bucket
// upper edge at or below which at least ceil(q*count) observations lie,
// clipped to the exact min and max. Empty histograms return 0.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	switch {
	case q <= 0 || math.IsNaN(q):
		return h.min
	case q >= 1:
		return h.max
	}
	rank := uint64(math.Ceil(q * float64(h.total)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			v := time.Duration(bucketUpper(i))
			return min(max(v, h.min), h.max)
		}
	}
	return h.max
}

// CountAtOrBelow is the number of observations whose bucket lies wholly at
// or below d; used to place censored bounds relative to a quantile.
func (h *Histogram) CountAtOrBelow(d time.Duration) uint64 {
	if h.total == 0 || d < 0 {
		return 0
	}
	var n uint64
	for i, c := range h.counts {
		if time.Duration(bucketUpper(i)) > d {
			break
		}
		n += c
	}
	return n
}
