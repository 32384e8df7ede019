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
		return class == plan.ClassOneShotRead
	default:
		return class != plan.ClassOneShotRead
	}
}
