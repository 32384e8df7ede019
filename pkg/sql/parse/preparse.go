package parse

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// cursor walks the tokens of one statement.
type cursor struct {
	sql  string
	toks []token
	i    int
}

func (c *cursor) peek() token {
	if c.i < len(c.toks) {
		return c.toks[c.i]
	}
	return token{kind: tokSymbol, text: "", start: len(c.sql), end: len(c.sql)}
}

func (c *cursor) peekAt(k int) token {
	if c.i+k < len(c.toks) {
		return c.toks[c.i+k]
	}
	return token{kind: tokSymbol, start: len(c.sql), end: len(c.sql)}
}

func (c *cursor) done() bool { return c.i >= len(c.toks) }

// accept consumes the keyword sequence kws if it is next.
func (c *cursor) accept(kws ...string) bool {
	for k, kw := range kws {
		if !c.peekAt(k).is(kw) {
			return false
		}
	}
	c.i += len(kws)
	return true
}

func (c *cursor) acceptSym(s string) bool {
	if c.peek().sym(s) {
		c.i++
		return true
	}
	return false
}

func (c *cursor) errHere(format string, args ...any) *sqlerr.Error {
	t := c.peek()
	near := "end of input"
	if !c.done() {
		near = fmt.Sprintf("%q", c.sql[t.start:t.end])
	}
	return syntaxErr(t.start, fmt.Sprintf(format, args...)+" at or near "+near)
}

func (c *cursor) expect(kws ...string) error {
	if !c.accept(kws...) {
		return c.errHere("expected %s", strings.ToUpper(strings.Join(kws, " ")))
	}
	return nil
}

func (c *cursor) expectSym(s string) error {
	if !c.acceptSym(s) {
		return c.errHere("expected %q", s)
	}
	return nil
}

// ident consumes one identifier (quoted or not).
func (c *cursor) ident() (string, error) {
	t := c.peek()
	if c.done() || (t.kind != tokIdent && t.kind != tokQIdent) {
		return "", c.errHere("expected identifier")
	}
	c.i++
	return t.text, nil
}

// objectName consumes ident[.ident[.ident]]; a three-part name's database
// part is dropped.
func (c *cursor) objectName() (ObjectName, error) {
	parts := []string{}
	for {
		id, err := c.ident()
		if err != nil {
			return ObjectName{}, err
		}
		parts = append(parts, id)
		if !c.acceptSym(".") {
			break
		}
	}
	switch len(parts) {
	case 1:
		return ObjectName{Name: parts[0]}, nil
	case 2:
		return ObjectName{Schema: parts[0], Name: parts[1]}, nil
	case 3:
		return ObjectName{Schema: parts[1], Name: parts[2]}, nil
	}
	return ObjectName{}, syntaxErr(c.peek().start, "improper qualified name (too many dotted names)")
}

// multiWordOptions are the option names of more than one word; other
// word sequences without "=" are a name and an identifier value.
func isMultiWordOption(name string) bool {
	switch name {
	case "TICK INTERVAL", "MAX CARDINALITY", "REPLICATION FACTOR", "UP TO", "AS OF", "SCALE FACTOR", "BATCH SIZE":
		return true
	}
	return false
}

