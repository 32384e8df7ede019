// Package sharing is the per-process registry through which the maintenance
// runtime publishes its arrangements and the interactive runtime reads them in
// place, without copying.
//
// One Registry per replica process. It has one publication Point per
// (GlobalId, worker ordinal, incarnation). The maintenance worker that owns
// shard w of index I publishes into (I, w, n); interactive worker w reads the
// same point, so no data ever crosses workers between the runtimes. The
// incarnation counts how often this process has seen a dataflow export I, so
// a re-created index never aliases the point of its predecessor. Both
// runtimes see the same command stream and therefore agree on it.
//
// The publisher keeps its own trace; after each change it publishes an
// immutable Snapshot (batch chain, since, upper) that readers load without
// taking the trace's lock, so a reader never waits behind a long maintenance
// step. Batches are never mutated, so a captured chain stays readable for as
// long as a reader keeps it; holds decide only what future compaction may
// forget.
//
// Invariant I1c. For every published index, the publisher's since is at or
// below the reading runtime's standing hold on it: the as_of of the index's
// CreateDataflow, advanced by every AllowCompaction for it that the reading
// runtime has applied. The point owns a "shared" handle on the publisher's
// trace whose logical frontier is the meet of the standing hold and of every
// reader hold; the trace compacts to the meet of its handles, so its since can
// never pass the standing hold. The standing hold only rises.
//
// Live readers. A follower (Import.Follow) is a reader hold that advances
// with a live reader's cursor. The shared handle's physical frontier follows
// its logical one, so the publisher merges freely below the readers' floor
// and keeps every batch boundary at or beyond it: a follower always finds a
// batch starting at its cursor, with every time at or beyond it intact.
//
// Placeholders. A reader may import a point before its publisher exists (the
// interactive runtime builds dataflows in command order and never defers a
// build). The point is then an empty placeholder; the publisher adopts it in
// place and waiting readers are woken.
//
// Waiting. A read whose point is unpublished, or not sealed at its time
// (t >= upper), waits on the point's change channel, which the publisher
// closes on every publication: notification, never polling.
//
// Hold gaps. HoldGaps reports, over the points published by one publisher
// role, the largest gap between the compaction the publisher asked for and
// what the readers' holds let it apply, each pair read under one point lock.
// Callers compute it on a coarse interval, not per maintenance step.
//
// Points are held weakly by the registry: once the publisher and every reader
// have let go, the point is collectable and its slot disappears.
package sharing
