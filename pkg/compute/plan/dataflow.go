package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// DataflowClass says how a dataflow is used. Its numbering matches the
// protocol's enum (0 is unspecified and invalid).
type DataflowClass uint8

const (
	ClassUnspecified DataflowClass = iota
	// ClassMaintained dataflows maintain indexes and sinks until dropped.
	ClassMaintained
	// ClassOneShotRead dataflows answer one read (a peek of a transient
	// index) and are dropped afterwards.
	ClassOneShotRead
	// ClassLiveRead dataflows serve one client's read that stays up (a
	// SUBSCRIBE) and are dropped when the client goes. A two-runtime
	// process renders them on its interactive runtime, which follows the
	// indexes they import as maintenance refreshes them (live imports).
	ClassLiveRead
)

func (c DataflowClass) String() string {
	switch c {
	case ClassMaintained:
		return "maintained"
	case ClassOneShotRead:
		return "one_shot_read"
	case ClassLiveRead:
		return "live_read"
	}
	return fmt.Sprintf("unspecified(%d)", uint8(c))
}

// MarshalText encodes the class name.
func (c DataflowClass) MarshalText() ([]byte, error) {
	if c != ClassMaintained && c != ClassOneShotRead && c != ClassLiveRead {
		return nil, fmt.Errorf("marshal dataflow class: %s", c)
	}
	return []byte(c.String()), nil
}

// UnmarshalText decodes a class name.
func (c *DataflowClass) UnmarshalText(b []byte) error {
	switch string(b) {
	case "maintained":
		*c = ClassMaintained
	case "one_shot_read":
		*c = ClassOneShotRead
	case "live_read":
		*c = ClassLiveRead
	default:
		return fmt.Errorf("unmarshal dataflow class: unknown class %q", b)
	}
	return nil
}

// SourceKind says where a source's data comes from.
type SourceKind string

const (
	SourceLoadGen       SourceKind = "loadgen"       // a built-in load generator
	SourceTable         SourceKind = "table"         // a table shard from storage
	SourceIntrospection SourceKind = "introspection" // the replica's own logging
)

// SourceConnection configures a source; Options are kind-specific (e.g.
// a load generator's "generator", "keys", "tick_ms").
type SourceConnection struct {
	Kind    SourceKind        `json:"kind"`
	Options map[string]string `json:"options,omitempty"`
}

// SourceImport brings a source collection into the dataflow as ID.
type SourceImport struct {
	ID         GlobalID         `json:"id"`
	Desc       row.RelationDesc `json:"desc"`
	Connection SourceConnection `json:"connection"`
}

// IndexImport brings an existing index (ID) of collection On, arranged by
// Key, into the dataflow; plans read it with Get{On}.
type IndexImport struct {
	ID   GlobalID         `json:"id"`
	On   GlobalID         `json:"on"`
	Key  []expr.Expr      `json:"key"`
	Desc row.RelationDesc `json:"desc"`
}

// Build computes collection ID with Plan.
type Build struct {
	ID   GlobalID `json:"id"`
	Plan Plan     `json:"plan"`
}

// IndexExport maintains an index ID of collection On, arranged by Key.
type IndexExport struct {
	ID  GlobalID    `json:"id"`
	On  GlobalID    `json:"on"`
	Key []expr.Expr `json:"key"`
}

// SubscribeSink streams the changes of collection From: the snapshot at
// as_of first (if Snapshot), then updates, with progress messages (if
// Progress), for times before UpTo (closed: forever).
type SubscribeSink struct {
	ID       GlobalID          `json:"id"`
	From     GlobalID          `json:"from"`
	Snapshot bool              `json:"snapshot"`
	Progress bool              `json:"progress"`
	UpTo     frontier.Frontier `json:"-"`
	// Shard, when set, makes this a storage sink (a materialized view):
	// the collection is written to the named storage shard by the replica
	// (pkg/compute/sink) instead of being streamed to the controller, which
	// then hears only the sink's frontiers. Snapshot and Progress do not
	// apply.
	Shard string `json:"shard,omitempty"`
}

