package pgwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/tandemdb/tandem/pkg/compute/expr"
	"github.com/tandemdb/tandem/pkg/compute/row"
	"github.com/tandemdb/tandem/pkg/readtrace"
	"github.com/tandemdb/tandem/pkg/sql"
	"github.com/tandemdb/tandem/pkg/sql/parse"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// prepared is a statement of the extended protocol.
type prepared struct {
	p *sql.Prepared
	// oids are the parameter types as the client sees them: what it sent
	// in Parse where it sent one, else what was inferred.
	oids []uint32
}

// portal is a bound statement, possibly partly executed.
type portal struct {
	stmt    *prepared
	params  []row.Datum
	formats []int16 // result formats as sent in Bind
	result  *sql.Result
	sent    int // rows of result already sent
}

// conn is one client connection.
type conn struct {
	server  *Server
	nc      net.Conn
	in      *clientReader // the Backend's input, read ahead once running
	be      *pgproto3.Backend
	session *sql.Session
	pid     uint32
	secret  []byte

	stmts   map[string]*prepared
	portals map[string]*portal
	// parses serves the simple protocol's parsing: a point read sent
	// again with another key is not parsed again (parse.Cache).
	parses *parse.Cache
	// skipToSync is set after an error in the extended protocol: messages
	// are discarded until Sync, as Postgres does.
	skipToSync bool

	mu      sync.Mutex
	running context.CancelFunc

	// received is when the message being served arrived (or the previous
	// statement of a simple query ended): the start of a read's pgwire
	// stage.
	received time.Time
}

// cancelRunning cancels the statement being executed, if any.
func (c *conn) cancelRunning() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running != nil {
		c.running()
	}
}

// statementContext returns the context one statement runs under, which
// a CancelRequest cancels.
func (c *conn) statementContext(ctx context.Context) (context.Context, func()) {
	sctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.running = cancel
	c.mu.Unlock()
	return sctx, func() {
		c.mu.Lock()
		c.running = nil
		c.mu.Unlock()
		cancel()
	}
}

func (c *conn) txStatus() byte {
	if c.session.TransactionFailed() {
		return 'E'
	}
	if c.session.InTransaction() {
		return 'T'
	}
	return 'I'
}

// safely runs f, turning a panic into a *sqlerr.PanicError: a bug hit by
// one statement ends that statement (XX000), not the server.
func safely(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = sqlerr.Recovered(v)
		}
	}()
	return f()
}

// sendError reports err to the client as an ErrorResponse; a recovered
// panic is also logged with its stack.
func (c *conn) sendError(err error) {
	var pe *sqlerr.PanicError
	if errors.As(err, &pe) {
		c.server.log.Error("Statement panicked; the statement failed and the connection goes on",
			"pid", c.pid, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
	}
	if errors.Is(err, context.Canceled) {
		err = sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	}
	e := sqlerr.Convert(err)
	c.be.Send(&pgproto3.ErrorResponse{Severity: "ERROR", SeverityUnlocalized: "ERROR", Code: e.Code,
		Message: e.Message, Detail: e.Detail, Hint: e.Hint, Where: e.Where, Position: int32(e.Position)})
}

// run processes messages until the client terminates.
func (c *conn) run(ctx context.Context) error {
	for {
		msg, err := c.be.Receive()
		c.received = time.Now()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("receive: %w", err)
		}
		if c.skipToSync {
			if _, ok := msg.(*pgproto3.Sync); !ok {
				continue
			}
		}
		switch m := msg.(type) {
		case *pgproto3.Query:
			c.simpleQuery(ctx, m.String)
			c.be.Send(&pgproto3.ReadyForQuery{TxStatus: c.txStatus()})
		case *pgproto3.Parse:
			c.extended(safely(func() error { return c.parse(ctx, m) }))
		case *pgproto3.Bind:
			c.extended(safely(func() error { return c.bind(m) }))
		case *pgproto3.Describe:
			c.extended(safely(func() error { return c.describe(m) }))
		case *pgproto3.Execute:
			c.extended(safely(func() error { return c.execute(ctx, m) }))
		case *pgproto3.Close:
			if m.ObjectType == 'S' {
				delete(c.stmts, m.Name)
			} else {
				delete(c.portals, m.Name)
			}
			c.be.Send(&pgproto3.CloseComplete{})
		case *pgproto3.Sync:
			c.skipToSync = false
			// Unnamed portals do not outlive the implicit transaction.
			delete(c.portals, "")
			c.be.Send(&pgproto3.ReadyForQuery{TxStatus: c.txStatus()})
		case *pgproto3.Flush:
		case *pgproto3.Terminate:
			return c.be.Flush()
		case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
			// Only COPY TO is served; stray COPY FROM data is ignored.
		default:
			c.sendError(sqlerr.Errorf(sqlerr.ProtocolViolation, "unsupported message %T", msg))
		}
		if err := c.be.Flush(); err != nil {
			return fmt.Errorf("flush: %w", err)
		}
	}
}

