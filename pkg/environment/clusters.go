package environment

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Clusters implements sql.Clusters.
func (e *Environment) Clusters(ctx context.Context) ([]sql.Cluster, error) {
	cls, err := e.cfg.Catalog.Clusters()
	if err != nil {
		return nil, err
	}
	st := e.cfg.Compute.Status()
	status := map[string]string{}
	for _, cs := range st.Clusters {
		for _, r := range cs.Replicas {
			s := "offline"
			switch {
			case r.Connected && len(r.NotHydrated) == 0:
				s = "ready"
			case r.Connected:
				s = "hydrating"
			}
			status[cs.Name+"."+r.Name] = s
		}
	}
	var out []sql.Cluster
	for _, cl := range cls {
		rs, err := e.cfg.Catalog.Replicas(cl.Name)
		if err != nil {
			return nil, err
		}
		c := sql.Cluster{Name: cl.Name}
		for _, r := range rs {
			c.Replicas = append(c.Replicas, sql.Replica{Name: r.Name, Size: sizeString(r.Processes, r.Workers),
				Processes: r.Processes, Workers: r.Workers, Status: status[cl.Name+"."+r.Name]})
		}
		out = append(out, c)
	}
	return out, nil
}

func sizeString(p, w int) string {
	if p == 1 {
		return strconv.Itoa(w)
	}
	return fmt.Sprintf("%dx%d", p, w)
}

// parseSize reads "W" (one process of W workers) or "PxW".
func parseSize(spec sql.ReplicaSpec) (processes, workers int, err error) {
	processes, workers = DefaultProcesses, DefaultWorkers
	if s := strings.TrimSpace(spec.Size); s != "" {
		p, w, ok := strings.Cut(strings.ToLower(s), "x")
		if !ok {
			p, w = "1", p
		}
		if processes, err = strconv.Atoi(p); err != nil || processes < 1 {
			return 0, 0, sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid replica size %q: want W or PxW", spec.Size)
		}
		if workers, err = strconv.Atoi(w); err != nil || workers < 1 {
			return 0, 0, sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid replica size %q: want W or PxW", spec.Size)
		}
	}
	if spec.Processes > 0 {
		processes = spec.Processes
	}
	if spec.Workers > 0 {
		workers = spec.Workers
	}
	return processes, workers, nil
}

// CreateCluster implements sql.Clusters.
func (e *Environment) CreateCluster(ctx context.Context, name string, replicas []sql.ReplicaSpec) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	var crs []catalog.Replica
	for _, spec := range replicas {
		p, w, err := parseSize(spec)
		if err != nil {
			return err
		}
		crs = append(crs, catalog.Replica{Cluster: name, Name: spec.Name, Processes: p, Workers: w})
	}
	err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		cls, err := tx.Clusters()
		if err != nil {
			return err
		}
		for _, c := range cls {
			if c.Name == name {
				return sqlerr.Errorf(sqlerr.DuplicateObject, "cluster %q already exists", name)
			}
		}
		if err := tx.PutCluster(catalog.Cluster{Name: name}); err != nil {
			return err
		}
		for _, r := range crs {
			if err := tx.PutReplica(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := e.cfg.Compute.CreateCluster(name); err != nil {
		return err
	}
	if err := e.enableIntrospection(name); err != nil {
		return err
	}
	for _, r := range crs {
		if err := e.cfg.Compute.CreateReplica(ctx, e.replicaConfig(r)); err != nil {
			return err
		}
	}
	return nil
}

// DropCluster implements sql.Clusters.
func (e *Environment) DropCluster(ctx context.Context, name string) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	if err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		if err := tx.DropCluster(name); err != nil {
			return err
		}
		return dropIntrospection(tx, name)
	}); err != nil {
		if errors.Is(err, catalog.ErrNotFound) {
			return sqlerr.Errorf(sqlerr.UndefinedObject, "unknown cluster %q", name)
		}
		return err
	}
	return e.cfg.Compute.DropCluster(ctx, name)
}

// CreateReplica implements sql.Clusters.
func (e *Environment) CreateReplica(ctx context.Context, cluster string, spec sql.ReplicaSpec) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	p, w, err := parseSize(spec)
	if err != nil {
		return err
	}
	r := catalog.Replica{Cluster: cluster, Name: spec.Name, Processes: p, Workers: w}
	err = e.cfg.Catalog.Update(func(tx *catalog.Tx) error {
		existing, err := tx.Replicas(cluster)
		if err != nil {
			return err
		}
		for _, x := range existing {
			if x.Name == spec.Name {
				return sqlerr.Errorf(sqlerr.DuplicateObject, "replica %q of cluster %q already exists", spec.Name, cluster)
			}
		}
		return tx.PutReplica(r)
	})
	if err != nil {
		if errors.Is(err, catalog.ErrNotFound) {
			return sqlerr.Errorf(sqlerr.UndefinedObject, "unknown cluster %q", cluster)
		}
		return err
	}
	return e.cfg.Compute.CreateReplica(ctx, e.replicaConfig(r))
}

// DropReplica implements sql.Clusters.
func (e *Environment) DropReplica(ctx context.Context, cluster, name string) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	if err := e.cfg.Catalog.Update(func(tx *catalog.Tx) error { return tx.DropReplica(cluster, name) }); err != nil {
		if errors.Is(err, catalog.ErrNotFound) {
			return sqlerr.Errorf(sqlerr.UndefinedObject, "unknown replica %q of cluster %q", name, cluster)
		}
		return err
	}
	return e.cfg.Compute.DropReplica(ctx, cluster, name)
}