// DataflowDescription is everything a replica needs to build one
// dataflow: what it imports, what it computes (in topological order),
// what it exports, and the times it is valid for. Every worker of every
// replica builds it identically.
type DataflowDescription struct {
	ID             GlobalID        `json:"id"`
	DebugName      string          `json:"debug_name"`
	SourceImports  []SourceImport  `json:"source_imports"`
	IndexImports   []IndexImport   `json:"index_imports"`
	ObjectsToBuild []Build         `json:"objects_to_build"`
	IndexExports   []IndexExport   `json:"index_exports"`
	SubscribeSinks []SubscribeSink `json:"subscribe_sinks"`
	// AsOf is the time the dataflow's outputs start at: inputs are read
	// as of it (and must be readable there), outputs are compacted to it.
	AsOf frontier.Frontier `json:"-"`
	// Until: updates at times not before Until are never produced;
	// closed for dataflows that run forever.
	Until frontier.Frontier `json:"-"`
	Class DataflowClass     `json:"class"`
}

// Frontiers travel in their String form ("[5]", "[]").
type subscribeSinkJSON struct {
	subscribeSinkAlias
	UpTo string `json:"up_to"`
}

type subscribeSinkAlias SubscribeSink

// MarshalJSON encodes the sink with UpTo in its String form.
func (s SubscribeSink) MarshalJSON() ([]byte, error) {
	return json.Marshal(subscribeSinkJSON{subscribeSinkAlias(s), s.UpTo.String()})
}

// UnmarshalJSON decodes a sink; up_to is required.
func (s *SubscribeSink) UnmarshalJSON(b []byte) error {
	var j subscribeSinkJSON
	if err := strictUnmarshal(b, &j); err != nil {
		return fmt.Errorf("subscribe sink: %w", err)
	}
	f, err := frontier.Parse(j.UpTo)
	if err != nil {
		return fmt.Errorf("subscribe sink %s: up_to: %w", j.ID, err)
	}
	*s = SubscribeSink(j.subscribeSinkAlias)
	s.UpTo = f
	return nil
}

type dataflowAlias DataflowDescription

type dataflowJSON struct {
	dataflowAlias
	AsOf  string `json:"as_of"`
	Until string `json:"until"`
}

// MarshalJSON encodes the description with as_of and until in their
// String form.
func (d DataflowDescription) MarshalJSON() ([]byte, error) {
	return json.Marshal(dataflowJSON{dataflowAlias(d), d.AsOf.String(), d.Until.String()})
}

// UnmarshalJSON decodes a description. Unknown fields are errors (a
// newer controller talking to an older replica must not be silently
// misunderstood); as_of and until are required.
func (d *DataflowDescription) UnmarshalJSON(b []byte) error {
	var j dataflowJSON
	if err := strictUnmarshal(b, &j); err != nil {
		return fmt.Errorf("dataflow description: %w", err)
	}
	asOf, err := frontier.Parse(j.AsOf)
	if err != nil {
		return fmt.Errorf("dataflow description %s: as_of: %w", j.ID, err)
	}
	until, err := frontier.Parse(j.Until)
	if err != nil {
		return fmt.Errorf("dataflow description %s: until: %w", j.ID, err)
	}
	*d = DataflowDescription(j.dataflowAlias)
	d.AsOf, d.Until = asOf, until
	return nil
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

// Marshal encodes d as JSON, the form the protocol carries.
func Marshal(d *DataflowDescription) ([]byte, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("marshal dataflow %s: %w", d.ID, err)
	}
	return b, nil
}

// Unmarshal decodes and validates a dataflow description.
func Unmarshal(b []byte) (*DataflowDescription, error) {
	var d DataflowDescription
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, err
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return &d, nil
}

// ErrInvalid is wrapped by every Validate error.
var ErrInvalid = errors.New("invalid dataflow")

