package environment

import (
	"context"
	"testing"

	"github.com/tandemdb/tandem/pkg/catalog"
)

// TestItemsFollowEveryCatalogChange: items, roles and grants are decoded
// once per catalog generation and every committed change (a create, a
// rename, a drop) is visible to the next read; callers may not disturb the
// cache through the slices they get.
func TestItemsFollowEveryCatalogChange(t *testing.T) {
	ctx := context.Background()
	e, closeCat := rolesOnly(t, t.TempDir(), "tandem")
	defer closeCat()
	cat := e.cfg.Catalog
	names := func() []string {
		t.Helper()
		its, err := e.Items(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range its {
			out = append(out, it.Name)
		}
		return out
	}
	change := func(f func(tx *catalog.Tx) error) {
		t.Helper()
		if err := cat.Update(f); err != nil {
			t.Fatal(err)
		}
	}
	if got := names(); len(got) != 0 {
		t.Fatalf("empty catalog: %v", got)
	}
	change(func(tx *catalog.Tx) error {
		return tx.CreateItem(catalog.Item{ID: 1, Name: "t", Kind: catalog.KindTable})
	})
	if got := names(); len(got) != 1 || got[0] != "t" {
		t.Fatalf("after create: %v", got)
	}
	its, _ := e.Items(ctx)
	its[0].Name = "scribbled"
	if got := names(); got[0] != "t" {
		t.Fatalf("a caller's change reached the cache: %v", got)
	}
	change(func(tx *catalog.Tx) error { return tx.RenameItem(1, "u") })
	if got := names(); len(got) != 1 || got[0] != "u" {
		t.Fatalf("after rename: %v", got)
	}
	change(func(tx *catalog.Tx) error { return tx.DropItem(1) })
	if got := names(); len(got) != 0 {
		t.Fatalf("after drop: %v", got)
	}
}

// TestItemsDecodeOncePerGeneration counts decodes through the cache.
func TestItemsDecodeOncePerGeneration(t *testing.T) {
	var d decoded
	loads := 0
	load := func() ([]int, error) { loads++; return []int{loads}, nil }
	var c cached[int]
	for _, gen := range []uint64{1, 1, 1, 2, 2, 3} {
		if _, err := get(&d.mu, &c, gen, load); err != nil {
			t.Fatal(err)
		}
	}
	if loads != 3 {
		t.Fatalf("%d decodes for three generations, want 3", loads)
	}
}