// options parses "( NAME [=] value, ... )". The opening parenthesis must
// be next.
func (c *cursor) options() ([]Option, error) {
	if err := c.expectSym("("); err != nil {
		return nil, err
	}
	var opts []Option
	if c.acceptSym(")") {
		return opts, nil
	}
	for {
		var words []string
		for c.peek().kind == tokIdent || c.peek().kind == tokQIdent {
			// A value may follow a name without "=" (SIZE '1', WORKERS 2,
			// REPLICATION FACTOR 1): a name word is one followed by another
			// word or by "=", "," or ")", except that an identifier after
			// the name words is the value when no "=" is used.
			words = append(words, strings.ToUpper(c.peek().text))
			c.i++
			n := c.peek()
			if n.sym("=") || n.sym(",") || n.sym(")") || n.kind == tokString || n.kind == tokNumber {
				break
			}
		}
		if len(words) == 0 {
			return nil, c.errHere("expected option name")
		}
		opt := Option{Name: strings.Join(words, " ")}
		if len(words) > 1 && !isMultiWordOption(opt.Name) && (c.peek().sym(",") || c.peek().sym(")")) {
			// NAME identvalue without "=": the last word is the value.
			opt = Option{Name: strings.Join(words[:len(words)-1], " "), Kind: ValueIdent,
				Value: strings.ToLower(words[len(words)-1])}
		} else if c.acceptSym("=") || (!c.peek().sym(",") && !c.peek().sym(")")) {
			t := c.peek()
			switch {
			case c.done():
				return nil, c.errHere("expected option value")
			case t.kind == tokString:
				opt.Kind, opt.Value = ValueString, t.text
			case t.kind == tokNumber:
				opt.Kind, opt.Value = ValueNumber, t.text
			case t.kind == tokIdent || t.kind == tokQIdent:
				opt.Kind, opt.Value = ValueIdent, t.text
			case t.sym("-") && c.peekAt(1).kind == tokNumber:
				c.i++
				opt.Kind, opt.Value = ValueNumber, "-"+c.peek().text
			default:
				return nil, c.errHere("expected option value")
			}
			c.i++
		}
		opts = append(opts, opt)
		if c.acceptSym(")") {
			return opts, nil
		}
		if err := c.expectSym(","); err != nil {
			return nil, err
		}
	}
}

// rest returns the statement text from the current token on.
func (c *cursor) rest() string {
	if c.done() {
		return ""
	}
	return c.sql[c.peek().start:]
}

// preparse recognises Tandem's own statement forms. It returns (nil, nil)
// when the statement is not one of them and should go to the Postgres
// grammar.
func preparse(sql string) (Statement, error) {
	toks, err := lex(sql)
	if err != nil {
		// Let the Postgres grammar report lexical errors in its words.
		return nil, nil //nolint:nilerr // fall through to the real grammar
	}
	c := &cursor{sql: sql, toks: toks}
	switch {
	case c.accept("create", "source"):
		return c.createSource()
	case c.accept("create", "cluster", "replica"):
		return c.createClusterReplica()
	case c.accept("create", "cluster"):
		return c.createCluster()
	case c.peek().is("create") && (c.peekAt(1).is("index") ||
		(c.peekAt(1).is("default") || c.peekAt(1).is("unique")) && c.peekAt(2).is("index")):
		c.i++
		return c.createIndex()
	case c.peek().is("create") && (c.peekAt(1).is("materialized") ||
		c.peekAt(1).is("or") && c.peekAt(2).is("replace") && c.peekAt(3).is("materialized")):
		c.i++
		return c.createMaterializedView()
	case c.accept("drop", "cluster", "replica"):
		return c.dropClusterReplica()
	case c.accept("drop", "cluster"):
		return c.dropCluster()
	case c.accept("drop", "source"):
		return c.dropSource()
	case (c.peek().is("grant") || c.peek().is("revoke")) && c.onCluster():
		return c.grantCluster()
	case c.peek().is("subscribe"):
		c.i++
		return c.subscribe()
	case c.peek().is("copy") && c.peekAt(1).sym("(") && c.peekAt(2).is("subscribe"):
		return c.copySubscribe()
	case c.peek().is("declare"):
		return c.declare()
	case c.peek().is("fetch"):
		return c.fetchWithOptions()
	case c.peek().is("show"):
		c.i++
		return c.show()
	}
	return nil, nil
}

