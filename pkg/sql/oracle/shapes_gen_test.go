package oracle

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// The shapes generator: one grammar over every query shape Tandem
// maintains (joins of every kind, correlated subqueries, window functions
// with frames, GROUP BY and grouping sets, DISTINCT ON, LATERAL, top-k,
// bounded WITH RECURSIVE, set operations), nested through subqueries in
// FROM, over a random small schema. Each query becomes a view on both
// sides, indexed (or a materialized view) on Tandem, and is read again on
// both after every random insert, delete and update: Tandem's maintained
// answer against PostgreSQL's from-scratch one. The grammar only draws
// queries whose answer PostgreSQL determines: every ORDER BY under a
// LIMIT, DISTINCT ON or an order-sensitive window function orders by all
// the columns it selects, so rows it leaves tied are equal; scalar
// subqueries aggregate or take one row.

// gcol is a column of a generated relation: its name and whether it is
// text (otherwise an integer, integer or bigint).
type gcol struct {
	name string
	text bool
	// opaque columns (floats) are only selected, never compared,
	// aggregated or ordered by: col, intCol and kind skip them.
	opaque bool
}

// gtable is a generated base table.
type gtable struct {
	name string
	cols []gcol
	// types are the SQL types of cols.
	types []string
}

// shapeGen draws schemas, data, queries and writes from r.
type shapeGen struct {
	r      *rand.Rand
	tables []gtable
	alias  int
}

func (g *shapeGen) pick(n int) int { return g.r.IntN(n) }

func (g *shapeGen) chance(p float64) bool { return g.r.Float64() < p }

// newAlias returns a fresh table alias.
func (g *shapeGen) newAlias() string {
	g.alias++
	return fmt.Sprintf("x%d", g.alias)
}

// schema draws 3 tables, each with an integer column k and 2 or 3 more
// columns, integer, bigint or text.
func (g *shapeGen) schema(prefix string) {
	g.tables = nil
	for i := 1; i <= 3; i++ {
		t := gtable{name: fmt.Sprintf("%s%d", prefix, i)}
		t.cols = append(t.cols, gcol{name: "k"})
		t.types = append(t.types, "integer")
		for j := range 2 + g.pick(2) {
			c := gcol{name: string(rune('a' + j))}
			typ := []string{"integer", "bigint", "bigint", "text"}[g.pick(4)]
			c.text = typ == "text"
			t.cols = append(t.cols, c)
			t.types = append(t.types, typ)
		}
		g.tables = append(g.tables, t)
	}
}

func (g *shapeGen) createTable(t gtable) string {
	var defs []string
	for i, c := range t.cols {
		defs = append(defs, c.name+" "+t.types[i])
	}
	return fmt.Sprintf("CREATE TABLE %s (%s)", t.name, strings.Join(defs, ", "))
}

// literal is a small value of c's kind, or NULL now and then.
func (g *shapeGen) literal(text bool) string {
	if g.chance(0.15) {
		return "NULL"
	}
	return g.value(text)
}

// value is a small non-NULL value of a kind: integers 0..4 and texts
// 'a'..'d', so that equalities often hold.
func (g *shapeGen) value(text bool) string {
	if text {
		return "'" + string(rune('a'+g.pick(4))) + "'"
	}
	return strconv.Itoa(g.pick(5))
}

func (g *shapeGen) rows(t gtable, n int) string {
	var rs []string
	for range n {
		var vs []string
		for _, c := range t.cols {
			vs = append(vs, g.literal(c.text))
		}
		rs = append(rs, "("+strings.Join(vs, ", ")+")")
	}
	return strings.Join(rs, ", ")
}

// write is a random insert, delete or update of one table.
func (g *shapeGen) write() string {
	t := g.tables[g.pick(len(g.tables))]
	c := t.cols[g.pick(len(t.cols))]
	switch g.pick(4) {
	case 0, 1:
		return fmt.Sprintf("INSERT INTO %s VALUES %s", t.name, g.rows(t, 1+g.pick(3)))
	case 2:
		return fmt.Sprintf("DELETE FROM %s WHERE %s = %s", t.name, c.name, g.value(c.text))
	}
	set := t.cols[g.pick(len(t.cols))]
	return fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s IS NULL OR %s = %s",
		t.name, set.name, g.literal(set.text), c.name, c.name, g.value(c.text))
}

// rel is a relation in FROM: its SQL (a table or a parenthesised
// subquery, with alias) and its columns, named as alias.column.
type rel struct {
	sql   string
	alias string
	cols  []gcol
}

