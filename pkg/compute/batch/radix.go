package batch

import "slices"

// radixMin is the batch size below which a comparison sort is cheaper than
// the radix passes' fixed cost (histograms of 64 Ki buckets).
const radixMin = 1 << 13

// sortStaged sorts upds by (key, val, time). Large inputs are first sorted
// by the 8-byte key prefix with an LSD radix sort (16-bit digits, skipping
// digits on which all updates agree), which moves each update a few times
// sequentially instead of O(log n) times; runs of equal prefix are then
// finished with a comparison sort. buf is scratch space; the sorted slice
// (upds or buf) is returned along with the other, for reuse.
func (b *Builder) sortStaged(upds, buf []staged) (sorted, spare []staged) {
	cmp := func(x, y staged) int {
		if c := b.compareKV(&x, &y); c != 0 {
			return c
		}
		switch {
		case x.time < y.time:
			return -1
		case x.time > y.time:
			return 1
		}
		return 0
	}
	n := len(upds)
	// Input that arrives sorted (generators, operators emitting in key
	// order) skips the sort, and then the gather in Build reads the stage
	// sequentially.
	sorted = upds
	for i := 1; i < n; i++ {
		if upds[i-1].prefix > upds[i].prefix || (upds[i-1].prefix == upds[i].prefix && cmp(upds[i-1], upds[i]) > 0) {
			sorted = nil
			break
		}
	}
	if sorted != nil {
		return upds, buf
	}
	if n < radixMin {
		slices.SortFunc(upds, cmp)
		return upds, buf
	}
	buf = slices.Grow(buf[:0], n)[:n]
	var counts [4][1 << 16]uint32
	for i := range upds {
		p := upds[i].prefix
		counts[0][uint16(p)]++
		counts[1][uint16(p>>16)]++
		counts[2][uint16(p>>32)]++
		counts[3][uint16(p>>48)]++
	}
	src, dst := upds, buf
	for d := range 4 {
		shift := 16 * uint(d)
		c := &counts[d]
		if int(c[uint16(src[0].prefix>>shift)]) == n {
			continue // every update has this digit
		}
		var sum uint32
		for i := range c {
			c[i], sum = sum, sum+c[i]
		}
		for i := range src {
			k := uint16(src[i].prefix >> shift)
			dst[c[k]] = src[i]
			c[k]++
		}
		src, dst = dst, src
	}
	// The radix passes are stable; finish runs of equal prefix.
	for i := 0; i < n; {
		j := i + 1
		for j < n && src[j].prefix == src[i].prefix {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(src[i:j], cmp)
		}
		i = j
	}
	return src, dst
}
