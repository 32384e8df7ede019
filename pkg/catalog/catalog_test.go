package catalog

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func mustOpen(t *testing.T, dir string) *Catalog {
	t.Helper()
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestReopenReturnsEverything(t *testing.T) {
	dir := t.TempDir()
	c := mustOpen(t, dir)
	var table, index Item
	err := c.Update(func(tx *Tx) error {
		if err := tx.PutCluster(Cluster{Name: "default"}); err != nil {
			return err
		}
		if err := tx.PutReplica(Replica{Cluster: "default", Name: "r1", Processes: 1, Workers: 2}); err != nil {
			return err
		}
		if err := tx.PutReplica(Replica{Cluster: "default", Name: "r2", Processes: 2, Workers: 1, Interactive: true}); err != nil {
			return err
		}
		id, err := tx.AllocateID()
		if err != nil {
			return err
		}
		table = Item{ID: id, Name: "t", Kind: KindTable, SQL: "CREATE TABLE t (a int)", Desc: json.RawMessage(`{"names":["a"]}`)}
		if err := tx.CreateItem(table); err != nil {
			return err
		}
		id, err = tx.AllocateID()
		if err != nil {
			return err
		}
		index = Item{ID: id, Name: "t_idx", Kind: KindIndex, Cluster: "default", On: table.ID, DependsOn: []uint64{table.ID},
			Plan: json.RawMessage(`{"id":"u2"}`), Options: map[string]string{"key": "a"}}
		if err := tx.CreateItem(index); err != nil {
			return err
		}
		return tx.SetParam("enable_compute_interactive_dataflows", "on")
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	c = mustOpen(t, dir)
	defer c.Close()
	items, err := c.Items()
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].Name != "t" || items[1].Name != "t_idx" {
		t.Fatalf("items after reopen: %+v", items)
	}
	items[0].Created, items[1].Created = table.Created, index.Created
	if !reflect.DeepEqual(items[1].DependsOn, index.DependsOn) || string(items[1].Plan) != string(index.Plan) || items[1].Options["key"] != "a" {
		t.Fatalf("index after reopen: %+v", items[1])
	}
	rs, err := c.Replicas("default")
	if err != nil || len(rs) != 2 || rs[1] != (Replica{Cluster: "default", Name: "r2", Processes: 2, Workers: 1, Interactive: true}) {
		t.Fatalf("replicas after reopen: %+v, %v", rs, err)
	}
	cls, err := c.Clusters()
	if err != nil || len(cls) != 1 || cls[0].Name != "default" {
		t.Fatalf("clusters after reopen: %+v, %v", cls, err)
	}
	ps, err := c.Params()
	if err != nil || ps["enable_compute_interactive_dataflows"] != "on" {
		t.Fatalf("params after reopen: %v, %v", ps, err)
	}
	id, err := c.AllocateID()
	if err != nil || id != 3 {
		t.Fatalf("next id after reopen = %d, %v; want 3", id, err)
	}
}

func TestIDsAreNeverReused(t *testing.T) {
	dir := t.TempDir()
	c := mustOpen(t, dir)
	id1, _ := c.AllocateID()
	if err := c.Update(func(tx *Tx) error {
		if err := tx.CreateItem(Item{ID: id1, Name: "v", Kind: KindView}); err != nil {
			return err
		}
		return tx.DropItem(id1)
	}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c = mustOpen(t, dir)
	defer c.Close()
	id2, err := c.AllocateID()
	if err != nil || id2 <= id1 {
		t.Fatalf("id after drop and reopen = %d (first %d), %v", id2, id1, err)
	}
}

func TestFailedTransactionChangesNothing(t *testing.T) {
	c := mustOpen(t, t.TempDir())
	defer c.Close()
	boom := errors.New("boom")
	err := c.Update(func(tx *Tx) error {
		id, _ := tx.AllocateID()
		if err := tx.CreateItem(Item{ID: id, Name: "t", Kind: KindTable}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	items, _ := c.Items()
	if len(items) != 0 {
		t.Fatalf("rolled back transaction left items: %+v", items)
	}
	if id, _ := c.AllocateID(); id != 1 {
		t.Fatalf("rolled back allocation consumed an id: next = %d", id)
	}
}

func TestItemErrors(t *testing.T) {
	c := mustOpen(t, t.TempDir())
	defer c.Close()
	err := c.Update(func(tx *Tx) error {
		id, _ := tx.AllocateID()
		return tx.CreateItem(Item{ID: id, Name: "t", Kind: KindTable})
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		f    func(tx *Tx) error
		want error
	}{
		{"duplicate name", func(tx *Tx) error { return tx.CreateItem(Item{ID: 9, Name: "t", Kind: KindTable}) }, ErrExists},
		{"duplicate id", func(tx *Tx) error { return tx.CreateItem(Item{ID: 1, Name: "u", Kind: KindTable}) }, ErrExists},
		{"drop missing", func(tx *Tx) error { return tx.DropItem(42) }, ErrNotFound},
		{"lookup missing", func(tx *Tx) error { _, err := tx.ItemByName("nope"); return err }, ErrNotFound},
		{"replica of missing cluster", func(tx *Tx) error {
			return tx.PutReplica(Replica{Cluster: "nope", Name: "r", Processes: 1, Workers: 1})
		}, ErrNotFound},
		{"drop missing cluster", func(tx *Tx) error { return tx.DropCluster("nope") }, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := c.Update(tt.f); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if err := c.Update(func(tx *Tx) error { return tx.CreateItem(Item{Name: "x", Kind: KindView}) }); err == nil {
		t.Fatal("item without id accepted")
	}
}

func TestDropClusterDropsItsReplicas(t *testing.T) {
	c := mustOpen(t, t.TempDir())
	defer c.Close()
	err := c.Update(func(tx *Tx) error {
		for _, cl := range []string{"a", "ab"} {
			if err := tx.PutCluster(Cluster{Name: cl}); err != nil {
				return err
			}
			if err := tx.PutReplica(Replica{Cluster: cl, Name: "r1", Processes: 1, Workers: 1}); err != nil {
				return err
			}
		}
		return tx.DropCluster("a")
	})
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := c.Replicas("")
	if len(rs) != 1 || rs[0].Cluster != "ab" {
		t.Fatalf("replicas = %+v; want only ab.r1 (prefix must not match cluster ab)", rs)
	}
}