func (r rel) ref(c gcol) string { return r.alias + "." + c.name }

// ints and texts are a relation's columns of one kind.
func (r rel) kind(text bool) []gcol {
	var out []gcol
	for _, c := range r.cols {
		if c.text == text && !c.opaque {
			out = append(out, c)
		}
	}
	return out
}

// col picks a column of r, intCol an integer one.
func (g *shapeGen) col(r rel) gcol {
	cs := append(r.kind(false), r.kind(true)...)
	return cs[g.pick(len(cs))]
}

func (g *shapeGen) intCol(r rel) gcol {
	ints := r.kind(false)
	return ints[g.pick(len(ints))]
}

// source is a base table, or at depth > 0 now and then a subquery of
// any shape, under a fresh alias.
func (g *shapeGen) source(depth int) rel {
	alias := g.newAlias()
	if depth > 0 && g.chance(0.3) {
		sql, cols := g.query(depth - 1)
		return rel{sql: "(" + sql + ") " + alias, alias: alias, cols: cols}
	}
	t := g.tables[g.pick(len(g.tables))]
	return rel{sql: t.name + " " + alias, alias: alias, cols: t.cols}
}

// pred is a condition on r's columns.
func (g *shapeGen) pred(r rel) string {
	c := g.col(r)
	switch g.pick(7) {
	case 0:
		return r.ref(c) + " IS NULL"
	case 1:
		return r.ref(c) + " IS NOT NULL"
	case 2:
		a, b := g.col(r), g.col(r)
		if a.text == b.text {
			return fmt.Sprintf("(%s = %s OR %s < %s)", r.ref(a), r.ref(b), r.ref(a), g.value(a.text))
		}
	case 3:
		// A row comparison, PostgreSQL's field by field (keyset order).
		a, b := g.col(r), g.col(r)
		op := []string{"=", "<", ">", "<>", "<=", ">=", "IS DISTINCT FROM"}[g.pick(7)]
		return fmt.Sprintf("(%s, %s) %s (%s, %s)", r.ref(a), r.ref(b), op, g.value(a.text), g.value(b.text))
	}
	op := []string{"=", "<", ">", "<>", "<=", ">="}[g.pick(6)]
	return fmt.Sprintf("%s %s %s", r.ref(c), op, g.value(c.text))
}

// sameKind picks a column of b of a's kind, if b has one.
func (g *shapeGen) sameKind(a gcol, b rel) (gcol, bool) {
	cs := b.kind(a.text)
	if len(cs) == 0 {
		return gcol{}, false
	}
	return cs[g.pick(len(cs))], true
}

// link is a condition between a and b: an equality of two columns of
// one kind, now and then another comparison.
func (g *shapeGen) link(a, b rel, eq bool) string {
	for range 4 {
		x := g.col(a)
		if y, ok := g.sameKind(x, b); ok {
			op := "="
			if !eq && g.chance(0.4) {
				op = []string{"<", ">", "<>", "<="}[g.pick(4)]
			}
			return fmt.Sprintf("%s %s %s", a.ref(x), op, b.ref(y))
		}
	}
	x, y := g.intCol(a), g.intCol(b)
	return fmt.Sprintf("%s = %s", a.ref(x), b.ref(y))
}

// project selects a random non-empty list of r's columns (and sometimes
// an expression) as c0, c1, ...; it returns the list and the columns.
func (g *shapeGen) project(rs ...rel) (string, []gcol) {
	var items []string
	var cols []gcol
	add := func(expr string, text bool) {
		name := fmt.Sprintf("c%d", len(cols))
		items = append(items, expr+" AS "+name)
		cols = append(cols, gcol{name: name, text: text})
	}
	for _, r := range rs {
		for _, c := range r.cols {
			if g.chance(0.6) && !c.opaque {
				add(r.ref(c), c.text)
			}
		}
	}
	if !hasInt(cols) || g.chance(0.2) {
		r := rs[g.pick(len(rs))]
		c := g.intCol(r)
		add(fmt.Sprintf("%s + %d", r.ref(c), 1+g.pick(3)), false)
	}
	return strings.Join(items, ", "), cols
}

// hasInt says whether cols has an integer column: every generated
// relation has one, which intCol relies on.
func hasInt(cols []gcol) bool {
	for _, c := range cols {
		if !c.text && !c.opaque {
			return true
		}
	}
	return false
}

// orderAll orders by every column of cols (total over the selected
// values), each in a random direction.
func (g *shapeGen) orderAll(refs []string) string {
	var out []string
	for _, r := range refs {
		out = append(out, r+[]string{"", " DESC", " NULLS FIRST", " DESC NULLS LAST"}[g.pick(4)])
	}
	return strings.Join(out, ", ")
}