// extended handles the outcome of an extended-protocol message.
func (c *conn) extended(err error) {
	if err != nil {
		c.sendError(err)
		c.skipToSync = true
	}
}

func (c *conn) simpleQuery(ctx context.Context, text string) {
	var sts []parse.Statement
	err := safely(func() (err error) {
		sts, err = c.parses.Parse(text)
		return err
	})
	if err != nil {
		c.sendError(err)
		return
	}
	if len(sts) == 0 {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return
	}
	// Several statements are one implicit transaction (sql.Session).
	c.session.BeginImplicit(len(sts))
	for _, st := range sts {
		if err := c.runStatement(ctx, st, nil, nil, -1, nil); err != nil {
			_ = c.session.EndImplicit(ctx, true)
			c.sendError(err)
			return
		}
	}
	if err := c.session.EndImplicit(ctx, false); err != nil {
		c.sendError(err)
	}
}

// runStatement executes st and sends its results. A nil portal means the
// simple protocol (RowDescription first, text format). A panic while
// executing or sending the results fails the statement (XX000).
func (c *conn) runStatement(ctx context.Context, st parse.Statement, params []row.Datum, formats []int16, maxRows int, pt *portal) error {
	return safely(func() error { return c.runStatementUnsafe(ctx, st, params, formats, maxRows, pt) })
}

func (c *conn) runStatementUnsafe(ctx context.Context, st parse.Statement, params []row.Datum, formats []int16, maxRows int, pt *portal) error {
	tr := readtrace.New()
	tr.Add(readtrace.PgWire, time.Since(c.received))
	defer c.recordRead(tr)
	var res *sql.Result
	if pt != nil && pt.result != nil {
		res = pt.result
	} else {
		sctx, done := c.statementContext(readtrace.With(ctx, tr))
		r, err := c.session.Execute(sctx, st, params)
		done()
		if err != nil {
			return err
		}
		res = r
		if pt != nil {
			if err := sameResultType(pt.stmt.p.Columns, res); err != nil {
				return err
			}
			pt.result = r
		}
	}
	for k, v := range res.ParameterChanges {
		c.be.Send(&pgproto3.ParameterStatus{Name: k, Value: v})
	}
	sendNotices(c.be, res.Notices)
	if res.Copy != nil {
		return c.copyOut(ctx, res)
	}
	if res.CopyIn != nil {
		return c.copyIn(ctx, res.CopyIn)
	}
	if res.Iter != nil && pt != nil && maxRows > 0 {
		// A portal fetched in parts keeps its position in Rows.
		if err := res.Materialize(); err != nil {
			return err
		}
	}
	if res.Columns != nil && pt == nil {
		c.be.Send(rowDescription(res.Columns, nil))
	}
	if res.Iter != nil {
		return c.streamRows(res, formats)
	}
	start := 0
	if pt != nil {
		start = pt.sent
	}
	end := len(res.Rows)
	if maxRows > 0 && start+maxRows < end {
		end = start + maxRows
	}
	for _, r := range res.Rows[start:end] {
		dr, err := dataRow(res.Columns, r, formats, c.location())
		if err != nil {
			return err
		}
		c.be.Send(dr)
	}
	if pt != nil {
		pt.sent = end
		if end < len(res.Rows) {
			c.be.Send(&pgproto3.PortalSuspended{})
			return nil
		}
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(res.Tag)})
	return nil
}