// Validate checks d: known class, as_of before until, unique ids,
// imports well-typed, every build type-checks against what is imported or
// built before it (topological order), exports refer to known
// collections with well-typed keys, and something is exported. The
// error names the offending part precisely.
func (d *DataflowDescription) Validate() error {
	if err := d.validate(); err != nil {
		return fmt.Errorf("%w %s (%s): %w", ErrInvalid, d.ID, d.DebugName, err)
	}
	return nil
}

// Descs returns the description of every collection d imports or builds,
// by id. It assumes d is valid.
func (d *DataflowDescription) Descs() (map[GlobalID]row.RelationDesc, error) {
	env := map[GlobalID]row.RelationDesc{}
	for _, s := range d.SourceImports {
		env[s.ID] = s.Desc
	}
	for _, ix := range d.IndexImports {
		env[ix.On] = ix.Desc
	}
	for _, b := range d.ObjectsToBuild {
		desc, err := b.Plan.Desc(MapEnv(env))
		if err != nil {
			return nil, fmt.Errorf("build %s: %w", b.ID, err)
		}
		env[b.ID] = desc
	}
	return env, nil
}

func (d *DataflowDescription) validate() error {
	if !d.ID.Valid() {
		return fmt.Errorf("invalid dataflow id %s", d.ID)
	}
	switch d.Class {
	case ClassMaintained, ClassOneShotRead, ClassLiveRead:
	default:
		return fmt.Errorf("dataflow class %s", d.Class)
	}
	if d.AsOf.IsClosed() {
		return errors.New("as_of is closed: there is no time to start at")
	}
	if !d.AsOf.Less(d.Until) {
		return fmt.Errorf("until %s is not beyond as_of %s: the dataflow would produce nothing", d.Until, d.AsOf)
	}
	ids := map[GlobalID]string{} // every id the dataflow defines, with what defines it
	claim := func(id GlobalID, what string) error {
		if !id.Valid() {
			return fmt.Errorf("%s has invalid id %s", what, id)
		}
		if id.Kind == KindLocal {
			return fmt.Errorf("%s has local id %s (local ids name a let's value or a recursive node's working table only)", what, id)
		}
		if prev, ok := ids[id]; ok {
			return fmt.Errorf("%s reuses id %s of %s", what, id, prev)
		}
		ids[id] = what
		return nil
	}
	env := map[GlobalID]row.RelationDesc{}
	sourceIDs := map[GlobalID]bool{}
	for i, s := range d.SourceImports {
		what := fmt.Sprintf("source import %d", i)
		if err := claim(s.ID, what); err != nil {
			return err
		}
		if err := s.Desc.Validate(); err != nil {
			return fmt.Errorf("%s (%s): %w", what, s.ID, err)
		}
		switch s.Connection.Kind {
		case SourceLoadGen, SourceTable, SourceIntrospection:
		default:
			return fmt.Errorf("%s (%s): unknown connection kind %q", what, s.ID, s.Connection.Kind)
		}
		env[s.ID] = s.Desc
		sourceIDs[s.ID] = true
	}
	for i, ix := range d.IndexImports {
		what := fmt.Sprintf("index import %d", i)
		if err := claim(ix.ID, what); err != nil {
			return err
		}
		if !ix.On.Valid() {
			return fmt.Errorf("%s (%s): invalid collection id %s", what, ix.ID, ix.On)
		}
		if err := ix.Desc.Validate(); err != nil {
			return fmt.Errorf("%s (%s on %s): %w", what, ix.ID, ix.On, err)
		}
		// Several indexes of one collection may be imported; they must
		// agree on what it is.
		if prev, ok := env[ix.On]; ok && !prev.Equal(ix.Desc) {
			return fmt.Errorf("%s (%s on %s): description disagrees with another import of %s", what, ix.ID, ix.On, ix.On)
		}
		if w, ok := ids[ix.On]; ok && !sourceIDs[ix.On] {
			return fmt.Errorf("%s (%s): collection %s is %s, not a collection", what, ix.ID, ix.On, w)
		}
		if len(ix.Key) == 0 {
			return fmt.Errorf("%s (%s on %s): empty key", what, ix.ID, ix.On)
		}
		if _, err := keyTypes(ix.Key, ix.Desc); err != nil {
			return fmt.Errorf("%s (%s on %s): %w", what, ix.ID, ix.On, err)
		}
		env[ix.On] = ix.Desc
	}
	later := map[GlobalID]int{}
	for i, b := range d.ObjectsToBuild {
		later[b.ID] = i
	}
	for i, b := range d.ObjectsToBuild {
		what := fmt.Sprintf("build %d", i)
		if err := claim(b.ID, what); err != nil {
			return err
		}
		if _, ok := env[b.ID]; ok {
			return fmt.Errorf("%s redefines imported collection %s", what, b.ID)
		}
		desc, err := b.Plan.Desc(MapEnv(env))
		if err != nil {
			for _, dep := range b.Plan.DependsOn() {
				if j, ok := later[dep]; ok && j >= i {
					return fmt.Errorf("%s (%s) reads %s, which is built by build %d: objects_to_build must be in topological order", what, b.ID, dep, j)
				}
			}
			return fmt.Errorf("%s (%s): %w", what, b.ID, err)
		}
		env[b.ID] = desc
	}
	exports := 0
	for i, ex := range d.IndexExports {
		what := fmt.Sprintf("index export %d", i)
		if err := claim(ex.ID, what); err != nil {
			return err
		}
		desc, ok := env[ex.On]
		if !ok {
			return fmt.Errorf("%s (%s): %w %s", what, ex.ID, ErrUnknownID, ex.On)
		}
		if len(ex.Key) == 0 {
			return fmt.Errorf("%s (%s on %s): empty key", what, ex.ID, ex.On)
		}
		if _, err := keyTypes(ex.Key, desc); err != nil {
			return fmt.Errorf("%s (%s on %s): %w", what, ex.ID, ex.On, err)
		}
		exports++
	}
	for i, s := range d.SubscribeSinks {
		what := fmt.Sprintf("subscribe sink %d", i)
		if err := claim(s.ID, what); err != nil {
			return err
		}
		if _, ok := env[s.From]; !ok {
			return fmt.Errorf("%s (%s): %w %s", what, s.ID, ErrUnknownID, s.From)
		}
		if !d.AsOf.LessEqual(s.UpTo) {
			return fmt.Errorf("%s (%s): up_to %s is before as_of %s", what, s.ID, s.UpTo, d.AsOf)
		}
		exports++
	}
	if exports == 0 {
		return errors.New("exports nothing (no index exports, no subscribe sinks)")
	}
	return nil
}

