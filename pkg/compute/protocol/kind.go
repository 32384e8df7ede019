package protocol

import "github.com/tandemdb/tandem/pkg/compute/protocol/computepb"

// Command kind names, used in logs, metrics labels and CommandError.command.
const (
	KindHello                  = "hello"
	KindCreateInstance         = "create_instance"
	KindInitializationComplete = "initialization_complete"
	KindUpdateConfiguration    = "update_configuration"
	KindCreateDataflow         = "create_dataflow"
	KindSchedule               = "schedule"
	KindAllowCompaction        = "allow_compaction"
	KindPeek                   = "peek"
	KindCancelPeek             = "cancel_peek"
	KindUnknown                = "unknown"
)

// CommandKinds lists every known command kind, e.g. to pre-register metric
// label values.
var CommandKinds = [...]string{
	KindHello, KindCreateInstance, KindInitializationComplete, KindUpdateConfiguration,
	KindCreateDataflow, KindSchedule, KindAllowCompaction, KindPeek, KindCancelPeek,
}

// CommandKind names the kind of c, or KindUnknown when c carries no known
// command (for instance one sent by a newer controller).
func CommandKind(c *computepb.Command) string {
	switch c.GetKind().(type) {
	case *computepb.Command_Hello:
		return KindHello
	case *computepb.Command_CreateInstance:
		return KindCreateInstance
	case *computepb.Command_InitializationComplete:
		return KindInitializationComplete
	case *computepb.Command_UpdateConfiguration:
		return KindUpdateConfiguration
	case *computepb.Command_CreateDataflow:
		return KindCreateDataflow
	case *computepb.Command_Schedule:
		return KindSchedule
	case *computepb.Command_AllowCompaction:
		return KindAllowCompaction
	case *computepb.Command_Peek:
		return KindPeek
	case *computepb.Command_CancelPeek:
		return KindCancelPeek
	default:
		return KindUnknown
	}
}