// recordRead ends a statement's trace: for a read (one that reached a
// replica), the response stage runs from the replica's answer to now, when
// the last row went to the connection, and the trace is recorded. The
// next statement's pgwire stage starts now.
func (c *conn) recordRead(tr *readtrace.Trace) {
	now := time.Now()
	c.received = now
	if !tr.IsRead() {
		return
	}
	if at, ok := tr.Answered(); ok {
		tr.Add(readtrace.Response, now.Sub(at))
	}
	if rs := c.server.cfg.ReadStages; rs != nil {
		rs.Record(tr)
	}
}

// sameResultType checks that a prepared statement executed now returns
// the columns it was described with: the client decodes the rows with
// that description, and a DDL change since Parse (a table dropped and
// created with other columns) can change them. PostgreSQL refuses such
// an execution the same way. On a mismatch the result is closed.
func sameResultType(described []sql.Column, res *sql.Result) error {
	if described == nil || res.Columns == nil || res.Copy != nil {
		return nil
	}
	same := len(described) == len(res.Columns)
	for i := 0; same && i < len(described); i++ {
		same = described[i].Type.Type == res.Columns[i].Type.Type
	}
	if same {
		return nil
	}
	if res.Iter != nil {
		res.Iter.Close()
	}
	return sqlerr.New(sqlerr.FeatureNotSupported, "cached plan must not change result type")
}

// streamFlushRows is how many DataRows streamRows buffers before flushing
// them to the client, bounding the connection's write buffer.
const streamFlushRows = 256

// streamRows sends a streamed result as DataRows while reading it, so the
// connection holds at most streamFlushRows rows of it, then completes the
// tag with the count. The result is left exhausted: a portal executed
// again returns no more rows.
func (c *conn) streamRows(res *sql.Result, formats []int16) error {
	it := res.Iter
	res.Iter = nil
	defer it.Close()
	n := 0
	for {
		r, ok, err := it.Next()
		if err != nil {
			res.Tag = fmt.Sprintf("%s %d", res.Tag, n)
			return err
		}
		if !ok {
			break
		}
		dr, err := dataRow(res.Columns, r, formats, c.location())
		if err != nil {
			return err
		}
		c.be.Send(dr)
		n++
		if n%streamFlushRows == 0 {
			if err := c.be.Flush(); err != nil {
				return fmt.Errorf("flush: %w", err)
			}
		}
	}
	res.Tag = fmt.Sprintf("%s %d", res.Tag, n)
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(res.Tag)})
	return nil
}

func rowDescription(cols []sql.Column, formats []int16) *pgproto3.RowDescription {
	rd := &pgproto3.RowDescription{Fields: make([]pgproto3.FieldDescription, len(cols))}
	for i, col := range cols {
		oid, size, typmod := columnType(col)
		rd.Fields[i] = pgproto3.FieldDescription{Name: []byte(col.Name), DataTypeOID: oid, DataTypeSize: size,
			TypeModifier: typmod, Format: formatOf(formats, i)}
	}
	return rd
}

// formatOf is the format of column i under Bind's result format codes:
// none means text, one applies to all, otherwise one per column.
func formatOf(formats []int16, i int) int16 {
	switch {
	case len(formats) == 0:
		return 0
	case len(formats) == 1:
		return formats[0]
	case i < len(formats):
		return formats[i]
	}
	return 0
}

func dataRow(cols []sql.Column, r []row.Datum, formats []int16, loc *time.Location) (*pgproto3.DataRow, error) {
	dr := &pgproto3.DataRow{Values: make([][]byte, len(r))}
	for i, d := range r {
		if d.IsNull() {
			continue
		}
		var col sql.Column
		if i < len(cols) {
			col = cols[i]
		}
		if formatOf(formats, i) == 1 {
			v, err := encodeBinary(nil, d, col)
			if err != nil {
				return nil, err
			}
			dr.Values[i] = v
		} else {
			dr.Values[i] = encodeText(make([]byte, 0, 16), d, col, loc)
		}
	}
	return dr, nil
}

