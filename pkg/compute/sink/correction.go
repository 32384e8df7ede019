package sink

import (
	"bytes"
	"cmp"

	"github.com/tandemdb/tandem/pkg/compute/consolidate"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/render"
)

// Correction is the state of one writer: what the shard holds below its
// known upper, and the difference between the dataflow's output and that.
// It does no I/O; the Writer drives it. Not safe for concurrent use.
type Correction struct {
	asOf frontier.Time
	// known is set once the shard was read; upper is then the shard's
	// upper as far as this writer knows.
	known bool
	upper frontier.Time
	// persisted is the shard's contents below upper, by row.
	persisted map[string]int64
	// corr is desired minus persisted, unconsolidated; times below floor()
	// are read as floor().
	corr []Update
}

// NewCorrection returns the state of a writer whose dataflow started at
// asOf.
func NewCorrection(asOf frontier.Time) *Correction {
	return &Correction{asOf: asOf, persisted: map[string]int64{}}
}

// Known reports whether the shard was read, and its upper as known.
func (c *Correction) Known() (frontier.Time, bool) { return c.upper, c.known }

// floor is the earliest time the writer may still write at.
func (c *Correction) floor() frontier.Time { return max(c.upper, c.asOf) }

// AddDesired adds the dataflow's output updates: ok rows, and error rows,
// which are stored marked (render.StoredError) beside the ok rows so that
// readers of the shard fail with the view's errors.
func (c *Correction) AddDesired(ok, errs []Update) {
	c.corr = append(c.corr, ok...)
	for _, u := range errs {
		u.Row = render.StoredError(u.Row)
		c.corr = append(c.corr, u)
	}
}

// LearnShard applies a read of the shard: updates at or after the
// writer's known upper (or, when full, the shard's whole contents) and
// the shard's upper.
func (c *Correction) LearnShard(updates []Update, upper frontier.Time, full bool) {
	if full || !c.known {
		// Undo what was subtracted for the old contents, then subtract the
		// new ones.
		for r, d := range c.persisted {
			c.corr = append(c.corr, Update{Row: []byte(r), Time: c.floor(), Diff: d})
		}
		clear(c.persisted)
	}
	for _, u := range updates {
		c.subtractPersisted(u)
	}
	c.known = true
	c.upper = max(c.upper, upper)
}

func (c *Correction) subtractPersisted(u Update) {
	k := string(u.Row)
	if n := c.persisted[k] + u.Diff; n != 0 {
		c.persisted[k] = n
	} else {
		delete(c.persisted, k)
	}
	c.corr = append(c.corr, Update{Row: u.Row, Time: max(u.Time, c.floor()), Diff: -u.Diff})
}

// Batch returns what to append to move the shard's upper from the known
// upper to a new upper at most f: the consolidated correction at times
// below it. ok is false when there is nothing to advance (the shard is
// unknown, or already at or past f).
func (c *Correction) Batch(f frontier.Frontier) (updates []Update, upper frontier.Time, ok bool) {
	ft, open := f.Time()
	if !c.known || !open || ft <= c.upper {
		return nil, 0, false
	}
	floor := c.floor()
	c.corr = consolidateAt(c.corr, floor)
	for _, u := range c.corr {
		if u.Time >= ft {
			break
		}
		updates = append(updates, u)
	}
	return updates, ft, true
}

// Appended records that the batch from Batch was appended, moving the
// shard's upper to upper.
func (c *Correction) Appended(updates []Update, upper frontier.Time) {
	for _, u := range updates {
		c.subtractPersisted(u)
	}
	c.upper = max(c.upper, upper)
}

// Persisted returns the shard's contents below the known upper, by row
// (for tests and introspection).
func (c *Correction) Persisted() map[string]int64 { return c.persisted }

// Pending returns the number of unconsolidated correction updates held.
func (c *Correction) Pending() int { return len(c.corr) }

// consolidateAt moves times below floor to floor, then consolidates in
// place, sorted by (time, row).
func consolidateAt(us []Update, floor frontier.Time) []Update {
	for i := range us {
		if us[i].Time < floor {
			us[i].Time = floor
		}
	}
	return consolidate.Slice(us, byTimeRow, func(u *Update) *int64 { return &u.Diff })
}

func byTimeRow(a, b Update) int {
	if c := cmp.Compare(a.Time, b.Time); c != 0 {
		return c
	}
	return bytes.Compare(a.Row, b.Row)
}
