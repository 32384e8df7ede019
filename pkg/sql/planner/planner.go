package planner

import (
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/compute/plan"
	"github.com/tandemdb/tandem/pkg/compute/row"
)

// SessionInfo is what expressions such as current_user() read.
type SessionInfo struct {
	User string
	// SessionUser is the role that logged in (session_user), which SET
	// ROLE does not change; empty reads as User.
	SessionUser   string
	Database      string
	ServerVersion string
	// TimeZone is the session's TimeZone setting (empty: UTC): the zone
	// timestamptz literals, casts and fields are read in.
	TimeZone string
	// Now is the statement's timestamp in micros since the epoch, what
	// now() and current_timestamp return; zero when the statement may
	// not read the clock (see Planner.Maintained).
	Now int64
	// RoleNames names role oids for pg_get_userbyid; an oid it does not
	// name reads as User.
	RoleNames map[int64]string
}

// sessionUser is session_user's value.
func (s SessionInfo) sessionUser() string {
	if s.SessionUser == "" {
		return s.User
	}
	return s.SessionUser
}

// Planner plans one statement. It is not safe for concurrent use; make
// one per statement.
type Planner struct {
	Catalog Catalog
	Session SessionInfo
	// ParamTypes are the types of $1..$n: given by the client or inferred
	// while planning (TypeInvalid entries are inferred).
	ParamTypes []row.Type
	// ParamValues, when not nil, are the bound values of the parameters;
	// planning then substitutes them as literals.
	ParamValues []row.Datum
	// Cluster is where the query would run; only indexes on it can answer
	// it on the fast path.
	Cluster string
	// ReadIndexedViews reads a view that has an index on Cluster from that
	// index instead of inlining its query. Reads set it; definitions of
	// new items (indexes, materialized views) do not, so that they depend
	// only on the views themselves, not on indexes that may be dropped.
	ReadIndexedViews bool
	// Maintained says the plan defines a dataflow that is maintained as
	// time passes (a view, index, materialized view or SUBSCRIBE): now()
	// is refused there, since its value would be fixed at creation.
	Maintained bool
	// RecursionLimit is how many rounds a WITH RECURSIVE query may
	// iterate before failing with 54000 (0: DefaultRecursionLimit).
	RecursionLimit int64
	// OnViewPlan, when set, is called with a view's name each time the
	// planner plans the view's definition (inlining it, or learning its
	// column types): tests count it.
	OnViewPlan func(view string)

	// valuesHint types the columns of a VALUES list an INSERT inserts, so
	// that untyped literals take the target columns' types.
	valuesHint []row.Type
	// targetHint does the same for a single VALUES row with
	// set-returning calls, planned as a select list (insertsrf.go).
	targetHint targetHint
	// relations are the catalog relations the query reads, by id.
	relations map[plan.GlobalID]Relation
	// outerJoins are the outer joins planned, by their Union
	// (outerpush.go).
	outerJoins map[*plan.Union]*outerJoin
	// ctes are the WITH lists in scope, outermost first. A view's
	// definition is planned with none: its names mean catalog items.
	ctes []cteFrame
	// outers are the scopes of the queries enclosing the subquery being
	// planned, innermost last: a subquery may be correlated with the
	// innermost one only.
	outers []*scope
	// frame, when set, is the outer values the next query level planned
	// is correlated with (apply.go); planSelect takes it.
	frame *corrFrame
	// onFrame, when set, is a frame the next JOIN planned pairs its
	// left side with, so that its ON condition sees the outer columns
	// (apply.go).
	onFrame *corrFrame
	// unresolved is the last column reference that did not resolve
	// (table, column): apply.go tells a name of an outer query from a
	// misspelt one by it.
	unresolved [2]string
	// keepOrder asks the next planSubquery to keep its ORDER BY columns
	// after its output columns, and keptOrder is their order (nil: the
	// query had no ORDER BY): ARRAY(subquery) builds its array in it.
	keepOrder bool
	keptOrder []plan.ColumnOrder
	// locals counts the local ids given to WITH RECURSIVE bindings.
	locals uint64
	// rows holds the row comparisons expanded so far (rowcompare.go).
	rows rowForms
	// outerAggs are the aggregate calls moved out of subqueries so far,
	// by the name that replaced them (outeragg.go).
	outerAggs map[string]*pg.Node
}

// Referenced returns the ids of every catalog relation the planned
// statements resolved, views included (a plan's Gets do not show the
// views it inlined): what a new item depends on for DROP.
func (p *Planner) Referenced() []plan.GlobalID {
	out := make([]plan.GlobalID, 0, len(p.relations))
	for id := range p.relations {
		out = append(out, id)
	}
	slices.SortFunc(out, plan.GlobalID.Compare)
	return out
}
