package render

import (
	"fmt"

	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/runtime/dataflow"
)

// SourceFactory opens one worker's instance of a source import. The replica
// dispatches on imp.Connection.Kind (load generators, table shards,
// introspection); tests use MemorySources.
type SourceFactory interface {
	OpenSource(imp plan.SourceImport, ctx SourceContext) (Source, error)
}

// MemorySources serves source imports from memory tables by id.
type MemorySources map[plan.GlobalID]*MemoryTable

// OpenSource implements SourceFactory.
func (m MemorySources) OpenSource(imp plan.SourceImport, ctx SourceContext) (Source, error) {
	t, ok := m[imp.ID]
	if !ok {
		return nil, fmt.Errorf("no memory table for source %s", imp.ID)
	}
	return t.Open(ctx)
}

// SubscribeFunc receives one worker's subscribe output: ok rows and error
// rows (Val = row, times at or beyond the previous call's upper) and the
// worker's new upper for the subscribe. It runs on the worker goroutine.
type SubscribeFunc func(id plan.GlobalID, worker int, ok, errs []dataflow.Update, upper frontier.Frontier)

// Env is what building a dataflow on a worker needs from the runtime.
type Env struct {
	Sources SourceFactory
	// Indexes are the indexes exported by dataflows already built on this
	// worker, read by index imports.
	Indexes map[plan.GlobalID]*Index
	// Shared, if set, resolves imports of indexes another runtime of this
	// process publishes (the interactive runtime's peers).
	Shared    SharedImports
	Subscribe SubscribeFunc
	// StorageSinks opens the writers of storage sinks (subscribe sinks
	// with a Shard); nil refuses them.
	StorageSinks StorageSinkFactory
	// Fail reports an error that makes the dataflow's output untrustworthy
	// (fatal for the runtime: shared fate).
	Fail func(error)
	// SourceChunk, if set, returns how many items a source may produce in
	// one step (SourceContext.Chunk); nil or 0 means unbounded.
	SourceChunk func() int
	// Imports, if set, counts how index imports were read (flattened or
	// through cursors only).
	Imports *ImportCounters
	// NoSnapshotReads turns off the snapshot operators of one-shot
	// dataflows (every import is flattened, as for maintained ones): the
	// reference the snapshot path is tested against.
	NoSnapshotReads bool
	// snapshotTuning, if set, replaces the snapshot operators' sizes
	// (tests).
	snapshotTuning *snapshotTuning
	// onStatefulSchedule, if set, sees what every schedule of the
	// dataflow's stateful operators emitted (tests).
	onStatefulSchedule func(name string, emitted int)
	// ArrangeFuel, if set, returns how many updates an arrangement's batch
	// build may sort or merge in one step (ArrangeFueled); nil is
	// DefaultArrangeStepUpdates, 0 unbounded.
	ArrangeFuel func() int
}

// Built is one worker's copy of a built dataflow.
type Built struct {
	// Indexes exported by the dataflow, by export id.
	Indexes map[plan.GlobalID]*Index
	// Inputs are the source and import operators, whose frontiers make the
	// dataflow's input frontier.
	Inputs []*dataflow.Operator
}

// Check reports whether desc can be built against the given exported index
// ids and source factory, without building anything; the runtime calls it
// before broadcasting a CreateDataflow so that every refusal is synchronous.
func Check(desc *plan.DataflowDescription, hasIndex func(plan.GlobalID) bool, sources SourceFactory) error {
	if err := desc.Validate(); err != nil {
		return err
	}
	if len(desc.SourceImports) > 0 && sources == nil {
		return fmt.Errorf("dataflow %s imports sources but the runtime has no source factory", desc.DebugName)
	}
	for _, imp := range desc.IndexImports {
		if !hasIndex(imp.ID) {
			return fmt.Errorf("index import %s: no such index", imp.ID)
		}
	}
	return nil
}