func (c *cursor) createSource() (Statement, error) {
	s := &CreateSource{SQL: c.sql}
	if c.accept("if", "not", "exists") {
		s.IfNotExists = true
	}
	var err error
	if s.Name, err = c.objectName(); err != nil {
		return nil, err
	}
	if c.accept("in", "cluster") {
		if s.Cluster, err = c.ident(); err != nil {
			return nil, err
		}
	}
	if err := c.expect("from"); err != nil {
		return nil, err
	}
	if !c.accept("load", "generator") {
		return nil, sqlerr.Unsupported("CREATE SOURCE from anything but a LOAD GENERATOR")
	}
	switch {
	case c.accept("counter"):
		s.Generator = "COUNTER"
	case c.accept("key", "value"):
		s.Generator = "KEY VALUE"
	case c.accept("auction"):
		s.Generator = "AUCTION"
	default:
		return nil, c.errHere("expected COUNTER, KEY VALUE or AUCTION")
	}
	if c.peek().sym("(") {
		if s.Options, err = c.options(); err != nil {
			return nil, err
		}
	}
	c.accept("for", "all", "tables")
	return s, c.end()
}

func (c *cursor) end() error {
	if !c.done() {
		return c.errHere("syntax error")
	}
	return nil
}

func (c *cursor) createCluster() (Statement, error) {
	s := &CreateCluster{SQL: c.sql}
	var err error
	if s.Name, err = c.ident(); err != nil {
		return nil, err
	}
	if c.accept("replicas") {
		// CREATE CLUSTER c REPLICAS (r1 (SIZE '1'), r2 (...)).
		if err := c.expectSym("("); err != nil {
			return nil, err
		}
		for !c.acceptSym(")") {
			r := ReplicaDef{}
			if r.Name, err = c.ident(); err != nil {
				return nil, err
			}
			if c.peek().sym("(") {
				if r.Options, err = c.options(); err != nil {
					return nil, err
				}
			}
			s.Replicas = append(s.Replicas, r)
			if !c.peek().sym(")") {
				if err := c.expectSym(","); err != nil {
					return nil, err
				}
			}
		}
		s.HasReplicas = true
		return s, c.end()
	}
	if c.peek().sym("(") {
		if s.Options, err = c.options(); err != nil {
			return nil, err
		}
	}
	return s, c.end()
}

// clusterReplicaName parses cluster.replica.
func (c *cursor) clusterReplicaName() (string, string, error) {
	cl, err := c.ident()
	if err != nil {
		return "", "", err
	}
	if err := c.expectSym("."); err != nil {
		return "", "", err
	}
	r, err := c.ident()
	return cl, r, err
}

func (c *cursor) createClusterReplica() (Statement, error) {
	s := &CreateClusterReplica{SQL: c.sql}
	var err error
	if s.Cluster, s.Replica, err = c.clusterReplicaName(); err != nil {
		return nil, err
	}
	if c.peek().sym("(") {
		if s.Options, err = c.options(); err != nil {
			return nil, err
		}
	}
	return s, c.end()
}

func (c *cursor) dropCluster() (Statement, error) {
	s := &DropCluster{SQL: c.sql}
	s.IfExists = c.accept("if", "exists")
	var err error
	if s.Name, err = c.ident(); err != nil {
		return nil, err
	}
	if c.accept("cascade") {
		s.Cascade = true
	} else {
		c.accept("restrict")
	}
	return s, c.end()
}

func (c *cursor) dropClusterReplica() (Statement, error) {
	s := &DropClusterReplica{SQL: c.sql}
	s.IfExists = c.accept("if", "exists")
	var err error
	if s.Cluster, s.Replica, err = c.clusterReplicaName(); err != nil {
		return nil, err
	}
	return s, c.end()
}

