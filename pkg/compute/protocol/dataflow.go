package protocol

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/protocol/computepb"
	"google.golang.org/protobuf/proto"
)

// DataflowToProto encodes d.
func DataflowToProto(d *plan.DataflowDescription) (*computepb.DataflowDescription, error) {
	p := &computepb.DataflowDescription{
		Id: GlobalIDToProto(d.ID), DebugName: d.DebugName,
		AsOf: FrontierToProto(d.AsOf), Until: FrontierToProto(d.Until),
		Class: computepb.DataflowClass(d.Class),
	}
	for _, s := range d.SourceImports {
		p.SourceImports = append(p.SourceImports, &computepb.SourceImport{
			Id: GlobalIDToProto(s.ID), Desc: RelationDescToProto(&s.Desc),
			Kind: string(s.Connection.Kind), Options: s.Connection.Options,
		})
	}
	for _, ix := range d.IndexImports {
		p.IndexImports = append(p.IndexImports, &computepb.IndexImport{
			Id: GlobalIDToProto(ix.ID), On: GlobalIDToProto(ix.On), Key: exprsToProto(ix.Key), Desc: RelationDescToProto(&ix.Desc),
		})
	}
	for i := range d.ObjectsToBuild {
		b := &d.ObjectsToBuild[i]
		pl, err := PlanToProto(&b.Plan)
		if err != nil {
			return nil, fmt.Errorf("encode dataflow %s: build %s: %w", d.ID, b.ID, err)
		}
		p.ObjectsToBuild = append(p.ObjectsToBuild, &computepb.Build{Id: GlobalIDToProto(b.ID), Plan: pl})
	}
	for _, ex := range d.IndexExports {
		p.IndexExports = append(p.IndexExports, &computepb.IndexExport{
			Id: GlobalIDToProto(ex.ID), On: GlobalIDToProto(ex.On), Key: exprsToProto(ex.Key),
		})
	}
	for _, s := range d.SubscribeSinks {
		p.SubscribeSinks = append(p.SubscribeSinks, &computepb.SubscribeSink{
			Id: GlobalIDToProto(s.ID), From: GlobalIDToProto(s.From), Snapshot: s.Snapshot, Progress: s.Progress,
			UpTo: FrontierToProto(s.UpTo), Shard: s.Shard,
		})
	}
	return p, nil
}

// MarshalDataflow encodes d as the bytes of its protobuf message
// (deterministically: equal descriptions give equal bytes), for callers
// that store or compare what they send.
func MarshalDataflow(d *plan.DataflowDescription) ([]byte, error) {
	p, err := DataflowToProto(d)
	if err != nil {
		return nil, err
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode dataflow %s: %w", d.ID, err)
	}
	return b, nil
}

// UnmarshalDataflow decodes bytes written by MarshalDataflow. Malformed
// bytes are a *DecodeError; it does not Validate.
func UnmarshalDataflow(b []byte) (*plan.DataflowDescription, error) {
	var p computepb.DataflowDescription
	if err := proto.Unmarshal(b, &p); err != nil {
		return nil, &DecodeError{Err: err}
	}
	return DataflowFromProto(&p)
}

// DataflowFromProto decodes a description. Errors are *DecodeErrors
// naming the field; the result is not yet validated (Validate).
func DataflowFromProto(p *computepb.DataflowDescription) (*plan.DataflowDescription, error) {
	if p == nil {
		return nil, &DecodeError{Field: "dataflow", Err: errMissing}
	}
	d := &plan.DataflowDescription{DebugName: p.GetDebugName(), Class: plan.DataflowClass(p.GetClass())}
	var err error
	if d.ID, err = GlobalIDFromProto(p.GetId()); err != nil {
		return nil, fieldErr("id", err)
	}
	if d.AsOf, err = requiredFrontier(p.GetAsOf()); err != nil {
		return nil, fieldErr("as_of", err)
	}
	if d.Until, err = requiredFrontier(p.GetUntil()); err != nil {
		return nil, fieldErr("until", err)
	}
	if p.GetClass() < 0 || p.GetClass() > computepb.DataflowClass_DATAFLOW_CLASS_LIVE_READ {
		return nil, fieldErr("class", fmt.Errorf("unknown dataflow class %d", p.GetClass()))
	}
	for i, s := range p.GetSourceImports() {
		si, err := sourceImportFromProto(s)
		if err != nil {
			return nil, indexErr("source_imports", i, err)
		}
		d.SourceImports = append(d.SourceImports, si)
	}
	for i, ix := range p.GetIndexImports() {
		ii, err := indexImportFromProto(ix)
		if err != nil {
			return nil, indexErr("index_imports", i, err)
		}
		d.IndexImports = append(d.IndexImports, ii)
	}
	for i, b := range p.GetObjectsToBuild() {
		bd, err := buildFromProto(b)
		if err != nil {
			return nil, indexErr("objects_to_build", i, err)
		}
		d.ObjectsToBuild = append(d.ObjectsToBuild, bd)
	}
	for i, ex := range p.GetIndexExports() {
		ie, err := indexExportFromProto(ex)
		if err != nil {
			return nil, indexErr("index_exports", i, err)
		}
		d.IndexExports = append(d.IndexExports, ie)
	}
	for i, s := range p.GetSubscribeSinks() {
		ss, err := sinkFromProto(s)
		if err != nil {
			return nil, indexErr("subscribe_sinks", i, err)
		}
		d.SubscribeSinks = append(d.SubscribeSinks, ss)
	}
	return d, nil
}

