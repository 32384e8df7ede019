package scripttest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"google.golang.org/protobuf/encoding/protojson"
)

// peek builds a Peek command from "P TARGET TIME [options]" (doc.go).
func (rn *runner) peek(args []string) (*computepb.Command, error) {
	if len(args) < 3 {
		return nil, errors.New("peek: want P TARGET TIME [options]")
	}
	ts, err := strconv.ParseUint(args[2], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("peek time: %w", err)
	}
	target, err := plan.ParseGlobalID(args[1])
	if err != nil {
		return nil, fmt.Errorf("peek target: %w", err)
	}
	p := &computepb.Peek{Uuid: rn.uuid(args[0]), Target: protocol.GlobalIDToProto(target), Timestamp: ts, TargetClass: computepb.DataflowClass_DATAFLOW_CLASS_MAINTAINED}
	for _, opt := range args[3:] {
		k, v, _ := strings.Cut(opt, "=")
		switch k {
		case "keys":
			for _, s := range strings.Split(v, ",") {
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("peek key %q: %w", s, err)
				}
				p.LiteralKeys = append(p.LiteralKeys, row.Pack(row.Int64(n)))
			}
		case "mfp":
			var m expr.MFP
			if err := json.Unmarshal([]byte(v), &m); err != nil {
				return nil, fmt.Errorf("peek mfp: %w", err)
			}
			p.Mfp = protocol.MFPToProto(&m)
		case "mfp-proto":
			// The message itself, to send one the expr package would
			// not build (a malformed MFP the replica must refuse).
			p.Mfp = &computepb.MapFilterProject{}
			if err := protojson.Unmarshal([]byte(v), p.Mfp); err != nil {
				return nil, fmt.Errorf("peek mfp-proto: %w", err)
			}
		case "finishing":
			p.Finishing = &computepb.RowSetFinishing{}
			if err := protojson.Unmarshal([]byte(v), p.Finishing); err != nil {
				return nil, fmt.Errorf("peek finishing: %w", err)
			}
		default:
			return nil, fmt.Errorf("peek: unknown option %q", k)
		}
	}
	return &computepb.Command{Kind: &computepb.Command_Peek{Peek: p}}, nil
}
