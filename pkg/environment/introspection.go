package environment

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/logging"
	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Introspection relations are stored in the catalog, so that their ids
// survive restarts (a replica that outlives the controller keeps the
// logging indexes it was first given):
//   - one item per relation, named "introspection/<relation>", shown to
//     the SQL layer as <relation> in schema introspection with a system id;
//   - per cluster and relation, a hidden record named
//     "introspection/<cluster>/<relation>" whose id is the GlobalId of the
//     index each replica of the cluster maintains for the relation. They
//     are not SQL items: an index item would tie the cluster to items that
//     DROP CLUSTER cannot drop.
//
// Catalog names containing '/' never clash with SQL names in practice, and
// ids come from the one catalog allocator, so system and user ids never
// share a number.
const introspectionPrefix = "introspection/"

func relationName(rel logging.Relation) string { return introspectionPrefix + string(rel) }

func clusterIndexName(cluster string, rel logging.Relation) string {
	return introspectionPrefix + cluster + "/" + string(rel)
}

// ensureIntrospection creates any missing relation items and cluster
// index records of cluster inside tx and returns the cluster's relation
// name -> index GlobalId.
func ensureIntrospection(tx *catalog.Tx, cluster string) (map[string]plan.GlobalID, error) {
	ids := map[string]plan.GlobalID{}
	for _, rel := range logging.Relations() {
		desc, _ := logging.Desc(rel)
		rd, err := json.Marshal(desc)
		if err != nil {
			return nil, err
		}
		if _, err := ensureSystemItem(tx, relationName(rel), catalog.KindSource, "", rd,
			itemExtra{Schema: sql.SchemaIntrospection, System: true}); err != nil {
			return nil, err
		}
		id, err := ensureSystemItem(tx, clusterIndexName(cluster, rel), catalog.KindIndex, cluster, rd,
			itemExtra{Schema: sql.SchemaIntrospection, System: true, Hidden: true})
		if err != nil {
			return nil, err
		}
		ids[string(rel)] = plan.System(id)
	}
	return ids, nil
}

func ensureSystemItem(tx *catalog.Tx, name string, kind catalog.Kind, cluster string, desc []byte, x itemExtra) (uint64, error) {
	if ci, err := tx.ItemByName(name); err == nil {
		return ci.ID, nil
	} else if !errors.Is(err, catalog.ErrNotFound) {
		return 0, err
	}
	id, err := tx.AllocateID()
	if err != nil {
		return 0, err
	}
	extra, err := json.Marshal(x)
	if err != nil {
		return 0, err
	}
	if err := tx.CreateItem(catalog.Item{ID: id, Name: name, Kind: kind, Cluster: cluster, Desc: desc, Plan: extra}); err != nil {
		return 0, fmt.Errorf("create introspection item %s: %w", name, err)
	}
	return id, nil
}

// dropIntrospection removes a cluster's index records inside tx.
func dropIntrospection(tx *catalog.Tx, cluster string) error {
	for _, rel := range logging.Relations() {
		ci, err := tx.ItemByName(clusterIndexName(cluster, rel))
		if errors.Is(err, catalog.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := tx.DropItem(ci.ID); err != nil {
			return err
		}
	}
	return nil
}

// enableIntrospection records cluster's introspection indexes in the
// catalog (if new) and tells the controller, before any replica of the
// cluster is created.
func (e *Environment) enableIntrospection(cluster string) error {
	var ids map[string]plan.GlobalID
	err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		var err error
		ids, err = ensureIntrospection(tx, cluster)
		return err
	})
	if err != nil {
		return fmt.Errorf("introspection of cluster %s: %w", cluster, err)
	}
	return e.cfg.Compute.EnableIntrospection(cluster, ids, logging.DefaultInterval)
}

// isIntrospection reports whether an item is an introspection relation.
func isIntrospection(it sql.Item) bool {
	return it.Schema == sql.SchemaIntrospection && it.ID.Kind == plan.KindSystem
}

// introspectionImport returns the import of introspection relation it on
// cluster: the index every replica of the cluster maintains, keyed by the
// relation's first column.
func (e *Environment) introspectionImport(it sql.Item, cluster string) (plan.IndexImport, error) {
	ids := e.cfg.Compute.IntrospectionIDs(cluster)
	ix, ok := ids[it.Name]
	if !ok {
		return plan.IndexImport{}, sqlerr.Errorf(sqlerr.UndefinedObject, "cluster %q keeps no introspection relation %s", cluster, it.Name)
	}
	return plan.IndexImport{ID: ix, On: it.ID, Key: []expr.Expr{expr.Column(0)}, Desc: it.Desc}, nil
}

// readsIntrospection reports whether a plan reads an introspection
// relation.
func readsIntrospection(p plan.Plan, items map[plan.GlobalID]sql.Item) bool {
	for _, id := range p.DependsOn() {
		if it, ok := items[id]; ok && isIntrospection(it) {
			return true
		}
	}
	return false
}

// systemName is the SQL name of a system catalog item.
func systemName(name string) string { return strings.TrimPrefix(name, introspectionPrefix) }