// refs lists r's columns.
func refs(r rel) []string {
	var out []string
	for _, c := range r.cols {
		out = append(out, r.ref(c))
	}
	return out
}

// query draws a query of a random shape whose output columns are named
// c0, c1, ...; depth bounds the nesting of subqueries in FROM.
func (g *shapeGen) query(depth int) (string, []gcol) {
	shapes := []func(int) (string, []gcol){
		g.joinShape, g.joinShape, g.correlatedShape, g.correlatedShape, g.windowShape, g.windowShape,
		g.groupShape, g.distinctOnShape, g.lateralShape, g.topKShape, g.recursiveShape, g.setOpShape,
		g.cteShape,
	}
	return shapes[g.pick(len(shapes))](depth)
}

// joinShape joins two or three sources, inner, left, right, full or by a
// comma and WHERE, with a filter.
func (g *shapeGen) joinShape(depth int) (string, []gcol) {
	rs := []rel{g.source(depth)}
	from := rs[0].sql
	var where []string
	// chain is where the current comma-separated item starts: an ON
	// sees only the items of its own JOIN chain.
	chain := 0
	for i := range 1 + g.pick(2) {
		r := g.source(depth)
		switch g.pick(5) {
		case 0:
			from += ", " + r.sql
			where = append(where, g.link(rs[g.pick(len(rs))], r, false))
			chain = len(rs)
		default:
			prev := rs[chain+g.pick(len(rs)-chain)]
			kind := []string{"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"}[g.pick(4)]
			on := g.link(prev, r, kind == "FULL JOIN")
			if kind != "FULL JOIN" && g.chance(0.3) {
				on += " AND " + g.pred([]rel{prev, r}[g.pick(2)])
			}
			from += fmt.Sprintf(" %s %s ON %s", kind, r.sql, on)
		}
		rs = append(rs, r)
		_ = i
	}
	for range g.pick(3) {
		where = append(where, g.pred(rs[g.pick(len(rs))]))
	}
	sel, cols := g.project(rs...)
	q := "SELECT " + sel + " FROM " + from
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	return q, cols
}

// subqueryPred is a predicate on outer row x with a subquery over a new
// source correlated to x by a random comparison (or not at all): EXISTS,
// NOT EXISTS, IN, NOT IN, a comparison with an aggregate, ANY or ALL.
func (g *shapeGen) subqueryPred(x rel, depth int) string {
	y := g.source(depth)
	var corr []string
	if g.chance(0.85) {
		corr = append(corr, g.link(y, x, false))
	}
	if g.chance(0.4) {
		corr = append(corr, g.pred(y))
	}
	where := ""
	if len(corr) > 0 {
		where = " WHERE " + strings.Join(corr, " AND ")
	}
	c := g.col(x)
	yc, ok := g.sameKind(c, y)
	if !ok {
		c, yc = g.intCol(x), g.intCol(y)
	}
	switch g.pick(6) {
	case 0:
		return fmt.Sprintf("EXISTS (SELECT 1 FROM %s%s)", y.sql, where)
	case 1:
		return fmt.Sprintf("NOT EXISTS (SELECT 1 FROM %s%s)", y.sql, where)
	case 2:
		return fmt.Sprintf("%s IN (SELECT %s FROM %s%s)", x.ref(c), y.ref(yc), y.sql, where)
	case 3:
		return fmt.Sprintf("%s NOT IN (SELECT %s FROM %s%s)", x.ref(c), y.ref(yc), y.sql, where)
	case 4:
		agg := []string{"max", "min", "count"}[g.pick(3)]
		if agg == "count" {
			return fmt.Sprintf("%d < (SELECT count(%s) FROM %s%s)", g.pick(3), y.ref(yc), y.sql, where)
		}
		return fmt.Sprintf("%s %s (SELECT %s(%s) FROM %s%s)", x.ref(c), []string{"=", "<", ">="}[g.pick(3)], agg, y.ref(yc), y.sql, where)
	}
	return fmt.Sprintf("%s %s (SELECT %s FROM %s%s)", x.ref(c), []string{"< ANY", ">= ALL", "= ANY", "<> ALL"}[g.pick(4)], y.ref(yc), y.sql, where)
}

