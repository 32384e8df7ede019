package plan

import (
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

var update = flag.Bool("update", false, "rewrite golden files")

// sampleDataflow builds: source u1 (a load generator), index import of u2
// by k, u10 = u1 join u2 on id = k, u11 = count per name over u10,
// exported as index u12 and subscribed as u13.
func sampleDataflow() *DataflowDescription {
	return &DataflowDescription{
		ID:        User(100),
		DebugName: "counts_by_name",
		SourceImports: []SourceImport{{
			ID: User(1), Desc: descs[User(1)],
			Connection: SourceConnection{Kind: SourceLoadGen, Options: map[string]string{"generator": "counter", "tick_ms": "1000"}},
		}},
		IndexImports: []IndexImport{{ID: User(20), On: User(2), Key: []expr.Expr{col(0)}, Desc: descs[User(2)]}},
		ObjectsToBuild: []Build{
			{ID: User(10), Plan: NewJoin(NewGet(User(1)), NewGet(User(2)), []expr.Expr{col(0)}, []expr.Expr{col(0)})},
			{ID: User(11), Plan: NewReduce(NewGet(User(10)), []expr.Expr{col(1)},
				Aggregate{Func: AggCountStar}, Aggregate{Func: AggSum, Expr: col(3)})},
		},
		IndexExports:   []IndexExport{{ID: User(12), On: User(11), Key: []expr.Expr{col(0)}}},
		SubscribeSinks: []SubscribeSink{{ID: User(13), From: User(11), Snapshot: true, Progress: true, UpTo: frontier.Closed()}},
		AsOf:           frontier.At(1000),
		Until:          frontier.Closed(),
		Class:          ClassMaintained,
	}
}

func TestDataflowValidate(t *testing.T) {
	if err := sampleDataflow().Validate(); err != nil {
		t.Fatal(err)
	}
	descs, err := sampleDataflow().Descs()
	if err != nil || descs[User(11)].Arity() != 3 || descs[User(10)].Arity() != 4 {
		t.Fatalf("Descs = %v, %v", descs, err)
	}
	// A result column that is an untyped NULL (SELECT NULL FROM t) may
	// be a key: a one-shot read exports its result keyed by every column.
	nullKeyed := sampleDataflow()
	nullKeyed.ObjectsToBuild = append(nullKeyed.ObjectsToBuild, Build{ID: User(14),
		Plan: NewMfp(NewGet(User(11)), expr.MFP{Expressions: []expr.Expr{expr.TypedNull(row.TypeNull)}, Projection: []int{3}})})
	nullKeyed.IndexExports = append(nullKeyed.IndexExports, IndexExport{ID: User(15), On: User(14), Key: []expr.Expr{col(0)}})
	if err := nullKeyed.Validate(); err != nil {
		t.Fatalf("export keyed by an untyped NULL column: %v", err)
	}
	tests := []struct {
		name   string
		mutate func(d *DataflowDescription)
		want   string
	}{
		{"no class", func(d *DataflowDescription) { d.Class = ClassUnspecified }, "dataflow class unspecified(0)"},
		{"until before as_of", func(d *DataflowDescription) { d.Until = frontier.At(1000) }, "until [1000] is not beyond as_of [1000]"},
		{"closed as_of", func(d *DataflowDescription) { d.AsOf = frontier.Closed() }, "as_of is closed"},
		{"zero id", func(d *DataflowDescription) { d.ID = GlobalID{} }, "invalid dataflow id"},
		{"duplicate id", func(d *DataflowDescription) { d.IndexExports[0].ID = User(1) }, "index export 0 reuses id u1 of source import 0"},
		{"unknown get", func(d *DataflowDescription) { d.ObjectsToBuild[1].Plan = NewGet(User(99)) }, "build 1 (u11): get: unknown id u99"},
		{"topological order", func(d *DataflowDescription) {
			d.ObjectsToBuild[0], d.ObjectsToBuild[1] = d.ObjectsToBuild[1], d.ObjectsToBuild[0]
		}, "build 0 (u11) reads u10, which is built by build 1: objects_to_build must be in topological order"},
		{"join type mismatch", func(d *DataflowDescription) {
			d.ObjectsToBuild[0].Plan.Join.LeftKey = []expr.Expr{col(1)}
		}, "build 0 (u10): join: left key 0 has type text, right key 0 has type int64"},
		{"export unknown", func(d *DataflowDescription) { d.IndexExports[0].On = User(77) }, "index export 0 (u12): unknown id u77"},
		{"export key out of range", func(d *DataflowDescription) { d.IndexExports[0].Key = []expr.Expr{col(3)} }, "index export 0 (u12 on u11): key expression 0 (#3): column #3 out of range"},
		{"export empty key", func(d *DataflowDescription) { d.IndexExports[0].Key = nil }, "index export 0 (u12 on u11): empty key"},
		{"sink unknown", func(d *DataflowDescription) { d.SubscribeSinks[0].From = User(78) }, "subscribe sink 0 (u13): unknown id u78"},
		{"sink up_to", func(d *DataflowDescription) { d.SubscribeSinks[0].UpTo = frontier.At(5) }, "up_to [5] is before as_of [1000]"},
		{"no exports", func(d *DataflowDescription) { d.IndexExports, d.SubscribeSinks = nil, nil }, "exports nothing"},
		{"source kind", func(d *DataflowDescription) { d.SourceImports[0].Connection.Kind = "kafka" }, `unknown connection kind "kafka"`},
		{"source desc", func(d *DataflowDescription) { d.SourceImports[0].Desc.Names = nil }, "source import 0 (u1): relation desc: 0 names but 2 types"},
		{"index import disagrees", func(d *DataflowDescription) {
			d.IndexImports = append(d.IndexImports, IndexImport{ID: User(21), On: User(2), Key: []expr.Expr{col(1)}, Desc: descs[User(3)]})
		}, "index import 1 (u21 on u2): description disagrees"},
		{"index import key", func(d *DataflowDescription) { d.IndexImports[0].Key = []expr.Expr{col(4)} }, "index import 0 (u20 on u2): key expression 0"},
		{"build shadows import", func(d *DataflowDescription) { d.ObjectsToBuild[0].ID = User(2) }, "build 0 redefines imported collection u2"},
	}
	for _, tt := range tests {
		d := sampleDataflow()
		tt.mutate(d)
		err := d.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Validate error %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

// TestDataflowJSONGolden pins the wire form the protocol carries.
func TestDataflowJSONGolden(t *testing.T) {
	d := sampleDataflow()
	got, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "dataflow.golden.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("wire form changed; run with -update if deliberate.\ngot:\n%s", got)
	}
	back, err := Unmarshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := Compatible(d, back); err != nil {
		t.Errorf("round trip changed the dataflow: %v", err)
	}
	if back.AsOf != d.AsOf || back.Until != d.Until || back.SubscribeSinks[0].UpTo != frontier.Closed() {
		t.Errorf("frontiers changed: %v %v %v", back.AsOf, back.Until, back.SubscribeSinks[0].UpTo)
	}
}

func TestDataflowJSONRejects(t *testing.T) {
	good, err := Marshal(sampleDataflow())
	if err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(string) string{
		"unknown field": func(s string) string { return strings.Replace(s, `"debug_name"`, `"debug_nom"`, 1) },
		"bad as_of":     func(s string) string { return strings.Replace(s, `"as_of":"[1000]"`, `"as_of":"1000"`, 1) },
		"missing until": func(s string) string { return strings.Replace(s, `,"until":"[]"`, ``, 1) },
		"bad id":        func(s string) string { return strings.Replace(s, `"id":"u100"`, `"id":"v100"`, 1) },
		"bad class":     func(s string) string { return strings.Replace(s, `"maintained"`, `"sometimes"`, 1) },
		"trailing":      func(s string) string { return s + "{}" },
		"invalid plan":  func(s string) string { return strings.Replace(s, `"id":"u10"`, `"id":"u12"`, 1) },
	} {
		bad := mutate(string(good))
		if bad == string(good) {
			t.Fatalf("%s: mutation did not apply", name)
		}
		if _, err := Unmarshal([]byte(bad)); err == nil {
			t.Errorf("%s: Unmarshal accepted %s", name, bad)
		}
	}
}

func TestCompatible(t *testing.T) {
	nanFilter := func(d *DataflowDescription) {
		d.ObjectsToBuild = append(d.ObjectsToBuild, Build{ID: User(14), Plan: NewMfp(NewGet(User(11)),
			expr.MFP{Predicates: []expr.Expr{expr.Gt(col(2), lit(row.Float64(math.NaN())))}, Projection: []int{0}})})
	}
	tests := []struct {
		name        string
		old, mutate func(d *DataflowDescription)
		want        string // "" means compatible
	}{
		{"same", nil, nil, ""},
		{"later as_of", nil, func(d *DataflowDescription) { d.AsOf = frontier.At(5000) }, ""},
		{"earlier as_of", func(d *DataflowDescription) { d.AsOf = frontier.At(5000) }, nil, "as_of"},
		{"class", nil, func(d *DataflowDescription) { d.Class = ClassOneShotRead }, "class"},
		{"until", nil, func(d *DataflowDescription) { d.Until = frontier.At(9000) }, "until"},
		{"debug name is not compared", nil, func(d *DataflowDescription) { d.DebugName = "renamed" }, ""},
		{"id", nil, func(d *DataflowDescription) { d.ID = User(101) }, "id differ"},
		{"id kind", nil, func(d *DataflowDescription) { d.ID = Transient(100) }, "id differ"},
		{"aggregate", nil, func(d *DataflowDescription) { d.ObjectsToBuild[1].Plan.Reduce.Aggregates[1].Func = AggMax }, "objects_to_build differ"},
		{"plan node", nil, func(d *DataflowDescription) { d.ObjectsToBuild[0].Plan = NewGet(User(1)) }, "objects_to_build differ"},
		{"literal value", nanFilter, func(d *DataflowDescription) {
			nanFilter(d)
			d.ObjectsToBuild[2].Plan.Mfp.MFP.Predicates[0].Args[1] = lit(row.Float64(1))
		}, "objects_to_build differ"},
		{"literal type", func(d *DataflowDescription) {
			nanFilter(d)
			d.ObjectsToBuild[2].Plan.Mfp.MFP.Predicates[0].Args[1] = lit(row.Int64(1))
		}, func(d *DataflowDescription) {
			nanFilter(d)
			d.ObjectsToBuild[2].Plan.Mfp.MFP.Predicates[0].Args[1] = lit(row.Float64(1))
		}, "objects_to_build differ"},
		{"NaN literal equals itself", nanFilter, nanFilter, ""},
		{"nil and empty slices", nil, func(d *DataflowDescription) {
			d.ObjectsToBuild[1].Plan.Reduce.Aggregates[0].OrderBy = []AggOrder{}
			d.IndexImports[0].Key = append(make([]expr.Expr, 0, 4), d.IndexImports[0].Key...)
		}, ""},
		{"source option", nil, func(d *DataflowDescription) { d.SourceImports[0].Connection.Options["tick_ms"] = "10" }, "source_imports differ"},
		{"empty options", func(d *DataflowDescription) { d.SourceImports[0].Connection.Options = nil }, func(d *DataflowDescription) {
			d.SourceImports[0].Connection.Options = map[string]string{}
		}, ""},
		{"index import key", nil, func(d *DataflowDescription) { d.IndexImports[0].Key = []expr.Expr{col(1)} }, "index_imports differ"},
		{"index export", nil, func(d *DataflowDescription) { d.IndexExports[0].Key = append(d.IndexExports[0].Key, col(1)) }, "index_exports differ"},
		{"sink up_to", nil, func(d *DataflowDescription) { d.SubscribeSinks[0].UpTo = frontier.At(9000) }, "subscribe_sinks differ"},
		{"sink dropped", nil, func(d *DataflowDescription) { d.SubscribeSinks = nil }, "subscribe_sinks differ"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			old, new := sampleDataflow(), sampleDataflow()
			if tc.old != nil {
				tc.old(old)
			}
			if tc.mutate != nil {
				tc.mutate(new)
			}
			err := Compatible(old, new)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Compatible = %v, want compatible", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Compatible = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

// FuzzDecodeDataflow: decoding and validating arbitrary bytes never
// panics, and whatever validates re-encodes to a description that
// validates and is compatible with it.
func FuzzDecodeDataflow(f *testing.F) {
	good, err := Marshal(sampleDataflow())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	oneShot := sampleDataflow()
	oneShot.Class = ClassOneShotRead
	oneShot.Until = frontier.At(1001)
	oneShot.ObjectsToBuild = append(oneShot.ObjectsToBuild, Build{ID: Transient(1), Plan: NewTopK(
		NewMfp(NewGet(User(11)), expr.MFP{Predicates: []expr.Expr{expr.Gt(col(1), lit(row.Int64(1)))}, Projection: []int{0, 1}}),
		nil, []ColumnOrder{{Column: 1, Desc: true}}, limit(5), 0)})
	oneShot.IndexExports = append(oneShot.IndexExports, IndexExport{ID: Transient(2), On: Transient(1), Key: []expr.Expr{col(0)}})
	b, err := Marshal(oneShot)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"id":"u1","class":"maintained","as_of":"[0]","until":"[]","objects_to_build":[{"id":"u2","plan":{"union":{"inputs":[{"distinct":{}}]}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Unmarshal(b)
		if err != nil {
			return
		}
		again, err := Marshal(d)
		if err != nil {
			t.Fatalf("re-marshal of a valid dataflow: %v", err)
		}
		d2, err := Unmarshal(again)
		if err != nil {
			t.Fatalf("re-decoded dataflow invalid: %v\n%s", err, again)
		}
		if err := Compatible(d, d2); err != nil {
			t.Fatalf("round trip not compatible: %v", err)
		}
	})
}
