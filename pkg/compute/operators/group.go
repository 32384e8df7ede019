package operators

// GroupLogic computes the output multiset of one group (one key) from its
// input multiset. input is sorted by value, consolidated, and never empty;
// the result must be sorted by value and consolidated, and must not alias
// input's backing array (it is kept while the input state changes). A
// non-nil error means the group is in error at this state: it then has no
// output rows and contributes the error to the error collection instead.
// The logic must be a deterministic function of (key, input): a reduction
// recomputes the output at the previous state to know what to retract.
type GroupLogic func(key []byte, input []ValDiff) ([]ValDiff, error)

// groupStepper runs the per-key, per-time scheme shared by every stateful
// unary operator. It keeps scratch buffers across keys.
type groupStepper struct {
	logic   GroupLogic
	state   []ValDiff
	next    []ValDiff
	changes []ValDiff
}

// step reduces one key: old is the key's accumulated input before the
// interval (sorted, consolidated), upds the key's updates inside the
// interval in any order (sorted in place). For each distinct new time in
// ascending order it applies that time's updates, recomputes the output,
// and emits the difference from the previous output at that time.
func (g *groupStepper) step(key []byte, old []ValDiff, upds []TimedVal, emit Emit, emitErr EmitErr) {
	if len(upds) == 0 {
		return
	}
	sortByTime(upds)
	g.state = append(g.state[:0], old...)
	prevOut, prevErr := g.eval(key, g.state)
	for i := 0; i < len(upds); {
		t := upds[i].Time
		g.changes = g.changes[:0]
		for ; i < len(upds) && upds[i].Time == t; i++ {
			g.changes = append(g.changes, ValDiff{Val: upds[i].Val, Diff: upds[i].Diff})
		}
		// upds is sorted by (time, val), so changes is val-sorted; only
		// equal values need summing.
		g.changes = Consolidate(g.changes)
		if len(g.changes) == 0 {
			continue
		}
		g.next = applySorted(g.next, g.state, g.changes)
		g.state, g.next = g.next, g.state
		out, err := g.eval(key, g.state)
		emitDifference(prevOut, out, t, emit)
		if !sameError(prevErr, err) {
			if prevErr != nil {
				emitErr(prevErr, t, -1)
			}
			if err != nil {
				emitErr(err, t, 1)
			}
		}
		prevOut, prevErr = out, err
	}
}

func (g *groupStepper) eval(key []byte, input []ValDiff) ([]ValDiff, error) {
	if len(input) == 0 {
		return nil, nil
	}
	out, err := g.logic(key, input)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error()
}