func requiredFrontier(p *computepb.Frontier) (frontier.Frontier, error) {
	if p == nil {
		return frontier.Frontier{}, &DecodeError{Err: errMissing}
	}
	return FrontierFromProto(p), nil
}

func sourceImportFromProto(p *computepb.SourceImport) (plan.SourceImport, error) {
	id, err := GlobalIDFromProto(p.GetId())
	if err != nil {
		return plan.SourceImport{}, fieldErr("id", err)
	}
	desc, err := RelationDescFromProto(p.GetDesc())
	if err != nil {
		return plan.SourceImport{}, fieldErr("desc", err)
	}
	conn := plan.SourceConnection{Kind: plan.SourceKind(p.GetKind())}
	if len(p.GetOptions()) > 0 {
		conn.Options = p.GetOptions()
	}
	return plan.SourceImport{ID: id, Desc: desc, Connection: conn}, nil
}

func indexImportFromProto(p *computepb.IndexImport) (plan.IndexImport, error) {
	id, err := GlobalIDFromProto(p.GetId())
	if err != nil {
		return plan.IndexImport{}, fieldErr("id", err)
	}
	on, err := GlobalIDFromProto(p.GetOn())
	if err != nil {
		return plan.IndexImport{}, fieldErr("on", err)
	}
	key, err := exprsFromProto(p.GetKey())
	if err != nil {
		return plan.IndexImport{}, fieldErr("key", err)
	}
	desc, err := RelationDescFromProto(p.GetDesc())
	if err != nil {
		return plan.IndexImport{}, fieldErr("desc", err)
	}
	return plan.IndexImport{ID: id, On: on, Key: key, Desc: desc}, nil
}

func buildFromProto(p *computepb.Build) (plan.Build, error) {
	id, err := GlobalIDFromProto(p.GetId())
	if err != nil {
		return plan.Build{}, fieldErr("id", err)
	}
	pl, err := PlanFromProto(p.GetPlan())
	if err != nil {
		return plan.Build{}, fieldErr("plan", err)
	}
	return plan.Build{ID: id, Plan: pl}, nil
}

func indexExportFromProto(p *computepb.IndexExport) (plan.IndexExport, error) {
	id, err := GlobalIDFromProto(p.GetId())
	if err != nil {
		return plan.IndexExport{}, fieldErr("id", err)
	}
	on, err := GlobalIDFromProto(p.GetOn())
	if err != nil {
		return plan.IndexExport{}, fieldErr("on", err)
	}
	key, err := exprsFromProto(p.GetKey())
	if err != nil {
		return plan.IndexExport{}, fieldErr("key", err)
	}
	return plan.IndexExport{ID: id, On: on, Key: key}, nil
}

func sinkFromProto(p *computepb.SubscribeSink) (plan.SubscribeSink, error) {
	id, err := GlobalIDFromProto(p.GetId())
	if err != nil {
		return plan.SubscribeSink{}, fieldErr("id", err)
	}
	from, err := GlobalIDFromProto(p.GetFrom())
	if err != nil {
		return plan.SubscribeSink{}, fieldErr("from", err)
	}
	upTo, err := requiredFrontier(p.GetUpTo())
	if err != nil {
		return plan.SubscribeSink{}, fieldErr("up_to", err)
	}
	return plan.SubscribeSink{ID: id, From: from, Snapshot: p.GetSnapshot(), Progress: p.GetProgress(), UpTo: upTo, Shard: p.GetShard()}, nil
}