// copyIn receives the data of a COPY FROM STDIN: CopyInResponse, then
// CopyData until CopyDone or CopyFail. After an error the rest of the
// data is read and discarded, as PostgreSQL does, so that the client's
// CopyDone is not taken for a new command.
func (c *conn) copyIn(ctx context.Context, ci sql.CopyIn) error {
	format := int16(0)
	if ci.Binary() {
		format = 1
		if bd, ok := ci.(binaryDecodable); ok {
			bd.SetBinaryDecoder(c.decodeCopyField)
		}
	}
	formats := make([]uint16, ci.Columns())
	for i := range formats {
		formats[i] = uint16(format)
	}
	c.be.Send(&pgproto3.CopyInResponse{OverallFormat: byte(format), ColumnFormatCodes: formats})
	if err := c.be.Flush(); err != nil {
		ci.Abort()
		return fmt.Errorf("flush: %w", err)
	}
	var failed error
	for {
		msg, err := c.be.Receive()
		if err != nil {
			ci.Abort()
			return fmt.Errorf("receive COPY data: %w", err)
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if failed == nil {
				failed = ci.Write(m.Data)
			}
			continue
		case *pgproto3.CopyDone:
		case *pgproto3.CopyFail:
			if failed == nil {
				failed = sqlerr.Errorf(sqlerr.QueryCanceled, "COPY from stdin failed: %s", m.Message)
			}
		case *pgproto3.Flush, *pgproto3.Sync:
			// Ignored during COPY, as PostgreSQL does.
			continue
		default:
			failed = sqlerr.Errorf(sqlerr.ProtocolViolation, "unexpected message type %T during COPY from stdin", msg)
		}
		break
	}
	if failed != nil {
		ci.Abort()
		return failed
	}
	sctx, done := c.statementContext(ctx)
	res, err := ci.Done(sctx)
	done()
	if err != nil {
		return err
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(res.Tag)})
	return nil
}

// copyOut streams a SUBSCRIBE with COPY TO STDOUT in text format until
// the client cancels, the stream fails or the connection closes.
func (c *conn) copyOut(ctx context.Context, res *sql.Result) error {
	defer res.Copy.Close()
	formats := make([]uint16, len(res.Columns))
	c.be.Send(&pgproto3.CopyOutResponse{OverallFormat: 0, ColumnFormatCodes: formats})
	if err := c.be.Flush(); err != nil {
		return err
	}
	sctx, done := c.statementContext(ctx)
	defer done()
	var buf []byte
	for {
		rows, err := res.Copy.Next(sctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.be.Send(&pgproto3.CopyDone{})
				c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(res.Tag)})
				return nil
			}
			return err
		}
		for _, r := range rows {
			buf = appendCopyRow(buf[:0], res.Columns, r, c.location())
			c.be.Send(&pgproto3.CopyData{Data: append([]byte(nil), buf...)})
		}
		if err := c.be.Flush(); err != nil {
			return err
		}
	}
}

// appendCopyRow renders one row in COPY text format: tab-separated, \N
// for NULL, backslash escapes for backslash, tab, newline and CR. Values
// are shown as values of cols (numeric scale, char(n) padding).
func appendCopyRow(dst []byte, cols []sql.Column, r []row.Datum, loc *time.Location) []byte {
	for i, d := range r {
		if i > 0 {
			dst = append(dst, '\t')
		}
		if d.IsNull() {
			dst = append(dst, `\N`...)
			continue
		}
		var col sql.Column
		if i < len(cols) {
			col = cols[i]
		}
		for _, b := range encodeText(nil, d, col, loc) {
			switch b {
			case '\\':
				dst = append(dst, `\\`...)
			case '\t':
				dst = append(dst, `\t`...)
			case '\n':
				dst = append(dst, `\n`...)
			case '\r':
				dst = append(dst, `\r`...)
			default:
				dst = append(dst, b)
			}
		}
	}
	return append(dst, '\n')
}

