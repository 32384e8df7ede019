package environment

import (
	"context"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql"
)

// A read's ORDER BY ... LIMIT cut reaches the replicas: a full scan of a
// 500-key index with a cut of 3 rows in descending key order returns
// those 3 rows, not the 500 (the SQL layer would then finish them).
func TestTopKCutReachesTheReplica(t *testing.T) {
	ctx := context.Background()
	s := openStack(t, t.TempDir())
	defer s.close()
	src, err := s.env.CreateSource(ctx, sql.SourceSpec{Name: "kv", Generator: "KEY VALUE", Options: map[string]string{"KEYS": "500", "TICK INTERVAL": "50ms"}})
	if err != nil {
		t.Fatal(err)
	}
	get := plan.NewGet(src[0].ID)
	idx, err := s.env.CreateItem(ctx, sql.Item{Name: "kv_idx", Kind: sql.KindIndex, Desc: src[0].Desc, Cluster: DefaultCluster,
		On: src[0].ID, Keys: []expr.Expr{expr.Column(0)}, Plan: &get, DependsOn: []plan.GlobalID{src[0].ID}})
	if err != nil {
		t.Fatal(err)
	}
	if rows := peekIndex(t, s.env, idx.ID, row.Pack(row.Int64(3))); len(rows) != 1 {
		t.Fatalf("index not readable: %+v", rows)
	}
	limit := int64(3)
	cut := &plan.Finishing{Order: []plan.ColumnOrder{{Column: 0, Desc: true}}, Limit: &limit}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	pr, err := s.env.Peek(cctx, sql.PeekRequest{Cluster: DefaultCluster, Index: &sql.IndexPeek{Index: idx.ID}, Isolation: sql.IsolationSerializable, Cut: cut})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := sql.CollectRows(pr)
	if err != nil {
		t.Fatal(err)
	}
	var keys []int64
	for _, r := range rows {
		d, err := r.Row.Column(0)
		if err != nil {
			t.Fatal(err)
		}
		for range r.Diff {
			keys = append(keys, d.Int64())
		}
	}
	if len(keys) != 3 || keys[0] != 499 || keys[1] != 498 || keys[2] != 497 {
		t.Fatalf("cut read returned keys %v (%d rows), want [499 498 497]", keys, len(keys))
	}
}
