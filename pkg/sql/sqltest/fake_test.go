package sqltest

import (
	"context"
	"testing"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql"
)

func kvTable(t *testing.T, f *Fake) sql.Item {
	t.Helper()
	ctx := context.Background()
	tbl, err := f.CreateItem(ctx, sql.Item{Name: "kv", Kind: sql.KindTable, Desc: row.RelationDesc{
		Names: []string{"k", "v"}, Types: []row.ColumnType{{Type: row.TypeInt64}, {Type: row.TypeText}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.WriteTable(ctx, tbl.ID, []sql.RowDiff{
		{Row: row.Pack(row.Int64(1), row.Text("a")), Diff: 1},
		{Row: row.Pack(row.Int64(2), row.Text("b")), Diff: 2},
	}); err != nil {
		t.Fatal(err)
	}
	return tbl
}

func TestIndexPeekUsesKeys(t *testing.T) {
	f := New()
	ctx := context.Background()
	tbl := kvTable(t, f)
	get := plan.NewGet(tbl.ID)
	ix, err := f.CreateItem(ctx, sql.Item{Name: "kv_k", Kind: sql.KindIndex, On: tbl.ID, Desc: tbl.Desc,
		Keys: []expr.Expr{expr.Column(0)}, Plan: &get, Cluster: "default"})
	if err != nil {
		t.Fatal(err)
	}
	// The MFP keeps every row: only the key lookup may select.
	pr, err := f.Peek(ctx, sql.PeekRequest{Cluster: "default", Index: &sql.IndexPeek{
		Index: ix.ID, Keys: []row.Row{row.Pack(row.Int64(2))}, MFP: expr.Identity(2)}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := sql.CollectRows(pr)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Diff != 2 || string(got[0].Row) != string(row.Pack(row.Int64(2), row.Text("b"))) {
		t.Fatalf("lookup of 2 = %v", got)
	}
	if err := f.DropItems(ctx, []plan.GlobalID{tbl.ID}); err == nil {
		t.Fatal("dropped a table an index depends on")
	}
	if err := f.DropItems(ctx, []plan.GlobalID{ix.ID, tbl.ID}); err != nil {
		t.Fatal(err)
	}
}

func TestSubscriptionStepsThroughWrites(t *testing.T) {
	f := New()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tbl := kvTable(t, f)
	get := plan.NewGet(tbl.ID)
	sub, err := f.Subscribe(ctx, sql.SubscribeRequest{Cluster: "default", Plan: &get, Desc: tbl.Desc, Snapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	b, err := sub.Next(ctx)
	if err != nil || len(b.Updates) != 2 {
		t.Fatalf("snapshot %v %v", b, err)
	}
	for i := 0; i < 2; i++ {
		if err := f.WriteTable(ctx, tbl.ID, []sql.RowDiff{{Row: row.Pack(row.Int64(int64(10+i)), row.Text("n")), Diff: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	b, err = sub.Next(ctx)
	if err != nil || len(b.Updates) != 2 || b.Updates[0].Time == b.Updates[1].Time || b.Upper <= b.Updates[1].Time {
		t.Fatalf("two writes must arrive at two times below the upper: %+v %v", b, err)
	}
	short, stop := context.WithTimeout(ctx, 10*time.Millisecond)
	defer stop()
	if _, err := sub.Next(short); err == nil {
		t.Fatal("Next without a write returned")
	}
}