func (c *conn) parse(ctx context.Context, m *pgproto3.Parse) error {
	if m.Name != "" {
		if _, ok := c.stmts[m.Name]; ok {
			return sqlerr.Errorf("42P05", "prepared statement %q already exists", m.Name)
		}
	}
	st, err := parse.ParseOne(m.Query)
	if err != nil {
		return err
	}
	types := make([]row.Type, len(m.ParameterOIDs))
	for i, oid := range m.ParameterOIDs {
		if types[i], err = oidType(oid); err != nil {
			return err
		}
	}
	sctx, done := c.statementContext(ctx)
	p, err := c.session.Prepare(sctx, st, types)
	done()
	if err != nil {
		return err
	}
	ps := &prepared{p: p, oids: make([]uint32, len(p.ParamTypes))}
	for i, t := range p.ParamTypes {
		ps.oids[i], _ = typeOID(t)
		if i < len(m.ParameterOIDs) && m.ParameterOIDs[i] != 0 {
			ps.oids[i] = m.ParameterOIDs[i]
		}
	}
	c.stmts[m.Name] = ps
	c.be.Send(&pgproto3.ParseComplete{})
	return nil
}

func (c *conn) bind(m *pgproto3.Bind) error {
	ps, ok := c.stmts[m.PreparedStatement]
	if !ok {
		return sqlerr.Errorf("26000", "prepared statement %q does not exist", m.PreparedStatement)
	}
	if len(m.Parameters) != len(ps.oids) {
		return sqlerr.Errorf(sqlerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement %q requires %d",
			len(m.Parameters), m.PreparedStatement, len(ps.oids))
	}
	params := make([]row.Datum, len(m.Parameters))
	for i, v := range m.Parameters {
		format := formatOf(m.ParameterFormatCodes, i)
		d, err := decodeParam(v, format, ps.p.ParamTypes[i], ps.oids[i], c.location())
		if err != nil {
			return fmt.Errorf("parameter $%d: %w", i+1, err)
		}
		params[i] = d
	}
	c.portals[m.DestinationPortal] = &portal{stmt: ps, params: params, formats: m.ResultFormatCodes}
	c.be.Send(&pgproto3.BindComplete{})
	return nil
}

func isCopy(st parse.Statement) bool {
	_, ok := st.(*parse.Subscribe)
	return ok
}

func (c *conn) describe(m *pgproto3.Describe) error {
	switch m.ObjectType {
	case 'S':
		ps, ok := c.stmts[m.Name]
		if !ok {
			return sqlerr.Errorf("26000", "prepared statement %q does not exist", m.Name)
		}
		c.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: ps.oids})
		if ps.p.Columns == nil || isCopy(ps.p.Statement) {
			c.be.Send(&pgproto3.NoData{})
		} else {
			c.be.Send(rowDescription(ps.p.Columns, nil))
		}
	case 'P':
		pt, ok := c.portals[m.Name]
		if !ok {
			return sqlerr.Errorf("34000", "portal %q does not exist", m.Name)
		}
		if pt.stmt.p.Columns == nil || isCopy(pt.stmt.p.Statement) {
			c.be.Send(&pgproto3.NoData{})
		} else {
			c.be.Send(rowDescription(pt.stmt.p.Columns, pt.formats))
		}
	default:
		return sqlerr.Errorf(sqlerr.ProtocolViolation, "invalid Describe target %q", m.ObjectType)
	}
	return nil
}

func (c *conn) execute(ctx context.Context, m *pgproto3.Execute) error {
	pt, ok := c.portals[m.Portal]
	if !ok {
		return sqlerr.Errorf("34000", "portal %q does not exist", m.Portal)
	}
	err := c.runStatement(ctx, pt.stmt.p.Statement, pt.params, pt.formats, int(m.MaxRows), pt)
	if err == nil && pt.result != nil && pt.sent >= len(pt.result.Rows) && !strings.HasPrefix(pt.result.Tag, "FETCH") {
		// A completed portal answers a re-execution with no rows.
		pt.result = &sql.Result{Tag: pt.result.Tag, Columns: pt.result.Columns}
		pt.sent = 0
	}
	return err
}

// location is the session's TimeZone, in which timestamptz values are
// shown and read (UTC if the setting cannot be resolved, which SET
// prevents).
func (c *conn) location() *time.Location {
	name, err := c.session.Vars().Get(sql.VarTimeZone)
	if err != nil {
		return time.UTC
	}
	loc, err := expr.LoadZone(name)
	if err != nil {
		return time.UTC
	}
	return loc
}
