package sql

import (
	"context"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// setValue renders the value list of SET / ALTER SYSTEM SET as text.
func setValue(args []*pg.Node) (string, error) {
	var parts []string
	for _, a := range args {
		k := a.GetAConst()
		if k == nil {
			if tc := a.GetTypeCast(); tc != nil && tc.Arg.GetAConst() != nil {
				k = tc.Arg.GetAConst()
			} else {
				return "", sqlerr.New(sqlerr.SyntaxError, "SET value must be a literal")
			}
		}
		switch v := k.Val.(type) {
		case *pg.A_Const_Sval:
			parts = append(parts, v.Sval.Sval)
		case *pg.A_Const_Ival:
			parts = append(parts, strconv.Itoa(int(v.Ival.Ival)))
		case *pg.A_Const_Fval:
			parts = append(parts, v.Fval.Fval)
		case *pg.A_Const_Boolval:
			parts = append(parts, strconv.FormatBool(v.Boolval.Boolval))
		default:
			return "", sqlerr.New(sqlerr.SyntaxError, "SET value must be a literal")
		}
	}
	return strings.Join(parts, ", "), nil
}

func (s *Session) set(v *pg.VariableSetStmt) (*Result, error) {
	res := &Result{Tag: "SET"}
	report := func(name string, changed bool) {
		if changed {
			val, _ := s.vars.Get(name)
			res.ParameterChanges = map[string]string{WireName(name): val}
		}
	}
	switch v.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE:
		val, err := setValue(v.Args)
		if err != nil {
			return nil, err
		}
		changed, err := s.vars.Set(v.Name, val)
		if err != nil {
			return nil, err
		}
		report(strings.ToLower(v.Name), changed)
	case pg.VariableSetKind_VAR_SET_DEFAULT, pg.VariableSetKind_VAR_RESET:
		changed, err := s.vars.Reset(v.Name)
		if err != nil {
			return nil, err
		}
		report(strings.ToLower(v.Name), changed)
		if v.Kind == pg.VariableSetKind_VAR_RESET {
			res.Tag = "RESET"
		}
	case pg.VariableSetKind_VAR_RESET_ALL:
		s.vars = newVars()
		s.user = s.sessionUser
		res.Tag = "RESET"
	case pg.VariableSetKind_VAR_SET_MULTI:
		// SET TRANSACTION ISOLATION LEVEL x and friends.
		if !strings.HasPrefix(v.Name, "TRANSACTION") && !strings.HasPrefix(v.Name, "SESSION CHARACTERISTICS") {
			return nil, sqlerr.Unsupported("SET " + v.Name)
		}
		for _, a := range v.Args {
			de := a.GetDefElem()
			if de == nil {
				continue
			}
			switch de.Defname {
			case "transaction_isolation":
				val, err := setValue([]*pg.Node{de.Arg})
				if err != nil {
					return nil, err
				}
				if _, err := s.vars.Set(VarTransactionIsolation, val); err != nil {
					return nil, err
				}
			case "transaction_read_only":
			default:
				return nil, sqlerr.Unsupported("SET TRANSACTION " + de.Defname)
			}
		}
	default:
		return nil, sqlerr.Unsupported("this form of SET")
	}
	return res, nil
}

func (s *Session) showVariable(ctx context.Context, name string) (*Result, error) {
	name = strings.ToLower(name)
	if name == "all" {
		res := &Result{Columns: []Column{{Name: "name", Type: textCol}, {Name: "setting", Type: textCol}}}
		for _, kv := range s.vars.All() {
			res.Rows = append(res.Rows, []row.Datum{row.Text(kv[0]), row.Text(kv[1])})
		}
		for _, n := range s.engine.backend.SystemParameterNames(ctx) {
			if v, err := s.engine.backend.SystemParameter(ctx, n); err == nil {
				res.Rows = append(res.Rows, []row.Datum{row.Text(n), row.Text(v)})
			}
		}
		res.Tag = "SHOW"
		return res, nil
	}
	if name == "transaction isolation level" {
		name = VarTransactionIsolation
	}
	val, err := s.vars.Get(name)
	if err != nil {
		// Not a session variable: a system parameter?
		v, perr := s.engine.backend.SystemParameter(ctx, name)
		if perr != nil {
			if sqlerr.Code(perr) == sqlerr.UndefinedObject {
				return nil, err
			}
			return nil, perr
		}
		val = v
	}
	return &Result{Tag: "SHOW", Columns: []Column{{Name: name, Type: textCol}}, Rows: [][]row.Datum{{row.Text(val)}}}, nil
}

