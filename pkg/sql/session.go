package sql

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Engine executes SQL statements for many sessions against one Backend.
// It is safe for concurrent use.
type Engine struct {
	backend Backend
	// MaxCopyBytes bounds the encoded rows one COPY FROM holds before its
	// atomic write (DefaultMaxCopyBytes when zero). Set before use.
	MaxCopyBytes int
	// writeMu serialises statements that read a table and then write it
	// (UPDATE, DELETE) and DDL that checks the catalog then changes it, so
	// that two sessions cannot interleave between the check and the change.
	// Statements wait for it with their context (writeLock.LockContext).
	writeMu writeLock
	// versions counts each table's writes, against which transactions
	// validate their reads at COMMIT (tx_conflict.go).
	versions tableVersions
	// clock is what now() reads (nil: time.Now); see SetClock.
	clock func() time.Time
	// defs caches what catalog items' definitions parse to.
	defs definitions
	// snaps keeps the catalog snapshot of the latest generation.
	snaps snapshotCache
	// onViewPlan, when set (by tests), is called each time a statement
	// plans a view's definition (planner.Planner.OnViewPlan).
	onViewPlan func(view string)
}

// NewEngine returns an engine over b.
func NewEngine(b Backend) *Engine { return &Engine{backend: b} }

// Column is one column of a statement's result.
type Column struct {
	Name string
	Type row.ColumnType
	// Width and Mod are the column's SQL integer width and type modifier
	// (zero: none), which choose its type OID and typmod and format its
	// values (planner.PGType, TypeMod.AppendText).
	Width planner.IntWidth
	Mod   planner.TypeMod
}

// Result is the outcome of one statement.
type Result struct {
	// Tag is the command tag ("SELECT 3", "INSERT 0 2", "CREATE TABLE").
	Tag string
	// Columns is nil for statements that return no rows.
	Columns []Column
	Rows    [][]row.Datum
	// Iter, when set instead of Rows (a large SELECT result without ORDER
	// BY, on a session with EnableRowStreaming), yields the rows one at a
	// time as the backend reads them; Tag is then "SELECT" and the caller
	// appends the count once Iter is drained. The caller must Close it.
	Iter RowIter
	// Copy, when set, streams rows to the client with COPY TO STDOUT
	// (SUBSCRIBE). The caller must Close it.
	Copy RowStream
	// CopyIn, when set, receives the client's data of a COPY FROM STDIN;
	// the caller ends it with Done or Abort.
	CopyIn CopyIn
	// ParameterChanges are session variables whose new value must be
	// reported to the client (ParameterStatus), by wire name.
	ParameterChanges map[string]string
	// Notices are sent to the client before the result (NoticeResponse).
	Notices []Notice
	// memLimit is max_query_memory for Materialize (0: no limit).
	memLimit uint64
}

// RowStream is an unbounded stream of rows, such as a SUBSCRIBE's.
type RowStream interface {
	// Next blocks until at least one row is available, the stream ends
	// (io.EOF) or ctx is done.
	Next(ctx context.Context) ([][]row.Datum, error)
	Close()
}

// Prepared is a statement checked and described without executing it.
type Prepared struct {
	Statement  parse.Statement
	ParamTypes []row.Type
	// Columns is nil for statements that return no rows.
	Columns []Column
}

// Session is one client's connection state: variables, open cursors,
// transaction status. It is not safe for concurrent use.
type Session struct {
	engine *Engine
	// user is the current role, whose privileges are checked and who owns
	// what the session creates; sessionUser is who logged in (SET ROLE
	// changes user, RESET ROLE restores it).
	user        string
	sessionUser string
	// sessionRole records that sessionUser was seen as a catalog role:
	// if it is dropped, the session is refused rather than trusted
	// (membership.go, checkSetRole).
	sessionRole bool
	vars        *Vars
	cursors     map[string]*cursor
	tx          txState
	// streamRows lets a SELECT return Result.Iter (EnableRowStreaming).
	streamRows bool
	// writeLocked: this session holds engine.writeMu (lockWrites).
	writeLocked bool
}

// NewSession starts a session for user.
func (e *Engine) NewSession(user string) *Session {
	return &Session{engine: e, user: user, sessionUser: user, vars: newVars(), cursors: map[string]*cursor{}}
}

// Vars returns the session's variables.
func (s *Session) Vars() *Vars { return s.vars }

// User returns the session's user name.
func (s *Session) User() string { return s.user }

// InTransaction reports whether an explicit transaction block is open.
func (s *Session) InTransaction() bool { return s.tx.explicit }

// Close ends the session: it rolls back an open transaction block
// (releasing the write lock it may hold) and releases the cursors.
func (s *Session) Close() {
	s.tx.explicit, s.tx.failed = false, false
	s.endBlock()
	s.closeCursors()
}

