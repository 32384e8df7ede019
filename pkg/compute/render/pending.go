package render

import (
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// pendingUpdates is an arrangement's updates not yet sealed: the update
// slices as they arrived, kept without copying, and their total length.
// The slices are read-only (a sender may have sent the same slice to
// several inputs); a consumed slice is dropped whole, a partly consumed one
// resliced.
//
// Keeping the slices, rather than appending their updates to one growing
// slice, keeps an arrangement's step proportional to what arrived in it:
// the one slice was re-copied (onto fresh, page-faulting memory) each time
// it grew, so a hydrating index's steps grew with its snapshot
// (BenchmarkChurnKeyValue's step profiles: 40-60 ms of CPU to take in 8,192
// updates with 100,000 pending, the longest steps of the hydration once the
// build's sorts were bounded).
type pendingUpdates struct {
	chunks [][]dataflow.Update
	n      int
}

// pendingOf wraps one slice.
func pendingOf(ups []dataflow.Update) pendingUpdates {
	var p pendingUpdates
	p.add(ups)
	return p
}

func (p *pendingUpdates) add(ups []dataflow.Update) {
	if len(ups) > 0 {
		p.chunks = append(p.chunks, ups)
		p.n += len(ups)
	}
}

// newest returns up to n of the most recently added updates (copied
// references, newest last).
func (p *pendingUpdates) newest(n int) []dataflow.Update {
	n = min(n, p.n)
	out := make([]dataflow.Update, n)
	at := n
	for i := len(p.chunks) - 1; i >= 0 && at > 0; i-- {
		c := p.chunks[i]
		k := min(at, len(c))
		copy(out[at-k:at], c[len(c)-k:])
		at -= k
	}
	return out
}

// bytesPerUpdate estimates the key and value bytes of a pending update
// from up to n of the oldest, an eighth more for the variation.
func (p *pendingUpdates) bytesPerUpdate(n int) int {
	seen, bytes := 0, 0
	for _, c := range p.chunks {
		for _, u := range c[:min(len(c), n-seen)] {
			bytes += len(u.Key) + len(u.Val)
		}
		seen += min(len(c), n-seen)
		if seen == n {
			break
		}
	}
	if seen == 0 {
		return 0
	}
	return bytes/seen + bytes/seen/8 + 1
}

// flatten copies every pending update into one new slice, which the caller
// owns.
func (p *pendingUpdates) flatten() []dataflow.Update {
	out := make([]dataflow.Update, 0, p.n)
	for _, c := range p.chunks {
		out = append(out, c...)
	}
	return out
}

// splitBefore removes and returns the updates at times before f1; the
// rest stay. Slices entirely before f1 move without copying; only a slice
// with updates on both sides is copied.
func (p *pendingUpdates) splitBefore(f1 frontier.Frontier) pendingUpdates {
	var ready, keep pendingUpdates
	for _, c := range p.chunks {
		before := 0
		for _, u := range c {
			if !f1.LessEqualTime(u.Time) {
				before++
			}
		}
		switch before {
		case len(c):
			ready.add(c)
		case 0:
			keep.add(c)
		default:
			r := make([]dataflow.Update, 0, before)
			k := make([]dataflow.Update, 0, len(c)-before)
			for _, u := range c {
				if f1.LessEqualTime(u.Time) {
					k = append(k, u)
				} else {
					r = append(r, u)
				}
			}
			ready.add(r)
			keep.add(k)
		}
	}
	*p = keep
	return ready
}

// take removes the n oldest updates (n <= p.n), calling f on each.
func (p *pendingUpdates) take(n int, f func(dataflow.Update)) {
	for n > 0 {
		c := p.chunks[0]
		k := min(n, len(c))
		for _, u := range c[:k] {
			f(u)
		}
		if k == len(c) {
			p.chunks[0] = nil
			p.chunks = p.chunks[1:]
		} else {
			p.chunks[0] = c[k:]
		}
		p.n -= k
		n -= k
	}
	if p.n == 0 {
		p.chunks = nil
	}
}
