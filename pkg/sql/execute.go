package sql

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// planner returns a planner for one statement of this session.
func (s *Session) planner(sn *snapshot, paramTypes []row.Type, params []row.Datum) *planner.Planner {
	cluster, _ := s.vars.Get(VarCluster)
	zone, _ := s.vars.Get(VarTimeZone)
	p := &planner.Planner{
		Catalog: sn,
		Session: planner.SessionInfo{User: s.user, SessionUser: s.sessionUser, Database: Database, ServerVersion: ServerVersion,
			TimeZone: zone, Now: s.statementTime(), RoleNames: sn.roleNames()},
		ParamTypes:  append([]row.Type(nil), paramTypes...),
		ParamValues: params,
		Cluster:     cluster,
		OnViewPlan:  s.engine.onViewPlan,
	}
	limit, _ := s.vars.Get(VarMaxRecursionIterations)
	p.RecursionLimit, _ = strconv.ParseInt(limit, 10, 64) // checked by SET; 0 means the default
	return p
}

// readPlanner is the planner for reads: indexed views are read from their
// indexes.
func (s *Session) readPlanner(sn *snapshot, paramTypes []row.Type, params []row.Datum) *planner.Planner {
	p := s.planner(sn, paramTypes, params)
	p.ReadIndexedViews = true
	return p
}

// execute dispatches one statement.
func (s *Session) execute(ctx context.Context, st parse.Statement, params []row.Datum) (*Result, error) {
	if err := s.checkSuperuserOnly(ctx, st); err != nil {
		return nil, err
	}
	switch st := st.(type) {
	case *parse.Postgres:
		return s.executePostgres(ctx, st, params)
	case *parse.CreateSource:
		return s.createSource(ctx, st)
	case *parse.DropSource:
		return s.dropSources(ctx, st)
	case *parse.Subscribe:
		return s.subscribe(ctx, st)
	case *parse.DeclareSubscribe:
		return s.declareSubscribe(ctx, st)
	case *parse.Fetch:
		return s.fetchWithTimeout(ctx, st)
	case *parse.CreateCluster:
		return s.createCluster(ctx, st)
	case *parse.CreateClusterReplica:
		return s.createClusterReplica(ctx, st)
	case *parse.DropCluster:
		return s.dropCluster(ctx, st)
	case *parse.DropClusterReplica:
		return s.dropClusterReplica(ctx, st)
	case *parse.Show:
		return s.show(ctx, st)
	case *parse.CreateIndex:
		return s.createIndex(ctx, st)
	case *parse.CreateMaterializedView:
		return s.createMaterializedView(ctx, st)
	case *parse.GrantCluster:
		return s.grantCluster(ctx, st)
	}
	return nil, sqlerr.Unsupported(fmt.Sprintf("statement %T", st))
}

