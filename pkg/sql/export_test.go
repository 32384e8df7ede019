package sql

// SetOnViewPlan sets the engine's hook called each time a statement plans
// a view's definition, for tests that count them.
func (e *Engine) SetOnViewPlan(f func(view string)) { e.onViewPlan = f }