// Compatible reports whether a replica already running old may keep it
// in place of new, which a reconnecting controller sends again: the same
// imports, plans and exports (compared structurally by sameValue), the same
// class and until, and old.AsOf <= new.AsOf (a dataflow that started
// earlier can serve every later read). When it is not, the error says
// what differs.
func Compatible(old, new *DataflowDescription) error {
	if !old.AsOf.LessEqual(new.AsOf) {
		return fmt.Errorf("dataflow %s: running as_of %s is beyond the requested %s", new.ID, old.AsOf, new.AsOf)
	}
	if old.Class != new.Class {
		return fmt.Errorf("dataflow %s: class %s, requested %s", new.ID, old.Class, new.Class)
	}
	if old.Until != new.Until {
		return fmt.Errorf("dataflow %s: until %s, requested %s", new.ID, old.Until, new.Until)
	}
	parts := []struct {
		name     string
		old, new any
	}{
		{"id", old.ID, new.ID},
		{"source_imports", old.SourceImports, new.SourceImports},
		{"index_imports", old.IndexImports, new.IndexImports},
		{"objects_to_build", old.ObjectsToBuild, new.ObjectsToBuild},
		{"index_exports", old.IndexExports, new.IndexExports},
		{"subscribe_sinks", old.SubscribeSinks, new.SubscribeSinks},
	}
	for _, p := range parts {
		if !sameValue(reflect.ValueOf(p.old), reflect.ValueOf(p.new)) {
			return fmt.Errorf("dataflow %s: %s differ", new.ID, p.name)
		}
	}
	return nil
}
