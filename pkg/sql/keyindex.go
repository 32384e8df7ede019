package sql

import (
	"context"
	"fmt"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql/parse"
)

// A table's PRIMARY KEY is kept as an index by default: CREATE TABLE and
// ALTER TABLE ... ADD PRIMARY KEY create an index named like the
// constraint (t_pkey) on the session's cluster, keyed by the key's
// columns. Reads by key are then fast-path lookups (pgbench's SELECT ...
// WHERE aid = $1), and so is the key check of every write. The index is
// the table's own: it goes with DROP TABLE without CASCADE, and ALTER
// TABLE ... ADD COLUMN rebuilds it. It may be dropped like any index (the
// key is then checked with filtered reads).

// keyIndexMarker ends the SQL text of a table's own key index.
const keyIndexMarker = " /* PRIMARY KEY */"

// ownedIndex reports whether it is the key index of one of tables.
func ownedIndex(it *Item, tables ...*Item) bool {
	if it.Kind != KindIndex || !strings.HasSuffix(it.SQL, keyIndexMarker) {
		return false
	}
	for _, t := range tables {
		if it.On == t.ID {
			return true
		}
	}
	return false
}

// createKeyIndex creates the index of table's primary key, if it has one,
// on the session's cluster; a session whose cluster does not exist (or
// has been dropped) gets no index, which only makes key reads slower.
func (s *Session) createKeyIndex(ctx context.Context, sn *snapshot, table *Item) error {
	def, err := tableDefOf(table)
	if err != nil {
		return err
	}
	cluster, _ := s.vars.Get(VarCluster)
	if s.checkCluster(ctx, cluster) != nil {
		return nil
	}
	for _, k := range def.keys {
		if !k.primary {
			continue
		}
		if _, taken := sn.lookup(parse.ObjectName{Name: k.name}); taken {
			return nil
		}
		keys := make([]expr.Expr, len(k.cols))
		names := make([]string, len(k.cols))
		for i, c := range k.cols {
			keys[i] = expr.Column(c)
			names[i] = table.Desc.Name(c)
		}
		p := plan.NewGet(table.ID)
		text := fmt.Sprintf("CREATE INDEX %s IN CLUSTER %s ON %s (%s)%s", k.name, cluster, table.Name, strings.Join(names, ", "), keyIndexMarker)
		if _, err := s.engine.backend.CreateItem(ctx, Item{
			Schema: SchemaPublic, Name: k.name, Kind: KindIndex, Desc: table.Desc, SQL: text, Cluster: cluster,
			On: table.ID, Keys: keys, Plan: &p, DependsOn: []plan.GlobalID{table.ID}, Owner: table.Owner,
		}); err != nil {
			return fmt.Errorf("create index of primary key %s: %w", k.name, err)
		}
	}
	return nil
}

// reloadTable returns the current catalog entry of a table.
func (s *Session) reloadTable(ctx context.Context, name string) (*snapshot, *Item, error) {
	sn, err := s.snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	it, ok := sn.lookup(parse.ObjectName{Name: name})
	if !ok {
		return nil, nil, undefinedRelation(parse.ObjectName{Name: name})
	}
	return sn, it, nil
}