// createIndex parses after CREATE.
func (c *cursor) createIndex() (Statement, error) {
	s := &CreateIndex{SQL: c.sql}
	s.Unique = c.accept("unique")
	s.Default = !s.Unique && c.accept("default")
	if err := c.expect("index"); err != nil {
		return nil, err
	}
	s.IfNotExists = c.accept("if", "not", "exists")
	var err error
	if !c.peek().is("on") && !c.peek().is("in") {
		if s.Name, err = c.ident(); err != nil {
			return nil, err
		}
	}
	if c.accept("in", "cluster") {
		if s.Cluster, err = c.ident(); err != nil {
			return nil, err
		}
	}
	if err := c.expect("on"); err != nil {
		return nil, err
	}
	if s.On, err = c.objectName(); err != nil {
		return nil, err
	}
	if c.accept("using") {
		// Postgres' access method names (btree, hash) mean nothing here;
		// accept them so ordinary CREATE INDEX statements work.
		if _, err := c.ident(); err != nil {
			return nil, err
		}
	}
	if c.peek().sym("(") {
		if s.Default {
			return nil, c.errHere("a DEFAULT INDEX takes no key expressions")
		}
		open := c.peek()
		closeIdx, err := c.matchParen()
		if err != nil {
			return nil, err
		}
		inner := c.sql[open.end:c.toks[closeIdx].start]
		if s.Exprs, err = parseIndexKeys(inner, open.end); err != nil {
			return nil, err
		}
		c.i = closeIdx + 1
	} else if !s.Default {
		return nil, c.errHere("expected key expressions")
	}
	if c.accept("in", "cluster") {
		if s.Cluster, err = c.ident(); err != nil {
			return nil, err
		}
	}
	return s, c.end()
}

// matchParen returns the index of the token closing the "(" at c.i.
func (c *cursor) matchParen() (int, error) {
	depth := 0
	for k := c.i; k < len(c.toks); k++ {
		switch {
		case c.toks[k].sym("("):
			depth++
		case c.toks[k].sym(")"):
			depth--
			if depth == 0 {
				return k, nil
			}
		}
	}
	return 0, c.errHere("unbalanced parenthesis")
}

// createMaterializedView parses after CREATE.
func (c *cursor) createMaterializedView() (Statement, error) {
	s := &CreateMaterializedView{SQL: c.sql}
	if c.accept("or", "replace") {
		return nil, sqlerr.Unsupported("CREATE OR REPLACE MATERIALIZED VIEW")
	}
	if err := c.expect("materialized", "view"); err != nil {
		return nil, err
	}
	s.IfNotExists = c.accept("if", "not", "exists")
	var err error
	if s.Name, err = c.objectName(); err != nil {
		return nil, err
	}
	if c.acceptSym("(") {
		for {
			col, err := c.ident()
			if err != nil {
				return nil, err
			}
			s.Columns = append(s.Columns, col)
			if c.acceptSym(")") {
				break
			}
			if err := c.expectSym(","); err != nil {
				return nil, err
			}
		}
	}
	if c.accept("in", "cluster") {
		if s.Cluster, err = c.ident(); err != nil {
			return nil, err
		}
	}
	if err := c.expect("as"); err != nil {
		return nil, err
	}
	if c.done() {
		return nil, c.errHere("expected query")
	}
	start := c.peek().start
	if s.Query, err = parseSelect(c.rest(), start); err != nil {
		return nil, err
	}
	return s, nil
}

// subscribe parses after SUBSCRIBE.
func (c *cursor) subscribe() (*Subscribe, error) {
	s := &Subscribe{SQL: c.sql}
	c.accept("to")
	if c.peek().sym("(") {
		open := c.peek()
		closeIdx, err := c.matchParen()
		if err != nil {
			return nil, err
		}
		if s.Query, err = parseSelect(c.sql[open.end:c.toks[closeIdx].start], open.end); err != nil {
			return nil, err
		}
		c.i = closeIdx + 1
	} else {
		name, err := c.objectName()
		if err != nil {
			return nil, err
		}
		s.Object = &name
	}
	for !c.done() {
		switch {
		case c.accept("with"):
			opts, err := c.options()
			if err != nil {
				return nil, err
			}
			s.Options = append(s.Options, opts...)
		case c.accept("as", "of"):
			c.accept("at", "least")
			t := c.peek()
			if t.kind != tokNumber {
				return nil, c.errHere("expected a timestamp number after AS OF")
			}
			s.AsOf = t.text
			c.i++
		case c.accept("envelope"):
			return nil, sqlerr.Unsupported("SUBSCRIBE ... ENVELOPE")
		default:
			return nil, c.errHere("syntax error")
		}
	}
	return s, nil
}

