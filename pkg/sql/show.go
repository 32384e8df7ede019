package sql

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/planner"
)

func textColumns(names ...string) []Column {
	out := make([]Column, len(names))
	for i, n := range names {
		out[i] = Column{Name: n, Type: textCol}
	}
	return out
}

func showColumns(k parse.ShowKind) []Column {
	switch k {
	case parse.ShowSources:
		return textColumns("name", "type", "cluster")
	case parse.ShowMaterializedViews:
		return textColumns("name", "cluster")
	case parse.ShowIndexes:
		return textColumns("name", "on", "cluster", "key")
	case parse.ShowClusters:
		return textColumns("name", "replicas")
	case parse.ShowClusterReplicas:
		return textColumns("cluster", "replica", "size", "status")
	case parse.ShowColumns:
		return textColumns("name", "nullable", "type")
	case parse.ShowObjects:
		return textColumns("name", "type")
	case parse.ShowCreate:
		return textColumns("name", "create_sql")
	}
	return textColumns("name")
}

func (s *Session) show(ctx context.Context, st *parse.Show) (*Result, error) {
	res := &Result{Columns: showColumns(st.Kind)}
	add := func(vals ...string) {
		r := make([]row.Datum, len(vals))
		for i, v := range vals {
			r[i] = row.Text(v)
		}
		res.Rows = append(res.Rows, r)
	}
	switch st.Kind {
	case parse.ShowClusters, parse.ShowClusterReplicas:
		clusters, err := s.engine.backend.Clusters(ctx)
		if err != nil {
			return nil, err
		}
		for _, c := range clusters {
			if st.Cluster != "" && c.Name != st.Cluster {
				continue
			}
			var names []string
			for _, r := range c.Replicas {
				names = append(names, r.Name)
				if st.Kind == parse.ShowClusterReplicas {
					add(c.Name, r.Name, r.Size, r.Status)
				}
			}
			if st.Kind == parse.ShowClusters {
				add(c.Name, strings.Join(names, ","))
			}
		}
	default:
		sn, err := s.snapshot(ctx)
		if err != nil {
			return nil, err
		}
		if err := s.showItems(sn, st, add); err != nil {
			return nil, err
		}
	}
	if st.Kind != parse.ShowColumns {
		sort.SliceStable(res.Rows, func(i, j int) bool {
			return row.CompareDatums(res.Rows[i], res.Rows[j]) < 0
		})
	}
	res.Tag = fmt.Sprintf("SELECT %d", len(res.Rows))
	return res, nil
}

func (s *Session) showItems(sn *snapshot, st *parse.Show, add func(...string)) error {
	var on *Item
	if st.Object != nil {
		it, ok := sn.lookup(*st.Object)
		if !ok {
			return undefinedRelation(*st.Object)
		}
		on = it
	}
	if st.Kind == parse.ShowCreate {
		add(on.Name, on.SQL)
		return nil
	}
	if st.Kind == parse.ShowColumns {
		var widths []planner.IntWidth
		var mods []planner.TypeMod
		if on.Kind == KindTable {
			widths, mods = planner.TableIntWidths(on.SQL), planner.TableTypeMods(on.SQL)
		}
		for i, t := range on.Desc.Types {
			var w planner.IntWidth
			var m planner.TypeMod
			if i < len(widths) && t.Type == row.TypeInt64 {
				w = widths[i]
			}
			if i < len(mods) {
				m = mods[i]
			}
			add(on.Desc.Name(i), fmt.Sprint(t.Nullable), planner.SQLTypeName(t.Type, w, m))
		}
		return nil
	}
	want := map[parse.ShowKind]ItemKind{
		parse.ShowSources: KindSource, parse.ShowTables: KindTable, parse.ShowViews: KindView,
		parse.ShowMaterializedViews: KindMaterializedView, parse.ShowIndexes: KindIndex,
	}
	for i := range sn.items {
		it := &sn.items[i]
		if st.Kind != parse.ShowObjects && it.Kind != want[st.Kind] {
			continue
		}
		if it.Schema == SchemaIntrospection && st.Kind != parse.ShowIndexes {
			continue
		}
		if st.Cluster != "" && it.Cluster != st.Cluster {
			continue
		}
		switch st.Kind {
		case parse.ShowSources:
			add(it.Name, "load-generator", it.Cluster)
		case parse.ShowMaterializedViews:
			add(it.Name, it.Cluster)
		case parse.ShowIndexes:
			if on != nil && it.On != on.ID {
				continue
			}
			onName := it.On.String()
			if o, ok := sn.byID[it.On]; ok {
				onName = o.Name
			}
			var keys []string
			for _, k := range it.Keys {
				keys = append(keys, keyString(k.String(), it.Desc))
			}
			add(it.Name, onName, it.Cluster, "{"+strings.Join(keys, ", ")+"}")
		case parse.ShowObjects:
			add(it.Name, kindName(it.Kind))
		default:
			add(it.Name)
		}
	}
	return nil
}

// keyString renders a key expression with column names for #i.
func keyString(s string, d row.RelationDesc) string {
	for i := d.Arity() - 1; i >= 0; i-- {
		s = strings.ReplaceAll(s, fmt.Sprintf("#%d", i), d.Name(i))
	}
	return s
}
