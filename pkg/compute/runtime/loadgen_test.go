package runtime_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/frontier"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/render"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/compute/runtime/runtimetest"
)

// TestLoadGeneratorSource indexes a COUNTER that ticks every 20ms of real
// time: reads at past ticks are answered at once, a read at a future tick
// waits for the generator's timer.
func TestLoadGeneratorSource(t *testing.T) {
	const tick = 20
	for _, o := range []runtimetest.Options{{Workers: 1}, {Workers: 2, Processes: 2}} {
		t.Run(name(o), func(t *testing.T) {
			o.Sources = render.SourceKinds{plan.SourceLoadGen: render.LoadGenerators{}}
			h := runtimetest.New(t, o)
			start := frontier.Time(time.Now().UnixMilli()) - 5*tick
			counter := plan.User(20)
			desc := plan.DataflowDescription{
				ID: plan.Transient(5), DebugName: "counter", Class: plan.ClassMaintained,
				SourceImports: []plan.SourceImport{{ID: counter,
					Desc: row.NewRelationDesc([]string{"counter"}, []row.ColumnType{{Type: row.TypeInt64}}),
					Connection: plan.SourceConnection{Kind: plan.SourceLoadGen, Options: map[string]string{
						"generator": "COUNTER", "tick_ms": fmt.Sprint(tick), "start": fmt.Sprint(start)}}}},
				IndexExports: []plan.IndexExport{{ID: plan.User(21), On: counter, Key: []expr.Expr{expr.Column(0)}}},
				AsOf:         frontier.At(start), Until: frontier.Closed(),
			}
			h.MustCreate(desc)
			rows, err := h.Peek(plan.User(21), start+5*tick, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 5 {
				t.Fatalf("at tick 5: %d rows, want 5", len(rows))
			}
			rows, err = h.Peek(plan.User(21), frontier.Time(time.Now().UnixMilli())+3*tick, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) < 8 {
				t.Fatalf("future read: %d rows, want at least 8", len(rows))
			}
		})
	}
}
