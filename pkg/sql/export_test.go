package sql

// SetOnViewPlan sets the engine's hook called each time a statement plans
// a view's definition, for tests that count them.
func (e *Engine) SetOnViewPlan(f func(view string)) { e.onViewPlan = f }

// SnapshotBuilds returns how many catalog snapshots the engine has built.
func (e *Engine) SnapshotBuilds() uint64 { return e.snaps.built() }
