package placement

import (
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
)

// Renders reports whether a runtime of role renders dataflows of class. An
// unspecified class is treated as Maintained.
func Renders(role runtime.Role, class plan.DataflowClass) bool {
	switch role {
	case runtime.Solo:
		return true
	case runtime.Interactive:
		return interactiveClass(class)
	default:
		return !interactiveClass(class)
	}
}

// interactiveClass reports whether a two-runtime process renders class on
// its interactive runtime: one client's reads, once (OneShotRead) or for as
// long as the client stays (LiveRead, a SUBSCRIBE).
func interactiveClass(class plan.DataflowClass) bool {
	return class == plan.ClassOneShotRead || class == plan.ClassLiveRead
}