// Build renders desc on the worker of b: sources, index imports, objects
// in order, then index exports and subscribe sinks.
func Build(b *dataflow.Builder, desc *plan.DataflowDescription, env Env) (*Built, error) {
	r := &planRenderer{b: b, asOf: desc.AsOf, objects: map[plan.GlobalID]rendered{}, fail: env.Fail,
		imports: map[plan.GlobalID]*importedIndex{}, memo: map[string]rendered{}, arrangeFuel: env.ArrangeFuel,
		onSchedule: env.onStatefulSchedule}
	if t, ok := snapshotTime(desc); ok && !env.NoSnapshotReads {
		r.snapshot, r.snapshotAt, r.tune = true, t, defaultSnapshotTuning
		if env.snapshotTuning != nil {
			r.tune = *env.snapshotTuning
		}
	}
	defer r.countImports(env.Imports)
	built := &Built{Indexes: map[plan.GlobalID]*Index{}}
	for _, imp := range desc.SourceImports {
		imp := imp
		s, err := renderSource(b, imp.ID.String(), func(ctx SourceContext) (Source, error) {
			ctx.Chunk = env.SourceChunk
			return env.Sources.OpenSource(imp, ctx)
		}, desc.AsOf, env.Fail)
		if err != nil {
			return nil, err
		}
		built.Inputs = append(built.Inputs, s.Operator())
		if imp.Connection.Kind == plan.SourceTable {
			// A materialized view's shard also holds its error rows.
			ok, errs := splitStoredErrors(b, imp.ID.String(), s)
			r.objects[imp.ID] = rendered{ok: ok, errs: []dataflow.Stream{errs}}
			continue
		}
		r.objects[imp.ID] = rendered{ok: s}
	}
	_, oneShot := snapshotTime(desc)
	for _, imp := range desc.IndexImports {
		idx := env.Indexes[imp.ID]
		if idx == nil && env.Shared != nil {
			if ok, errs, found := env.Shared.Import(imp.ID, b.Worker().Index()); found {
				if !oneShot {
					// A dataflow that stays up follows the peer index.
					if err := r.importLive(built, imp, ok, errs); err != nil {
						return nil, err
					}
					continue
				}
				idx = ImportShared(b, imp.ID.String(), ok, errs, desc.AsOf, env.Fail)
			}
		}
		if idx == nil {
			return nil, fmt.Errorf("index import %s: no such index on worker %d", imp.ID, b.Worker().Index())
		}
		ok := Import(b, imp.ID.String(), idx.Ok)
		errs := Import(b, imp.ID.String()+" errors", idx.Err)
		built.Inputs = append(built.Inputs, ok.Stream.Operator(), errs.Stream.Operator())
		errRows := Flatten(b, "Flatten errors "+imp.ID.String(), errs, desc.AsOf, true, env.Fail)
		// The ok rows are flattened when a plan first reads them as a
		// collection (planRenderer.imported); snapshot operators read
		// the arrangement itself.
		r.imports[imp.On] = &importedIndex{name: imp.ID.String(), key: imp.Key, desc: imp.Desc, ok: ok, errs: errRows}
	}
	for i := range desc.ObjectsToBuild {
		obj := &desc.ObjectsToBuild[i]
		c, err := r.render(&obj.Plan)
		if err != nil {
			return nil, fmt.Errorf("build %s: %w", obj.ID, err)
		}
		r.objects[obj.ID] = c
	}
	for _, ex := range desc.IndexExports {
		c, ok := r.collection(ex.On)
		if !ok {
			return nil, fmt.Errorf("index export %s: collection %s not in the dataflow", ex.ID, ex.On)
		}
		name := ex.ID.String()
		errs := clip(c.errs)
		okArr := r.arrange(untilFilter(b, name, c.ok, desc.Until), "export "+name, KeySpec{Key: ex.Key}, &errs)
		errStream := untilFilter(b, name+" errors", Concat(b, name+" errors", errs), desc.Until)
		errArr := ArrangeFueled(b, "export errors "+name, keyErrors(b, name, errStream), env.Fail, env.ArrangeFuel)
		idx := newIndex(name, okArr, errArr, desc.AsOf, desc.Until, built.Inputs)
		b.OnDrop(idx.release)
		built.Indexes[ex.ID] = idx
	}
	for _, s := range desc.SubscribeSinks {
		c, ok := r.collection(s.From)
		if !ok {
			return nil, fmt.Errorf("subscribe %s: collection %s not in the dataflow", s.ID, s.From)
		}
		name := s.ID.String()
		if s.Shard != "" {
			if err := renderStorageSink(b, s, desc.AsOf, c.ok, Concat(b, name+" errors", c.errs), env); err != nil {
				return nil, err
			}
			continue
		}
		renderSubscribe(b, s, desc.AsOf, c.ok, Concat(b, name+" errors", c.errs), env.Subscribe)
	}
	return built, nil
}

// untilFilter drops updates at times at or beyond until (closed: none).
func untilFilter(b *dataflow.Builder, name string, in dataflow.Stream, until frontier.Frontier) dataflow.Stream {
	if until.IsClosed() {
		return in
	}
	return b.AddOperator("Until "+name, []dataflow.Connection{{From: in}}, 1, dataflow.LogicFunc(func(op *dataflow.Operator) {
		for _, d := range op.Input(0).Take() {
			var out []dataflow.Update
			for _, u := range d.([]dataflow.Update) {
				if !until.LessEqualTime(u.Time) {
					out = append(out, u)
				}
			}
			op.Output(0).SendUpdates(out)
		}
	})).Stream(0)
}

// renderSubscribe adds the sink of a subscribe: it forwards each worker's
// updates (times advanced to as_of; without Snapshot, those at or before
// as_of dropped; those at or beyond UpTo dropped) and frontier to report.
func renderSubscribe(b *dataflow.Builder, s plan.SubscribeSink, asOf frontier.Frontier, ok, errs dataflow.Stream, report SubscribeFunc) {
	var last frontier.Frontier
	first := true
	worker := b.Worker().Local()
	b.AddOperator("Subscribe "+s.ID.String(), []dataflow.Connection{{From: ok}, {From: errs}}, 0, dataflow.LogicFunc(func(op *dataflow.Operator) {
		var outs [2][]dataflow.Update
		for i := 0; i < 2; i++ {
			for _, d := range op.Input(i).Take() {
				for _, u := range d.([]dataflow.Update) {
					u.Time = asOf.AdvanceTime(u.Time)
					if t, ok := asOf.Time(); ok && !s.Snapshot && u.Time <= t {
						continue
					}
					if s.UpTo.LessEqualTime(u.Time) {
						continue
					}
					outs[i] = append(outs[i], u)
				}
			}
		}
		f := op.InputFrontier()
		if s.UpTo.LessEqual(f) {
			f = frontier.Closed()
		}
		if f == last && !first && len(outs[0]) == 0 && len(outs[1]) == 0 {
			return
		}
		first = false
		last = f
		if report != nil {
			report(s.ID, worker, outs[0], outs[1], f)
		}
	}))
}
