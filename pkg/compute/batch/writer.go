package batch

import "github.com/tandemdb/tandem/pkg/compute/frontier"

// writer appends sorted, consolidated updates to a batch under construction.
// The caller announces a key, pushes the updates of one value, seals the
// value, and so on; values without updates and keys without values are never
// written, so cancelled updates leave no trace.
//
// A writer with a part size (newPartWriter) writes its output as parts:
// plain batches of about partUpdates updates each, split between keys, each
// allocated when the first update of it is written and sealed once full.
// No call then allocates, clears or seals more than one part's worth of
// memory, whatever the size of the whole output; finish returns the parts
// as one batch (parted.go). Without a part size (newWriter, a Builder's
// one-call build) the output is one plain batch, allocated up front.
type writer struct {
	desc Description
	// left bounds what remains to be written: the inputs' sizes minus
	// what was written (a merge never writes more than it reads).
	left sizes
	// partUpds is the updates after which a part is sealed at the next
	// key boundary, partBytes the key and value bytes; 0: one part.
	partUpds, partBytes int

	out        *Batch // part being written; nil before its first update
	parts      []*Batch
	key        []byte // announced key (borrowed until the next startKey)
	keyWritten bool
	tooLarge   bool
	// allocBytes counts the column capacity allocated for parts, for
	// tests (the bytes one call may allocate are bounded by a part's).
	allocBytes int
	// spare is the heap columns of the last part sealed into an arena,
	// free for the next part (nil when there are none).
	spare *spareColumns
}

// spareColumns are the heap columns a part was written in before sealing
// moved its data into an arena. Writing the next part into them, instead
// of allocating it, keeps a merge's output from allocating its own size
// in garbage: with the arrangements off the heap, that garbage was most of
// what the heap allocated during hydration, and set how often the
// collector ran (and, while it ran, put every write of a column pointer
// behind a write barrier).
type spareColumns struct {
	keyData, valData                   []byte
	keyOffs, keyVals, valOffs, valUpds []uint32
	times                              []frontier.Time
	diffs                              []int64
}

// maxSpareBytes bounds the spare columns a writer (and a Builder between
// builds) keeps: a part's worth and some.
const maxSpareBytes = 8 << 20

// columnsOf returns b's columns before sealing, or nil if they are too
// large to keep as spare.
func columnsOf(b *Batch) *spareColumns {
	c := &spareColumns{b.keyData, b.valData, b.keyOffs, b.keyVals, b.valOffs, b.valUpds, b.times, b.diffs}
	const u32 = 4
	n := cap(c.keyData) + cap(c.valData) + u32*(cap(c.keyOffs)+cap(c.keyVals)+cap(c.valOffs)+cap(c.valUpds)) + 8*(cap(c.times)+cap(c.diffs))
	if n > maxSpareBytes {
		return nil
	}
	return c
}

// seal seals o and keeps its heap columns as spare when their data moved
// into an arena (the sealed batch then references none of them).
func (w *writer) seal(o *Batch) *Batch {
	cols := columnsOf(o)
	p := seal(o)
	if p.arena != nil && cols != nil {
		w.spare = cols
	}
	return p
}

// reuse returns s emptied if it has room for n, else a new slice.
func reuse[E any](s []E, n int) []E {
	if s != nil && cap(s) >= n {
		return s[:0]
	}
	return make([]E, 0, n)
}

// sizes counts the columns of a batch (or of what is left to write).
type sizes struct{ keys, keyBytes, vals, valBytes, upds int }

func newWriter(desc Description, spare *spareColumns, keys, keyBytes, vals, valBytes, upds int) writer {
	w := writer{desc: desc, left: sizes{keys, keyBytes, vals, valBytes, upds}, spare: spare}
	w.out = w.alloc(w.left)
	return w
}

// Part sizes of a merge's output: a part is sealed once it holds
// partUpdates updates or partBytes bytes of keys and values. Small enough
// that allocating and sealing one part (a few MiB) is a fraction of a
// fuelled step's work; large enough that a million-key batch has tens of
// parts, not thousands, for cursors and seeks to cross.
const (
	partUpdates = 1 << 14
	partBytes   = 2 << 20
)

// newPartWriter returns a writer of at most left (the inputs' sizes) that
// writes its output in parts of about partUpds updates or partBytes bytes.
func newPartWriter(desc Description, left sizes, partUpds, partBytes int) writer {
	return writer{desc: desc, left: left, partUpds: partUpds, partBytes: partBytes}
}

