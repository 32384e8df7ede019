package sql

import (
	"context"
	"fmt"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Key enforcement. A write to a table with PRIMARY KEY or UNIQUE
// constraints is checked, under Engine.writeMu, against the table's
// contents read at the latest time: the lock is what every table writer
// holds (INSERT, UPDATE, DELETE, COPY, TRUNCATE, transaction commits),
// so nothing can change the table between the check and the append.
// The read asks only for the rows with the written keys: a key lookup
// on an index keyed by exactly the key columns when there is one (the
// fast path), else a filtered one-shot read of the table. Because the
// check reads the durable table, it needs no state of its own and is
// exactly as correct after a restart as before.

// maxFilteredKeys bounds the keys a check reads with a filter; a larger
// write (a bulk COPY) reads the table's rows whole and matches in memory.
const maxFilteredKeys = 512

// keyString encodes the key columns of a row, or reports false when one
// is NULL (NULLs never conflict, as in PostgreSQL).
func encodedKey(r []row.Datum, cols []int) (string, bool) {
	vals := make([]row.Datum, len(cols))
	for i, c := range cols {
		if r[c].IsNull() {
			return "", false
		}
		vals[i] = r[c].NumericKey() // 1.5 and 1.50 are one key, as in PostgreSQL
	}
	return string(row.Pack(vals...)), true
}

// keyText renders a key as PostgreSQL's DETAIL does: (a, b)=(1, x).
func keyText(it *Item, k keyDef, r []row.Datum) string {
	names := make([]string, len(k.cols))
	vals := make([]string, len(k.cols))
	for i, c := range k.cols {
		names[i] = it.Desc.Name(c)
		vals[i] = string(r[c].AppendText(nil))
	}
	return "(" + strings.Join(names, ", ") + ")=(" + strings.Join(vals, ", ") + ")"
}

func duplicateKey(it *Item, k keyDef, r []row.Datum) error {
	return &sqlerr.Error{Code: sqlerr.UniqueViolation,
		Message: fmt.Sprintf("duplicate key value violates unique constraint %q", k.name),
		Detail:  "Key " + keyText(it, k, r) + " already exists."}
}

// tableChange is a write to one table: rows added and rows removed.
type tableChange struct {
	adds    [][]row.Datum
	removes [][]row.Datum
	// truncated: the table's current rows all go first (TRUNCATE), so
	// none of them can conflict.
	truncated bool
}

// checkKeys enforces a table's keys on a change. The caller holds
// Engine.writeMu.
func (s *Session) checkKeys(ctx context.Context, sn *snapshot, r *tableRules, ch *tableChange) error {
	for _, k := range r.keys {
		// delta[key] is the change's net count of rows with key; the
		// table's rows with each added key are read (removed rows are
		// rows of the table, so a key both removed and added must be
		// read too: UPDATE t SET a = 2 over a = 1 and a = 2).
		delta := map[string]int{}
		var cands [][]row.Datum
		for _, rm := range ch.removes {
			if ks, ok := encodedKey(rm, k.cols); ok {
				delta[ks]--
			}
		}
		added := map[string]bool{}
		for _, a := range ch.adds {
			ks, ok := encodedKey(a, k.cols)
			if !ok {
				continue
			}
			if !added[ks] {
				added[ks] = true
				cands = append(cands, a)
			}
			delta[ks]++
		}
		existing := map[string]int{}
		if !ch.truncated && len(cands) > 0 {
			rows, err := s.rowsWithKeys(ctx, sn, r.it, k.cols, cands)
			if err != nil {
				return err
			}
			for _, e := range rows {
				if ks, ok := encodedKey(e, k.cols); ok {
					existing[ks]++
				}
			}
		}
		for _, a := range ch.adds {
			if ks, ok := encodedKey(a, k.cols); ok && existing[ks]+delta[ks] > 1 {
				return duplicateKey(r.it, k, a)
			}
		}
	}
	return nil
}

// rowsWithKeys reads, at the latest time, the rows of a table whose
// columns cols equal one of the given rows' (at least the rows: a large
// key set reads the whole table).
func (s *Session) rowsWithKeys(ctx context.Context, sn *snapshot, it *Item, cols []int, keys [][]row.Datum) ([][]row.Datum, error) {
	req := PeekRequest{Desc: it.Desc, Isolation: IsolationStrictSerializable}
	req.Cluster, _ = s.vars.Get(VarCluster)
	if ix := keyIndex(sn, it, cols, req.Cluster); ix != nil && len(keys) <= maxFilteredKeys {
		packed := make([]row.Row, len(keys))
		for i, k := range keys {
			vals := make([]row.Datum, len(cols))
			for j, c := range cols {
				vals[j] = k[c]
			}
			packed[i] = row.Pack(vals...)
		}
		req.Index = &IndexPeek{Index: ix.ID, Keys: packed, MFP: expr.Identity(it.Desc.Arity())}
	} else {
		m := expr.Identity(it.Desc.Arity())
		if len(keys) <= maxFilteredKeys {
			m.Predicates = []expr.Expr{keyPredicate(cols, keys)}
		}
		p := plan.NewMfp(plan.NewGet(it.ID), m)
		req.Plan = &p
	}
	return s.peekAll(ctx, req)
}

// keyIndex returns an index on the table keyed by exactly cols, on the
// cluster, or nil.
func keyIndex(sn *snapshot, it *Item, cols []int, cluster string) *Item {
	for i := range sn.items {
		ix := &sn.items[i]
		if ix.Kind != KindIndex || ix.On != it.ID || ix.Cluster != cluster || len(ix.Keys) != len(cols) {
			continue
		}
		match := true
		for j, k := range ix.Keys {
			if k.Op != expr.OpColumn || k.Index != cols[j] {
				match = false
			}
		}
		if match {
			return ix
		}
	}
	return nil
}

// keyPredicate is (c1 = k1 AND c2 = k2) OR ... over the keys.
func keyPredicate(cols []int, keys [][]row.Datum) expr.Expr {
	ors := make([]expr.Expr, len(keys))
	for i, k := range keys {
		ands := make([]expr.Expr, len(cols))
		for j, c := range cols {
			ands[j] = expr.Eq(expr.Column(c), expr.Literal(k[c]))
		}
		ors[i] = expr.And(ands...)
		if len(ands) == 1 {
			ors[i] = ands[0]
		}
	}
	if len(ors) == 1 {
		return ors[0]
	}
	return expr.Or(ors...)
}

// tableRows reads a table's whole contents at the latest time (TRUNCATE,
// ALTER TABLE). The caller holds Engine.writeMu.
func (s *Session) tableRows(ctx context.Context, it *Item) ([][]row.Datum, error) {
	req := PeekRequest{Desc: it.Desc, Isolation: IsolationStrictSerializable}
	req.Cluster, _ = s.vars.Get(VarCluster)
	p := plan.NewGet(it.ID)
	req.Plan = &p
	return s.peekAll(ctx, req)
}

// peekAll runs req and returns every row it answers, expanded by
// multiplicity under the session's max_query_memory.
func (s *Session) peekAll(ctx context.Context, req PeekRequest) ([][]row.Datum, error) {
	pr, err := s.engine.backend.Peek(ctx, req)
	if err != nil {
		return nil, err
	}
	diffs, err := CollectRows(pr)
	if err != nil {
		return nil, err
	}
	return expand(diffs, &memBudget{limit: s.maxQueryMemory(ctx)})
}