func (s *Session) alterSystem(ctx context.Context, a *pg.AlterSystemStmt) (*Result, error) {
	v := a.Setstmt
	if v == nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "malformed ALTER SYSTEM")
	}
	switch v.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE:
		val, err := setValue(v.Args)
		if err != nil {
			return nil, err
		}
		if err := s.engine.backend.SetSystemParameter(ctx, v.Name, val, false); err != nil {
			return nil, err
		}
	case pg.VariableSetKind_VAR_SET_DEFAULT, pg.VariableSetKind_VAR_RESET:
		if err := s.engine.backend.SetSystemParameter(ctx, v.Name, "", true); err != nil {
			return nil, err
		}
	default:
		return nil, sqlerr.Unsupported("ALTER SYSTEM RESET ALL")
	}
	return tagf("ALTER SYSTEM"), nil
}

func (s *Session) transaction(ctx context.Context, t *pg.TransactionStmt) (*Result, error) {
	switch t.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
		// A block buffers INSERTs and scopes cursors (tx.go). BEGIN inside
		// a block is a warning in PostgreSQL, not an error.
		if !s.tx.explicit {
			s.tx.now = 0
		}
		s.tx.explicit = true
		s.tx.implicit = false
		if t.Kind == pg.TransactionStmtKind_TRANS_STMT_START {
			return tagf("START TRANSACTION"), nil
		}
		return tagf("BEGIN"), nil
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT, pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		failed := s.tx.failed
		s.tx.explicit, s.tx.failed, s.tx.now = false, false, 0
		s.closeCursors()
		defer s.endBlock() // releases the write lock after the flush
		if t.Kind == pg.TransactionStmtKind_TRANS_STMT_ROLLBACK || failed {
			// COMMIT of an aborted block rolls it back, as in PostgreSQL.
			s.tx.pending = nil
			return tagf("ROLLBACK"), nil
		}
		if err := s.flushWrites(ctx); err != nil {
			return nil, err
		}
		return tagf("COMMIT"), nil
	}
	return nil, sqlerr.Unsupported("transaction statement " + strings.TrimPrefix(t.Kind.String(), "TRANS_STMT_"))
}

// replicaSpec reads the options of a replica.
func replicaSpec(name string, opts []parse.Option) (ReplicaSpec, error) {
	spec := ReplicaSpec{Name: name}
	for _, o := range opts {
		switch o.Name {
		case "SIZE":
			spec.Size = o.Value
		case "WORKERS", "PROCESSES":
			n, err := strconv.Atoi(o.Value)
			if err != nil || n < 1 || n > 1024 {
				return ReplicaSpec{}, sqlerr.Errorf(sqlerr.InvalidParameterValue, "%s must be a positive integer, got %q", o.Name, o.Value)
			}
			if o.Name == "WORKERS" {
				spec.Workers = n
			} else {
				spec.Processes = n
			}
		default:
			return ReplicaSpec{}, sqlerr.Errorf(sqlerr.InvalidParameterValue, "unknown replica option %s", o.Name)
		}
	}
	return spec, nil
}

