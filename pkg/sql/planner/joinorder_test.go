package planner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// joinCatalog has t1..t5 (a bigint NOT NULL, b bigint, x text, iv
// interval) with ids u11..u15.
func joinCatalog() mapCatalog {
	cat := testCatalog()
	d := row.RelationDesc{Names: []string{"a", "b", "x", "iv"}, Types: []row.ColumnType{
		{Type: row.TypeInt64}, {Type: row.TypeInt64, Nullable: true}, {Type: row.TypeText, Nullable: true}, {Type: row.TypeInterval, Nullable: true}}}
	for i := 1; i <= 5; i++ {
		n := fmt.Sprintf("t%d", i)
		cat[n] = Relation{ID: plan.User(uint64(10 + i)), Name: n, Desc: d}
	}
	return cat
}

// joinShape summarises a plan for the join planning tests.
type joinShape struct {
	cross, keyed int
	// leafFilters are the predicates of Mfp nodes directly over a Get,
	// by the Get's id.
	leafFilters map[string][]string
	// overUnion are the predicates of Mfp nodes directly over a Union.
	overUnion []string
}

func shapeOf(p plan.Plan) joinShape {
	s := joinShape{leafFilters: map[string][]string{}}
	var walk func(p *plan.Plan)
	walk = func(p *plan.Plan) {
		if p.Join != nil {
			if len(p.Join.LeftKey) == 0 {
				s.cross++
			} else {
				s.keyed++
			}
		}
		if p.Mfp != nil {
			var preds []string
			for _, pr := range p.Mfp.MFP.Predicates {
				preds = append(preds, pr.String())
			}
			switch in := p.Mfp.Input; {
			case in.Get != nil:
				id := in.Get.ID.String()
				s.leafFilters[id] = append(s.leafFilters[id], preds...)
			case in.Union != nil:
				s.overUnion = append(s.overUnion, preds...)
			}
		}
		for _, in := range p.Inputs() {
			walk(in)
		}
	}
	walk(&p)
	return s
}

func TestJoinPlanning(t *testing.T) {
	tests := []struct {
		name         string
		sql          string
		cross, keyed int
		leafFilters  map[string]string // id: a predicate that must be applied right at the table
		overUnion    string            // a predicate that must stay above an outer join
	}{
		{
			name:  "equalities become keys, the literal-fixed table first",
			sql:   "SELECT t1.x, t3.x FROM t1, t2, t3 WHERE t3.a = t2.b AND t2.a = 6 AND t1.b = t3.a",
			keyed: 2, leafFilters: map[string]string{"u12": "(#0 = 6)", "u11": "NOT (#1 IS NULL)"},
		},
		{
			name:  "single-table filters only: filtered cross products",
			sql:   "SELECT t1.x FROM t1, t2, t3 WHERE t1.a = 5 AND t2.b > 3 AND 460 = t3.a",
			cross: 2, leafFilters: map[string]string{"u11": "(#0 = 5)", "u12": "(#1 > 3)", "u13": "(460 = #0)"},
		},
		{
			name: "five tables in scrambled order, chained",
			sql: "SELECT t1.x FROM t4, t2, t5, t1, t3 WHERE t1.a = t2.b AND t4.a = t5.b AND t3.b = t4.a " +
				"AND t2.a = t3.a AND t5.x = 'k'",
			keyed: 4, leafFilters: map[string]string{"u15": "(#2 = 'k')"},
		},
		{
			name:  "a cycle: the last equality is a filter",
			sql:   "SELECT t1.x FROM t1, t2, t3 WHERE t1.a = t2.a AND t2.a = t3.a AND t3.a = t1.a",
			keyed: 2,
		},
		{
			name:  "interval equality is not a key ('1 day' = '24 hours')",
			sql:   "SELECT t1.x FROM t1, t2 WHERE t1.iv = t2.iv",
			cross: 1,
		},
		{
			name:  "a disjunction across tables stays above the join",
			sql:   "SELECT t1.x FROM t1, t2 WHERE t1.a = t2.a OR t1.b = t2.b",
			cross: 1,
		},
		{
			name:  "explicit JOIN ON with WHERE on one side",
			sql:   "SELECT t1.x FROM t1 JOIN t2 ON t1.a = t2.a, t3 WHERE t2.x = 'k' AND t3.b = t2.b",
			keyed: 2, leafFilters: map[string]string{"u12": "(#2 = 'k')"},
		},
		{
			name:  "a leaf without columns",
			sql:   "SELECT t1.x FROM t1, (SELECT FROM t2) s, t3 WHERE t3.a = t1.b AND t3.x = 'k'",
			cross: 1, keyed: 1, leafFilters: map[string]string{"u13": "(#2 = 'k')"},
		},
		{
			name:  "a filter on an outer join's nullable side stays above it",
			sql:   "SELECT t1.x FROM t1 LEFT JOIN t2 ON t1.a = t2.a, t3 WHERE t2.b IS NULL AND t3.a = t1.a AND t1.b > 0",
			keyed: 3, overUnion: "(#5 IS NULL)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := planSQL(t, &Planner{Catalog: joinCatalog()}, tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			s := shapeOf(q.Plan)
			if s.cross != tc.cross || s.keyed != tc.keyed {
				t.Errorf("%d cross and %d keyed joins, want %d and %d", s.cross, s.keyed, tc.cross, tc.keyed)
			}
			for id, want := range tc.leafFilters {
				if !strings.Contains(strings.Join(s.leafFilters[id], " "), want) {
					t.Errorf("%s filtered by %v, want %s", id, s.leafFilters[id], want)
				}
			}
			if tc.overUnion != "" && !strings.Contains(strings.Join(s.overUnion, " "), tc.overUnion) {
				t.Errorf("above the outer join: %v, want %s", s.overUnion, tc.overUnion)
			}
			if t.Failed() {
				t.Log(Explain(q))
			}
		})
	}
}