func (s *Session) closeCursors() {
	for name, c := range s.cursors {
		c.close()
		delete(s.cursors, name)
	}
}

// ExecuteSQL parses text and executes each statement in turn, stopping at
// the first error. It returns the results of the statements that ran.
func (s *Session) ExecuteSQL(ctx context.Context, text string) ([]*Result, error) {
	sts, err := parse.Parse(text)
	if err != nil {
		return nil, err
	}
	var out []*Result
	s.BeginImplicit(len(sts))
	for _, st := range sts {
		r, err := s.Execute(ctx, st, nil)
		if err != nil {
			_ = s.EndImplicit(ctx, true)
			return out, err
		}
		out = append(out, r)
	}
	return out, s.EndImplicit(ctx, false)
}

// errStatementTimeout is the cause of a statement context cancelled by
// statement_timeout.
var errStatementTimeout = errors.New("statement timeout")

// statementTimeout returns the session's statement_timeout; the value was
// validated when it was set.
func (s *Session) statementTimeout() time.Duration {
	v, err := s.vars.Get(VarStatementTimeout)
	if err != nil {
		return 0
	}
	d, _ := parseDurationMS(v)
	return d
}

// Execute runs one statement with bound parameter values.
// Inside a transaction it follows the rules in tx.go; an error inside an
// explicit block aborts the block.
//
// statement_timeout bounds Execute: planning, waiting for a read timestamp,
// and the peek or one-shot dataflow that answers a read. A result already
// returned (rows streamed from a spilled result, a SUBSCRIBE's updates) is
// not bounded by it.
//
// A panic while the statement runs ends the statement, not the process:
// Execute returns it as a *sqlerr.PanicError (XX000, with the stack for
// the caller's log) and an explicit block is aborted as by any error.
func (s *Session) Execute(ctx context.Context, st parse.Statement, params []row.Datum) (res *Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, sqlerr.Recovered(v)
			s.failTransaction()
		}
	}()
	if d := s.statementTimeout(); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, errStatementTimeout)
		defer cancel()
	}
	r, err := s.executeInTx(ctx, st, params)
	if err != nil && errors.Is(context.Cause(ctx), errStatementTimeout) {
		err = sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to statement timeout")
	}
	if err != nil {
		s.failTransaction()
		return nil, sqlerr.Convert(err)
	}
	return r, nil
}

// failTransaction aborts an explicit transaction block after an error.
func (s *Session) failTransaction() {
	if s.tx.explicit {
		s.tx.failed = true
		s.endBlock()
	}
}

func (s *Session) executeInTx(ctx context.Context, st parse.Statement, params []row.Datum) (*Result, error) {
	if err := s.checkTransaction(ctx, st); err != nil {
		return nil, err
	}
	if params == nil {
		// Executing with no values bound (the simple protocol): $n is an
		// error, whereas nil values mean "preparing" to the planner.
		params = []row.Datum{}
	}
	return s.execute(ctx, st, params)
}

// Prepare plans st without running it, inferring parameter types that
// paramTypes leaves as row.TypeInvalid, and describes its result.
// A panic while planning is returned as a *sqlerr.PanicError.
func (s *Session) Prepare(ctx context.Context, st parse.Statement, paramTypes []row.Type) (out *Prepared, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, sqlerr.Recovered(v)
		}
	}()
	p, err := s.prepare(ctx, st, paramTypes)
	if err != nil {
		return nil, sqlerr.Convert(err)
	}
	return p, nil
}

func tagf(format string, args ...any) *Result { return &Result{Tag: fmt.Sprintf(format, args...)} }

// SystemParameter returns a system parameter's current value from the
// backend, for the layers around the engine (pgwire reads
// max_connections at each connection's startup).
func (e *Engine) SystemParameter(ctx context.Context, name string) (string, error) {
	return e.backend.SystemParameter(ctx, name)
}

// ParamMaxQueryMemory is the system parameter bounding the bytes of rows
// one statement holds in the controller's memory: an ORDER BY keeps at
// most that much in memory and sorts the rest on disk; results that must
// be held whole (cursors, INSERT ... SELECT, portals fetched in parts)
// fail with 53200 beyond it. 0 means no limit.
const ParamMaxQueryMemory = "max_query_memory"

// DefaultMaxQueryMemory is max_query_memory's default: 256 MiB.
const DefaultMaxQueryMemory = 256 << 20

// Role returns user's role in the catalog; known is false when the catalog
// has none (the front door authenticates such a user only by a configured
// password, or trusts it).
func (e *Engine) Role(ctx context.Context, user string) (r Role, known bool, err error) {
	roles, err := e.backend.Roles(ctx)
	if err != nil {
		return Role{}, false, err
	}
	for _, r := range roles {
		if r.Name == user {
			return r, true, nil
		}
	}
	return Role{}, false, nil
}
