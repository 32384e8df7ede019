package sql

import (
	"context"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// CREATE UNIQUE INDEX on a table adds a key to the table's rules: every
// write is checked against it like a UNIQUE constraint (keys.go), with
// the index's name in the 23505 message, NULLs never conflicting, and
// ON CONFLICT may name its columns. The index item's SQL text is what
// marks it unique, so the rule lives exactly as long as the index (DROP
// INDEX, or DROP TABLE dropping it, ends it). Creating one reads the
// table first and fails with 23505 when existing rows violate it.
// Only plain columns of tables are supported: PostgreSQL's unique
// indexes on expressions and on materialized views are refused (0A000).

// uniqueIndexKeys returns the keys of the unique indexes on table it.
func (sn *snapshot) uniqueIndexKeys(it *Item) []keyDef {
	if sn == nil || it.ID.IsZero() {
		return nil
	}
	var out []keyDef
	for i := range sn.items {
		ix := &sn.items[i]
		if ix.Kind != KindIndex || ix.On != it.ID || !isUniqueIndex(ix) {
			continue
		}
		if cols, ok := keyColumns(ix.Keys, it.Desc.Arity()); ok {
			out = append(out, keyDef{name: ix.Name, cols: cols})
		}
	}
	return out
}

// isUniqueIndex reports whether an index was created by CREATE UNIQUE
// INDEX.
func isUniqueIndex(ix *Item) bool {
	if !strings.Contains(strings.ToLower(ix.SQL), "unique") {
		return false
	}
	st, err := parse.ParseOne(ix.SQL)
	if err != nil {
		return false
	}
	ci, ok := st.(*parse.CreateIndex)
	return ok && ci.Unique
}

// keyColumns returns the columns of keys that are all plain columns below
// arity.
func keyColumns(keys []expr.Expr, arity int) ([]int, bool) {
	cols := make([]int, len(keys))
	for i, k := range keys {
		if k.Op != expr.OpColumn || k.Index < 0 || k.Index >= arity {
			return nil, false
		}
		cols[i] = k.Index
	}
	return cols, len(cols) > 0
}

// checkUniqueIndex decides whether a unique index named name with keys
// may be created on the relation on: it must be a table, keyed by
// columns, and its rows must not already violate the key. The caller
// holds Engine.writeMu.
func (s *Session) checkUniqueIndex(ctx context.Context, on *Item, name string, keys []expr.Expr) error {
	if on.Kind != KindTable {
		return sqlerr.Unsupported("unique indexes on " + kindName(on.Kind) + "s")
	}
	cols, ok := keyColumns(keys, on.Desc.Arity())
	if !ok {
		return sqlerr.Unsupported("unique indexes on expressions")
	}
	rows, err := s.tableRows(ctx, on)
	if err != nil {
		return err
	}
	k := keyDef{name: name, cols: cols}
	seen := map[string]bool{}
	for _, r := range rows {
		ks, ok := encodedKey(r, cols)
		if !ok {
			continue
		}
		if seen[ks] {
			return &sqlerr.Error{Code: sqlerr.UniqueViolation,
				Message: "could not create unique index \"" + name + "\"",
				Detail:  "Key " + keyText(on, k, r) + " is duplicated."}
		}
		seen[ks] = true
	}
	return nil
}