// declare handles DECLARE c CURSOR ... FOR SUBSCRIBE; other cursors are
// Postgres statements.
func (c *cursor) declare() (Statement, error) {
	// Find "for" followed by "subscribe" before handing over.
	k := 0
	for ; k < len(c.toks); k++ {
		if c.toks[k].is("for") {
			break
		}
	}
	if k+1 >= len(c.toks) || !c.toks[k+1].is("subscribe") {
		return nil, nil
	}
	c.i = 1
	name, err := c.ident()
	if err != nil {
		return nil, err
	}
	if !c.accept("cursor") {
		return nil, c.errHere("expected CURSOR")
	}
	c.accept("without", "hold")
	if err := c.expect("for", "subscribe"); err != nil {
		return nil, err
	}
	subStart := c.toks[c.i-1].start
	sub, err := c.subscribe()
	if err != nil {
		return nil, err
	}
	sub.SQL = c.sql[subStart:]
	return &DeclareSubscribe{SQL: c.sql, Cursor: name, Subscribe: sub}, nil
}

// show parses after SHOW; SHOW of a variable is left to Postgres.
func (c *cursor) show() (Statement, error) {
	s := &Show{SQL: c.sql}
	switch {
	case c.accept("sources"):
		s.Kind = ShowSources
	case c.accept("tables"):
		s.Kind = ShowTables
	case c.accept("views"):
		s.Kind = ShowViews
	case c.accept("materialized", "views"):
		s.Kind = ShowMaterializedViews
	case c.accept("indexes"), c.accept("indices"):
		s.Kind = ShowIndexes
	case c.accept("clusters"):
		s.Kind = ShowClusters
	case c.accept("cluster", "replicas"):
		s.Kind = ShowClusterReplicas
	case c.accept("columns"):
		s.Kind = ShowColumns
	case c.accept("objects"):
		s.Kind = ShowObjects
	case c.accept("create"):
		s.Kind = ShowCreate
		if !c.accept("table") && !c.accept("view") && !c.accept("materialized", "view") &&
			!c.accept("index") && !c.accept("source") {
			return nil, c.errHere("expected TABLE, VIEW, MATERIALIZED VIEW, INDEX or SOURCE")
		}
		name, err := c.objectName()
		if err != nil {
			return nil, err
		}
		s.Object = &name
		return s, c.end()
	default:
		return nil, nil
	}
	if s.Kind == ShowColumns && !c.peek().is("from") && !c.peek().is("in") {
		return nil, c.errHere("expected FROM")
	}
	for !c.done() {
		switch {
		case s.Kind == ShowColumns && (c.accept("from") || c.accept("in")),
			s.Kind == ShowIndexes && (c.accept("on") || c.accept("from")):
			name, err := c.objectName()
			if err != nil {
				return nil, err
			}
			s.Object = &name
		case c.accept("in", "cluster"):
			id, err := c.ident()
			if err != nil {
				return nil, err
			}
			s.Cluster = id
		default:
			return nil, c.errHere("syntax error")
		}
	}
	return s, nil
}

// parseSelect parses text as one SELECT (or VALUES/set operation). offset
// is text's byte offset in the statement, for error positions.
func parseSelect(text string, offset int) (*pg.SelectStmt, error) {
	res, err := pg.Parse(text)
	if err != nil {
		return nil, convertPGError(err, offset)
	}
	if len(res.Stmts) != 1 {
		return nil, syntaxErr(offset, "expected exactly one query")
	}
	sel := res.Stmts[0].GetStmt().GetSelectStmt()
	if sel == nil {
		return nil, syntaxErr(offset, "expected a SELECT query")
	}
	return sel, nil
}

