package protocol

import (
	"errors"
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
)

// ErrMalformed is wrapped by every error Validate returns.
var ErrMalformed = errors.New("malformed command")

// SQLStateProtocolViolation is the SQLSTATE of a CommandError refusing a
// malformed command.
const SQLStateProtocolViolation = "08P01"

// Validate checks that c is well formed on its own: it carries a known
// command, names syntactically valid GlobalIds and uuids, and has its
// required fields. It does not decode the dataflow or the peek's MFP; the
// replica converts those once (DataflowFromProto, MFPFromProto) and
// validates them with the plan and expr packages.
func Validate(c *computepb.Command) error {
	if err := validate(c); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrMalformed, CommandKind(c), err)
	}
	return nil
}

func validate(c *computepb.Command) error {
	switch k := c.GetKind().(type) {
	case *computepb.Command_Hello:
		if k.Hello.GetNonce() == "" {
			return errors.New("empty nonce")
		}
	case *computepb.Command_CreateInstance:
		for name, id := range k.CreateInstance.GetLogging().GetIndexes() {
			if name == "" {
				return errors.New("logging relation with empty name")
			}
			if err := checkGlobalID(id); err != nil {
				return fmt.Errorf("logging relation %q: %w", name, err)
			}
		}
	case *computepb.Command_InitializationComplete, *computepb.Command_UpdateConfiguration:
	case *computepb.Command_CreateDataflow:
		if k.CreateDataflow.GetDataflow() == nil {
			return errors.New("missing dataflow description")
		}
	case *computepb.Command_Schedule:
		return checkGlobalID(k.Schedule.GetId())
	case *computepb.Command_AllowCompaction:
		if k.AllowCompaction.GetFrontier() == nil {
			return errors.New("missing frontier")
		}
		return checkGlobalID(k.AllowCompaction.GetId())
	case *computepb.Command_Peek:
		return validatePeek(k.Peek)
	case *computepb.Command_CancelPeek:
		return checkUUID(k.CancelPeek.GetUuid())
	default:
		return errors.New("no known command")
	}
	return nil
}

func validatePeek(p *computepb.Peek) error {
	if err := checkUUID(p.GetUuid()); err != nil {
		return err
	}
	if _, err := GlobalIDFromProto(p.GetTarget()); err != nil {
		return fmt.Errorf("target: %w", err)
	}
	for i, k := range p.GetLiteralKeys() {
		if len(k) == 0 {
			return fmt.Errorf("literal key %d is empty", i)
		}
	}
	if _, ok := computepb.DataflowClass_name[int32(p.GetTargetClass())]; !ok {
		return fmt.Errorf("unknown target class %d", p.GetTargetClass())
	}
	return nil
}

// checkGlobalID accepts a present GlobalId of a known kind.
func checkGlobalID(id *computepb.GlobalId) error {
	_, err := GlobalIDFromProto(id)
	return err
}

// checkUUID accepts the canonical 8-4-4-4-12 hexadecimal form.
func checkUUID(s string) error {
	if len(s) != 36 {
		return fmt.Errorf("invalid uuid %q", s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return fmt.Errorf("invalid uuid %q", s)
			}
		default:
			if !isHex(c) {
				return fmt.Errorf("invalid uuid %q", s)
			}
		}
	}
	return nil
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}
