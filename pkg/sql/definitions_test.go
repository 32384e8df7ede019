package sql

import (
	"fmt"
	"testing"
)

// TestDefinitionsParseOncePerText: a view's query is parsed once per
// definition text and shared; a different text is parsed on its own; the
// cache stays bounded.
func TestDefinitionsParseOncePerText(t *testing.T) {
	var d definitions
	v := &Item{Name: "v", Kind: KindView, SQL: "CREATE VIEW v AS SELECT 1 AS a"}
	q1, err := d.viewQuery(v)
	if err != nil {
		t.Fatal(err)
	}
	q2, _ := d.viewQuery(&Item{Name: "v", Kind: KindView, SQL: v.SQL})
	if q1 != q2 {
		t.Fatal("the same definition was parsed twice")
	}
	w := &Item{Name: "v", Kind: KindView, SQL: "CREATE VIEW v AS SELECT 2 AS a"}
	if q3, _ := d.viewQuery(w); q3 == q1 {
		t.Fatal("a changed definition reused the old parse")
	}
	if _, err := d.viewQuery(&Item{Name: "t", Kind: KindView, SQL: "CREATE TABLE t (a int)"}); err == nil {
		t.Fatal("a definition that is not CREATE VIEW parsed as a view")
	}
	tbl := &Item{Name: "t", Kind: KindTable, SQL: "CREATE TABLE t (a int, b varchar(3))"}
	widths, mods := d.tableTypes(tbl)
	if len(widths) != 2 || len(mods) != 2 {
		t.Fatalf("table types: %v %v", widths, mods)
	}
	for i := range maxDefinitions + 10 {
		d.of(fmt.Sprint(i))
	}
	if n := len(d.m); n > maxDefinitions {
		t.Fatalf("%d cached definitions, bound %d", n, maxDefinitions)
	}
}