// parseIndexKeys parses an index's key list, each key an expression
// with optional ASC/DESC and NULLS FIRST/LAST, by parsing "SELECT 1 ORDER
// BY list" with the Postgres grammar. The directions are dropped (see
// CreateIndex).
func parseIndexKeys(text string, offset int) ([]*pg.Node, error) {
	const prefix = "SELECT 1 ORDER BY "
	res, err := pg.Parse(prefix + text)
	if err != nil {
		return nil, convertPGError(err, offset-len(prefix))
	}
	if len(res.Stmts) != 1 {
		return nil, syntaxErr(offset, "expected a list of index keys")
	}
	sel := res.Stmts[0].GetStmt().GetSelectStmt()
	if sel == nil || len(sel.SortClause) == 0 || sel.LimitCount != nil || sel.LimitOffset != nil || len(sel.LockingClause) > 0 {
		return nil, syntaxErr(offset, "expected a list of index keys")
	}
	out := make([]*pg.Node, 0, len(sel.SortClause))
	for _, n := range sel.SortClause {
		sb := n.GetSortBy()
		if sb == nil || sb.SortbyDir == pg.SortByDir_SORTBY_USING {
			return nil, syntaxErr(offset, "expected a list of index keys")
		}
		out = append(out, sb.Node)
	}
	return out, nil
}

func (c *cursor) dropSource() (Statement, error) {
	s := &DropSource{SQL: c.sql}
	s.IfExists = c.accept("if", "exists")
	for {
		name, err := c.objectName()
		if err != nil {
			return nil, err
		}
		s.Names = append(s.Names, name)
		if !c.acceptSym(",") {
			break
		}
	}
	if c.accept("cascade") {
		s.Cascade = true
	} else {
		c.accept("restrict")
	}
	return s, c.end()
}

// copySubscribe parses COPY (SUBSCRIBE ...) TO STDOUT [WITH (FORMAT
// TEXT)], which is how psql users stream a subscription.
func (c *cursor) copySubscribe() (Statement, error) {
	c.i = 1
	closeIdx, err := c.matchParen()
	if err != nil {
		return nil, err
	}
	open := c.toks[1]
	inner := c.sql[open.end:c.toks[closeIdx].start]
	st, err := ParseOne(inner)
	if err != nil {
		return nil, err
	}
	sub, ok := st.(*Subscribe)
	if !ok {
		return nil, c.errHere("expected SUBSCRIBE")
	}
	c.i = closeIdx + 1
	if err := c.expect("to", "stdout"); err != nil {
		return nil, err
	}
	if c.accept("with") || c.peek().sym("(") {
		opts, err := c.options()
		if err != nil {
			return nil, err
		}
		for _, o := range opts {
			if o.Name != "FORMAT" || !strings.EqualFold(o.Value, "text") {
				return nil, sqlerr.Unsupported("COPY option " + o.Name + " " + o.Value)
			}
		}
	}
	return sub, c.end()
}

// fetchWithOptions handles FETCH ... WITH (TIMEOUT = 'duration'), which
// Postgres does not parse; a FETCH without WITH is left to Postgres.
func (c *cursor) fetchWithOptions() (Statement, error) {
	w := -1
	for k, t := range c.toks {
		if t.is("with") {
			w = k
			break
		}
	}
	if w < 0 || w+1 >= len(c.toks) || !c.toks[w+1].sym("(") {
		return nil, nil
	}
	inner, err := ParseOne(c.sql[:c.toks[w].start])
	if err != nil {
		return nil, err
	}
	p, ok := inner.(*Postgres)
	if !ok || p.Node.GetFetchStmt() == nil {
		return nil, c.errHere("expected FETCH")
	}
	c.i = w + 1
	opts, err := c.options()
	if err != nil {
		return nil, err
	}
	f := &Fetch{SQL: c.sql, Fetch: p.Node.GetFetchStmt()}
	for _, o := range opts {
		if o.Name != "TIMEOUT" {
			return nil, sqlerr.Unsupported("FETCH option " + o.Name)
		}
		f.Timeout = o.Value
		f.HasTimeout = true
	}
	return f, c.end()
}