func (s *Session) createCluster(ctx context.Context, st *parse.CreateCluster) (*Result, error) {
	var replicas []ReplicaSpec
	factor := 1
	base := ReplicaSpec{}
	for _, o := range st.Options {
		switch o.Name {
		case "REPLICATION FACTOR":
			n, err := strconv.Atoi(o.Value)
			if err != nil || n < 0 || n > 16 {
				return nil, sqlerr.Errorf(sqlerr.InvalidParameterValue, "REPLICATION FACTOR must be between 0 and 16, got %q", o.Value)
			}
			factor = n
		default:
			spec, err := replicaSpec("", []parse.Option{o})
			if err != nil {
				return nil, err
			}
			if spec.Size != "" {
				base.Size = spec.Size
			}
			if spec.Workers != 0 {
				base.Workers = spec.Workers
			}
			if spec.Processes != 0 {
				base.Processes = spec.Processes
			}
		}
	}
	if st.HasReplicas {
		if len(st.Options) > 0 {
			return nil, sqlerr.New(sqlerr.SyntaxError, "CREATE CLUSTER takes either options or REPLICAS, not both")
		}
		for _, rd := range st.Replicas {
			spec, err := replicaSpec(rd.Name, rd.Options)
			if err != nil {
				return nil, err
			}
			for _, r := range replicas {
				if r.Name == rd.Name {
					return nil, sqlerr.Errorf(sqlerr.DuplicateObject, "replica %q specified more than once", rd.Name)
				}
			}
			replicas = append(replicas, spec)
		}
	} else {
		for i := 0; i < factor; i++ {
			r := base
			r.Name = "r" + strconv.Itoa(i+1)
			replicas = append(replicas, r)
		}
	}
	clusters, err := s.engine.backend.Clusters(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range clusters {
		if c.Name == st.Name {
			return nil, sqlerr.Errorf(sqlerr.DuplicateObject, "cluster %q already exists", st.Name)
		}
	}
	if err := s.engine.backend.CreateCluster(ctx, st.Name, replicas); err != nil {
		return nil, err
	}
	return tagf("CREATE CLUSTER"), nil
}

func (s *Session) findCluster(ctx context.Context, name string) (*Cluster, error) {
	clusters, err := s.engine.backend.Clusters(ctx)
	if err != nil {
		return nil, err
	}
	for i := range clusters {
		if clusters[i].Name == name {
			return &clusters[i], nil
		}
	}
	return nil, nil
}

func (s *Session) createClusterReplica(ctx context.Context, st *parse.CreateClusterReplica) (*Result, error) {
	spec, err := replicaSpec(st.Replica, st.Options)
	if err != nil {
		return nil, err
	}
	c, err := s.findCluster(ctx, st.Cluster)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, sqlerr.Errorf(sqlerr.UndefinedObject, "unknown cluster %q", st.Cluster)
	}
	for _, r := range c.Replicas {
		if r.Name == st.Replica {
			return nil, sqlerr.Errorf(sqlerr.DuplicateObject, "cluster replica %q already exists", st.Cluster+"."+st.Replica)
		}
	}
	if err := s.engine.backend.CreateReplica(ctx, st.Cluster, spec); err != nil {
		return nil, err
	}
	return tagf("CREATE CLUSTER REPLICA"), nil
}

func (s *Session) dropClusterReplica(ctx context.Context, st *parse.DropClusterReplica) (*Result, error) {
	c, err := s.findCluster(ctx, st.Cluster)
	if err != nil {
		return nil, err
	}
	found := false
	if c != nil {
		for _, r := range c.Replicas {
			found = found || r.Name == st.Replica
		}
	}
	if !found {
		if st.IfExists {
			return tagf("DROP CLUSTER REPLICA"), nil
		}
		return nil, sqlerr.Errorf(sqlerr.UndefinedObject, "unknown cluster replica %q", st.Cluster+"."+st.Replica)
	}
	if err := s.engine.backend.DropReplica(ctx, st.Cluster, st.Replica); err != nil {
		return nil, err
	}
	return tagf("DROP CLUSTER REPLICA"), nil
}

func (s *Session) dropCluster(ctx context.Context, st *parse.DropCluster) (*Result, error) {
	unlock, err := s.lockWrites(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	c, err := s.findCluster(ctx, st.Name)
	if err != nil {
		return nil, err
	}
	if c == nil {
		if st.IfExists {
			return tagf("DROP CLUSTER"), nil
		}
		return nil, sqlerr.Errorf(sqlerr.UndefinedObject, "unknown cluster %q", st.Name)
	}
	sn, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	var roots []*Item
	for i := range sn.items {
		if it := &sn.items[i]; it.Cluster == st.Name && (it.Kind == KindIndex || it.Kind == KindMaterializedView) {
			roots = append(roots, it)
		}
	}
	if len(roots) > 0 {
		if !st.Cascade {
			return nil, sqlerr.Errorf(sqlerr.DependentObjectsStillExist, "cannot drop cluster %q: %s %q still depends on it (use CASCADE)", st.Name, kindName(roots[0].Kind), roots[0].Name)
		}
		if err := s.dropItems(ctx, sn, roots); err != nil {
			return nil, err
		}
	}
	if err := s.engine.backend.DropCluster(ctx, st.Name); err != nil {
		return nil, err
	}
	return tagf("DROP CLUSTER"), nil
}