// alloc returns an empty part with room for c, in the spare columns where
// they are large enough.
func (w *writer) alloc(c sizes) *Batch {
	w.allocBytes += c.keyBytes + c.valBytes + 8*(c.keys+c.vals+2) + 16*c.upds
	s := w.spare
	if s == nil {
		s = &spareColumns{}
	}
	w.spare = nil
	return &Batch{
		desc:    w.desc,
		keyData: reuse(s.keyData, c.keyBytes),
		keyOffs: append(reuse(s.keyOffs, c.keys+1), 0),
		keyVals: append(reuse(s.keyVals, c.keys+1), 0),
		valData: reuse(s.valData, c.valBytes),
		valOffs: append(reuse(s.valOffs, c.vals+1), 0),
		valUpds: append(reuse(s.valUpds, c.vals+1), 0),
		times:   reuse(s.times, c.upds),
		diffs:   reuse(s.diffs, c.upds),
	}
}

// startPart allocates the next part, sized by the share of what is left
// that one part is expected to hold (columns grow by append if a part's
// keys or values are larger than the average; clip trims what is unused).
func (w *writer) startPart() {
	l := w.left
	if w.partUpds <= 0 || l.upds <= 0 {
		w.out = w.alloc(l)
		return
	}
	share := func(n int) int {
		// n * partUpds / l.upds, rounded up, plus an eighth; at most n.
		s := (n*w.partUpds+l.upds-1)/l.upds + n*w.partUpds/l.upds/8 + 1
		return min(n, s)
	}
	c := sizes{share(l.keys), share(l.keyBytes), share(l.vals), share(l.valBytes), min(l.upds, w.partUpds+w.partUpds/8)}
	if b := c.keyBytes + c.valBytes; b > w.partBytes+w.partBytes/8 {
		// Large keys or values: size by bytes, not updates.
		f := float64(w.partBytes) / float64(b)
		c = sizes{int(float64(c.keys)*f) + 1, int(float64(c.keyBytes)*f) + 1, int(float64(c.vals)*f) + 1, int(float64(c.valBytes)*f) + 1, int(float64(c.upds)*f) + 1}
	}
	w.out = w.alloc(c)
}

func (w *writer) startKey(k []byte) {
	w.key = k
	w.keyWritten = false
}

func (w *writer) pushUpdate(t frontier.Time, d int64) {
	if w.out == nil {
		w.startPart()
	}
	w.out.times = append(w.out.times, t)
	w.out.diffs = append(w.out.diffs, d)
}

// pushUpdates appends a run of updates already sorted and consolidated.
func (w *writer) pushUpdates(ts []frontier.Time, ds []int64) {
	if w.out == nil {
		w.startPart()
	}
	w.out.times = append(w.out.times, ts...)
	w.out.diffs = append(w.out.diffs, ds...)
}

// sealVal ends the value v; it is written only if updates were pushed for it.
func (w *writer) sealVal(v []byte) {
	o := w.out
	if o == nil {
		return
	}
	n := len(o.times)
	if n == int(o.valUpds[len(o.valUpds)-1]) {
		return
	}
	if !w.keyWritten {
		o.keyData = append(o.keyData, w.key...)
		o.keyOffs = append(o.keyOffs, uint32(len(o.keyData)))
		w.keyWritten = true
		w.left.keys--
		w.left.keyBytes -= len(w.key)
	}
	w.left.upds -= n - int(o.valUpds[len(o.valUpds)-1])
	w.left.vals--
	w.left.valBytes -= len(v)
	o.valData = append(o.valData, v...)
	o.valOffs = append(o.valOffs, uint32(len(o.valData)))
	o.valUpds = append(o.valUpds, uint32(n))
	if len(o.keyData) > maxOffset || len(o.valData) > maxOffset || n > maxOffset {
		w.tooLarge = true
	}
}

// sealKey ends the announced key, and the part if it is full.
func (w *writer) sealKey() {
	if !w.keyWritten {
		return
	}
	o := w.out
	o.keyVals = append(o.keyVals, uint32(len(o.valOffs)-1))
	w.keyWritten = false
	if w.partUpds > 0 && (len(o.times) >= w.partUpds || len(o.keyData)+len(o.valData) >= w.partBytes) {
		p := w.seal(o)
		// Mapped beside the merge's inputs until the merge finishes.
		p.setArenaState(arenaMerging)
		w.parts = append(w.parts, p)
		w.out = nil
	}
}

func (w *writer) finish() (*Batch, error) {
	if w.tooLarge {
		return nil, ErrTooLarge
	}
	if w.out != nil {
		w.parts = append(w.parts, w.seal(w.out))
		w.out = nil
	}
	for _, p := range w.parts {
		p.setArenaState(arenaLive)
	}
	switch len(w.parts) {
	case 0:
		return seal(w.alloc(sizes{})), nil
	case 1:
		return w.parts[0], nil
	}
	return joinParts(w.desc, w.parts), nil
}

// sizeBytes returns the memory held by the output so far.
func (w *writer) sizeBytes() int {
	n := 0
	for _, p := range w.parts {
		n += p.SizeBytes()
	}
	if w.out != nil {
		n += w.out.SizeBytes()
	}
	return n
}