// correlatedShape filters a source by correlated subqueries, or adds a
// scalar subquery or EXISTS column to its rows.
func (g *shapeGen) correlatedShape(depth int) (string, []gcol) {
	x := g.source(depth)
	sel, cols := g.project(x)
	if g.chance(0.4) {
		y := g.source(depth)
		yc := g.col(y)
		expr := fmt.Sprintf("(SELECT count(*) FROM %s WHERE %s)", y.sql, g.link(y, x, false))
		text := false
		switch g.pick(3) {
		case 0:
			expr = fmt.Sprintf("(SELECT %s(%s) FROM %s WHERE %s)", []string{"max", "min"}[g.pick(2)], y.ref(yc), y.sql, g.link(y, x, false))
			text = yc.text
		case 1:
			// An integer (1, 0 or NULL), so that the column can be
			// compared like any other.
			expr = "(" + g.subqueryPred(x, depth) + ")::integer"
		}
		sel += fmt.Sprintf(", %s AS c%d", expr, len(cols))
		cols = append(cols, gcol{name: fmt.Sprintf("c%d", len(cols)), text: text})
	}
	var where []string
	for range g.pick(3) {
		where = append(where, g.subqueryPred(x, depth))
	}
	if g.chance(0.3) {
		where = append(where, g.pred(x))
	}
	q := "SELECT " + sel + " FROM " + x.sql
	if len(where) > 0 {
		conn := " AND "
		if g.chance(0.2) {
			conn = " OR "
		}
		q += " WHERE " + strings.Join(where, conn)
	}
	return q, cols
}

// shapesScripts draws the generator's scripts: TANDEM_ORACLE_SHAPES_CASES
// queries (default 54) from seed TANDEM_ORACLE_SHAPES_SEED (default 1),
// in scripts of shapesPerScript queries over a fresh schema, each script
// followed by shapesWrites random writes after each of which every view
// is read again.
func shapesScripts(seed uint64, cases int) []generatedScript {
	var out []generatedScript
	for i := 0; cases > 0; i++ {
		n := min(cases, shapesPerScript)
		cases -= n
		g := &shapeGen{r: rand.New(rand.NewPCG(seed, uint64(i)))}
		out = append(out, g.script(fmt.Sprintf("shapes_seed%d_%d", seed, i), n))
	}
	return out
}

const (
	shapesPerScript = 9
	shapesWrites    = 6
)

// script writes one script: the schema and its rows, n views (a view
// with a default index, or a materialized view, on Tandem; a plain view
// on PostgreSQL) each also run as a one-shot query, then the writes.
func (g *shapeGen) script(name string, n int) generatedScript {
	var sb strings.Builder
	rec := func(kind, sql string) { fmt.Fprintf(&sb, "%s\n%s\n\n", kind, sql) }
	g.schema("sh")
	for _, t := range g.tables {
		rec("statement ok", g.createTable(t))
		rec("statement ok", fmt.Sprintf("INSERT INTO %s VALUES %s", t.name, g.rows(t, 3+g.pick(6))))
	}
	defs := map[string]string{}
	for i := range n {
		q, _ := g.query(1)
		v := fmt.Sprintf("v%d", i)
		defs[v] = q
		if g.chance(0.5) {
			rec("statement ok", fmt.Sprintf("CREATE VIEW %s AS %s", v, q))
			rec("tandem ok", "CREATE DEFAULT INDEX ON "+v)
		} else {
			rec("tandem ok", fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", v, q))
			rec("postgres ok", fmt.Sprintf("CREATE VIEW %s AS %s", v, q))
		}
		rec("query", q)
	}
	for range shapesWrites {
		rec("statement ok", g.write())
		for i := range n {
			rec("query", fmt.Sprintf("SELECT * FROM v%d", i))
		}
	}
	text := sb.String()
	return generatedScript{name: name, text: text, replay: func(line int) string { return replay(text, defs, line) }}
}

// replay is what reproduces a failure at line of a generated script: the
// tables and the writes up to that line, then the failing query (a view
// read as its definition).
func replay(text string, defs map[string]string, line int) string {
	recs, err := ParseScript(text)
	if err != nil {
		return err.Error()
	}
	var sb strings.Builder
	for _, r := range recs {
		if r.Line > line {
			break
		}
		isView := strings.Contains(r.SQL, " VIEW ") || strings.Contains(r.SQL, " INDEX ")
		if r.Kind == StatementOK && !isView {
			sb.WriteString(r.SQL + ";\n")
		}
		if r.Line == line {
			q := r.SQL
			if v, ok := strings.CutPrefix(q, "SELECT * FROM "); ok && defs[v] != "" {
				q = defs[v]
			}
			sb.WriteString(q + ";\n")
		}
	}
	return sb.String()
}
