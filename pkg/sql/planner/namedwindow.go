package planner

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Named windows. A query level's WINDOW clause names window definitions
// that its window calls use whole (OVER w) or refine (OVER (w ORDER BY
// ...)), and that later definitions of the clause refine in turn. Both
// are resolved here into the definition the call means, with
// PostgreSQL's rules: a refinement takes the named window's PARTITION
// BY and may not give its own, may add an ORDER BY only where the named
// window has none, and may not copy a window with a frame clause; its
// own frame applies.

// frameDefaults is PostgreSQL's FRAMEOPTION_DEFAULTS: RANGE UNBOUNDED
// PRECEDING to CURRENT ROW, the frame of a definition without one.
const frameDefaults = frameRange | frameStartUnboundedPre | frameEndCurrent

// namedWindows resolves a WINDOW clause, each definition against the ones
// before it.
func namedWindows(defs []*pg.Node) (map[string]*pg.WindowDef, error) {
	out := map[string]*pg.WindowDef{}
	for _, n := range defs {
		wd := n.GetWindowDef()
		if wd == nil || wd.Name == "" {
			return nil, sqlerr.New(sqlerr.SyntaxError, "malformed WINDOW clause")
		}
		if _, dup := out[wd.Name]; dup {
			return nil, sqlerr.Errorf("42P20", "window %q is already defined", wd.Name)
		}
		resolved, err := refineWindow(wd, out)
		if err != nil {
			return nil, err
		}
		out[wd.Name] = resolved
	}
	return out, nil
}

// overWindow returns the definition an OVER clause means.
func overWindow(over *pg.WindowDef, named map[string]*pg.WindowDef) (*pg.WindowDef, error) {
	if over.Name != "" {
		wd, ok := named[over.Name]
		if !ok {
			return nil, sqlerr.Errorf(sqlerr.UndefinedObject, "window %q does not exist", over.Name)
		}
		return wd, nil
	}
	return refineWindow(over, named)
}

// refineWindow returns wd with the window it names (Refname) copied in.
func refineWindow(wd *pg.WindowDef, named map[string]*pg.WindowDef) (*pg.WindowDef, error) {
	if wd.Refname == "" {
		return wd, nil
	}
	ref, ok := named[wd.Refname]
	switch {
	case !ok:
		return nil, sqlerr.Errorf(sqlerr.UndefinedObject, "window %q does not exist", wd.Refname)
	case len(wd.PartitionClause) > 0:
		return nil, sqlerr.Errorf("42P20", "cannot override PARTITION BY clause of window %q", wd.Refname)
	case len(wd.OrderClause) > 0 && len(ref.OrderClause) > 0:
		return nil, sqlerr.Errorf("42P20", "cannot override ORDER BY clause of window %q", wd.Refname)
	case ref.FrameOptions != frameDefaults:
		return nil, sqlerr.Errorf("42P20", "cannot copy window %q because it has a frame clause", wd.Refname)
	}
	out := &pg.WindowDef{
		Name:            wd.Name,
		PartitionClause: ref.PartitionClause,
		OrderClause:     wd.OrderClause,
		FrameOptions:    wd.FrameOptions,
		StartOffset:     wd.StartOffset,
		EndOffset:       wd.EndOffset,
		Location:        wd.Location,
	}
	if len(out.OrderClause) == 0 {
		out.OrderClause = ref.OrderClause
	}
	return out, nil
}