func (s *Session) executePostgres(ctx context.Context, st *parse.Postgres, params []row.Datum) (*Result, error) {
	switch n := st.Node.Node.(type) {
	case *pg.Node_SelectStmt:
		return s.selectStmt(ctx, n.SelectStmt, params)
	case *pg.Node_ExplainStmt:
		return s.explain(ctx, n.ExplainStmt, params)
	case *pg.Node_InsertStmt:
		return s.insert(ctx, n.InsertStmt, params)
	case *pg.Node_UpdateStmt:
		return s.update(ctx, n.UpdateStmt, params)
	case *pg.Node_DeleteStmt:
		return s.delete(ctx, n.DeleteStmt, params)
	case *pg.Node_CreateStmt:
		return s.createTable(ctx, n.CreateStmt, st.SQL)
	case *pg.Node_ViewStmt:
		return s.createView(ctx, n.ViewStmt, st.SQL)
	case *pg.Node_DropStmt:
		return s.drop(ctx, n.DropStmt)
	case *pg.Node_VariableSetStmt:
		if strings.EqualFold(n.VariableSetStmt.Name, "role") {
			return s.setRole(ctx, n.VariableSetStmt)
		}
		return s.set(n.VariableSetStmt)
	case *pg.Node_VariableShowStmt:
		return s.showVariable(ctx, n.VariableShowStmt.Name)
	case *pg.Node_AlterSystemStmt:
		return s.alterSystem(ctx, n.AlterSystemStmt)
	case *pg.Node_TransactionStmt:
		return s.transaction(ctx, n.TransactionStmt)
	case *pg.Node_DeclareCursorStmt:
		return s.declareCursor(ctx, n.DeclareCursorStmt, params)
	case *pg.Node_FetchStmt:
		return s.fetch(ctx, n.FetchStmt, nil)
	case *pg.Node_ClosePortalStmt:
		return s.closeCursor(n.ClosePortalStmt)
	case *pg.Node_DiscardStmt:
		s.closeCursors()
		s.vars = newVars()
		s.user = s.sessionUser
		return tagf("DISCARD ALL"), nil
	case *pg.Node_DeallocateStmt:
		return tagf("DEALLOCATE"), nil
	case *pg.Node_TruncateStmt:
		return s.truncate(ctx, n.TruncateStmt)
	case *pg.Node_AlterTableStmt:
		return s.alterTable(ctx, n.AlterTableStmt)
	case *pg.Node_RenameStmt:
		return s.rename(ctx, n.RenameStmt)
	case *pg.Node_VacuumStmt:
		return s.vacuum(ctx, n.VacuumStmt)
	case *pg.Node_CopyStmt:
		return s.copyFrom(ctx, n.CopyStmt)
	case *pg.Node_GrantStmt:
		return s.grant(ctx, n.GrantStmt)
	case *pg.Node_ReassignOwnedStmt:
		return s.reassignOwned(ctx, n.ReassignOwnedStmt)
	case *pg.Node_DropOwnedStmt:
		return s.dropOwned(ctx, n.DropOwnedStmt)
	case *pg.Node_GrantRoleStmt:
		return s.grantRole(ctx, n.GrantRoleStmt)
	case *pg.Node_CreateRoleStmt:
		return s.createRole(ctx, n.CreateRoleStmt)
	case *pg.Node_AlterRoleStmt:
		return s.alterRole(ctx, n.AlterRoleStmt)
	case *pg.Node_DropRoleStmt:
		return s.dropRole(ctx, n.DropRoleStmt)
	case *pg.Node_CreateTableAsStmt:
		return nil, sqlerr.Unsupported("CREATE TABLE AS")
	}
	name := fmt.Sprintf("%T", st.Node.Node)
	name = strings.TrimPrefix(strings.TrimPrefix(name, "*pg_query.Node_"), "*pg_query.")
	return nil, sqlerr.Unsupported("statement " + name)
}

// prepare plans st without executing it.
func (s *Session) prepare(ctx context.Context, st parse.Statement, paramTypes []row.Type) (*Prepared, error) {
	out := &Prepared{Statement: st, ParamTypes: paramTypes}
	p, ok := st.(*parse.Postgres)
	if !ok {
		cols, err := s.describeTandem(ctx, st)
		out.Columns = cols
		return out, err
	}
	sn, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	pl := s.planner(sn, paramTypes, nil)
	switch n := p.Node.Node.(type) {
	case *pg.Node_SelectStmt:
		q, err := pl.PlanQuery(n.SelectStmt)
		if err != nil {
			return nil, err
		}
		out.Columns = queryColumns(q)
	case *pg.Node_InsertStmt, *pg.Node_UpdateStmt, *pg.Node_DeleteStmt:
		cols, err := s.planWrite(ctx, sn, pl, p)
		if err != nil {
			return nil, err
		}
		out.Columns = cols
	case *pg.Node_VariableShowStmt:
		if strings.EqualFold(n.VariableShowStmt.Name, "all") {
			out.Columns = []Column{{Name: "name", Type: textCol}, {Name: "setting", Type: textCol}}
		} else {
			out.Columns = []Column{{Name: strings.ToLower(n.VariableShowStmt.Name), Type: textCol}}
		}
	case *pg.Node_DeclareCursorStmt, *pg.Node_ClosePortalStmt, *pg.Node_TransactionStmt:
		// No rows and nothing to check before execution.
	case *pg.Node_ExplainStmt:
		if sel := n.ExplainStmt.Query.GetSelectStmt(); sel != nil {
			// Planned only to infer the parameter types.
			if _, err := pl.PlanQuery(sel); err != nil {
				return nil, err
			}
		}
		out.Columns = []Column{{Name: "QUERY PLAN", Type: textCol}}
	case *pg.Node_FetchStmt:
		if c, ok := s.cursors[strings.ToLower(n.FetchStmt.Portalname)]; ok {
			out.Columns = c.columns
		}
	}
	// Parameters nothing typed are text, as Postgres' unknown resolves.
	out.ParamTypes = pl.ResolvedParamTypes()
	return out, nil
}

var textCol = row.ColumnType{Type: row.TypeText, Nullable: true}

func queryColumns(q *planner.Query) []Column {
	names, types := q.Columns()
	widths, mods := q.ColumnTypes()
	out := make([]Column, len(names))
	for i := range names {
		out[i] = Column{Name: names[i], Type: types[i], Width: widths[i], Mod: mods[i]}
	}
	return out
}
