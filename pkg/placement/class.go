package placement

import (
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime"
)

// ClassFor is the controller's placement of a dataflow. A dataflow answers
// one read when it exports only transient ids and feeds no subscribe; such a
// dataflow is OneShotRead while interactive dataflows are enabled. Everything
// else (indexes, materialized views, subscribes, introspection) is
// Maintained.
func ClassFor(desc *plan.DataflowDescription, interactiveEnabled bool) plan.DataflowClass {
	if !interactiveEnabled || len(desc.SubscribeSinks) > 0 || len(desc.IndexExports) == 0 {
		return plan.ClassMaintained
	}
	for _, e := range desc.IndexExports {
		if e.ID.Kind != plan.KindTransient {
			return plan.ClassMaintained
		}
	}
	return plan.ClassOneShotRead
}

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
