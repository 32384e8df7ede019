package logging

import (
	"fmt"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// Relation names an introspection relation.
type Relation string

// The relations.
const (
	// Operators: dataflow, dataflow name, operator, operator name, worker,
	// elapsed nanoseconds scheduled, schedules, the longest single
	// schedule in nanoseconds.
	Operators Relation = "operators"
	// Arrangements: index id, worker, records, batches, bytes.
	Arrangements Relation = "arrangements"
	// Frontiers: collection id, worker, write frontier and input frontier
	// (the meet of the dataflow's sources and imports); NULL when closed.
	Frontiers Relation = "frontiers"
	// Hydration: index id, worker, milliseconds from build until the
	// index's upper first passed its as_of (NULL while hydrating).
	Hydration Relation = "hydration"
	// PeekDurations: process, bucket upper bound in nanoseconds, count of
	// peeks answered by this process (rows, errors and cancellations), on
	// either runtime of a two-runtime process.
	PeekDurations Relation = "peek_durations"
	// Peeks: uuid, target index id, timestamp, worker. A peek the
	// interactive runtime serves is reported once, by the maintenance
	// runtime's first worker of the process.
	Peeks Relation = "peeks"
	// WorkerSteps: worker, bucket upper bound in nanoseconds, count.
	WorkerSteps Relation = "worker_steps"
)

// Relations lists every relation, in a fixed order.
func Relations() []Relation {
	return []Relation{Operators, Arrangements, Frontiers, Peeks, WorkerSteps, Hydration, PeekDurations}
}

func cols(specs ...any) row.RelationDesc {
	var names []string
	var types []row.ColumnType
	for i := 0; i < len(specs); i += 2 {
		names = append(names, specs[i].(string))
		types = append(types, row.ColumnType{Type: specs[i+1].(row.Type)})
	}
	return row.NewRelationDesc(names, types)
}

var descs = map[Relation]row.RelationDesc{
	Operators: cols("dataflow", row.TypeInt64, "dataflow_name", row.TypeText, "operator", row.TypeInt64,
		"name", row.TypeText, "worker", row.TypeInt64, "elapsed_ns", row.TypeInt64, "schedules", row.TypeInt64,
		"max_schedule_ns", row.TypeInt64),
	Arrangements: cols("id", row.TypeText, "worker", row.TypeInt64, "records", row.TypeInt64,
		"batches", row.TypeInt64, "bytes", row.TypeInt64),
	Frontiers:     cols("id", row.TypeText, "worker", row.TypeInt64, "write_frontier", row.TypeInt64, "input_frontier", row.TypeInt64),
	Hydration:     cols("id", row.TypeText, "worker", row.TypeInt64, "hydration_ms", row.TypeInt64),
	PeekDurations: cols("process", row.TypeInt64, "le_ns", row.TypeInt64, "count", row.TypeInt64),
	Peeks:         cols("uuid", row.TypeText, "target", row.TypeText, "timestamp", row.TypeInt64, "worker", row.TypeInt64),
	WorkerSteps:   cols("worker", row.TypeInt64, "le_ns", row.TypeInt64, "count", row.TypeInt64),
}

func init() {
	// Frontiers are NULL when closed; hydration is NULL until done.
	d := descs[Frontiers]
	d.Types[2].Nullable = true
	d.Types[3].Nullable = true
	descs[Frontiers] = d
	d = descs[Hydration]
	d.Types[2].Nullable = true
	descs[Hydration] = d
}

// Desc returns the relation's columns.
func Desc(r Relation) (row.RelationDesc, bool) {
	d, ok := descs[r]
	return d, ok
}

// OptionRelation and OptionInterval are the introspection source options.
const (
	OptionRelation = "relation"
	OptionInterval = "interval"
)

// DefaultInterval is the refresh interval when none is configured.
const DefaultInterval = time.Second

// Dataflows returns the logging dataflow of every relation in ids, in
// Relations order, each maintaining relation r as index ids[r] (see
// Dataflow); relations without an id are left out.
func Dataflows(ids map[Relation]plan.GlobalID, interval time.Duration, asOf frontier.Frontier) ([]plan.DataflowDescription, error) {
	var out []plan.DataflowDescription
	for _, rel := range Relations() {
		id, ok := ids[rel]
		if !ok {
			continue
		}
		desc, err := Dataflow(rel, id, interval, asOf)
		if err != nil {
			return nil, err
		}
		out = append(out, desc)
	}
	return out, nil
}

// Dataflow returns the description of the dataflow that maintains relation
// r as index id (keyed by the relation's first column), refreshed every
// interval, starting at asOf.
func Dataflow(r Relation, id plan.GlobalID, interval time.Duration, asOf frontier.Frontier) (plan.DataflowDescription, error) {
	desc, ok := Desc(r)
	if !ok {
		return plan.DataflowDescription{}, fmt.Errorf("logging: unknown relation %q", r)
	}
	src := plan.GlobalID{Kind: id.Kind, N: id.N}
	src.Kind = plan.KindTransient // the source collection is private to the dataflow
	return plan.DataflowDescription{
		ID: id, DebugName: "introspection " + string(r), Class: plan.ClassMaintained,
		SourceImports: []plan.SourceImport{{ID: src, Desc: desc, Connection: plan.SourceConnection{
			Kind: plan.SourceIntrospection, Options: map[string]string{OptionRelation: string(r), OptionInterval: interval.String()},
		}}},
		IndexExports: []plan.IndexExport{{ID: id, On: src, Key: []expr.Expr{expr.Column(0)}}},
		AsOf:         asOf, Until: frontier.Closed(),
	}, nil
}
