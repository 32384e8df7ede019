package oracle

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// The shapes of the generator's grammar beyond joins and subqueries
// (shapes_gen_test.go): each returns a query whose columns are c0, c1, ...

// outCols names n output columns c0.. of the given kinds.
func outCols(kinds ...bool) []gcol {
	var out []gcol
	for i, k := range kinds {
		out = append(out, gcol{name: fmt.Sprintf("c%d", i), text: k})
	}
	return out
}

// selectAs lists exprs as c0, c1, ...
func selectAs(exprs []string) string {
	var out []string
	for i, e := range exprs {
		out = append(out, fmt.Sprintf("%s AS c%d", e, i))
	}
	return strings.Join(out, ", ")
}

// windowFunc draws a window function over x: the call and its result
// column (named later). Functions whose value depends on the order among peers get
// the total order (every column of x); the others a partial one, ties
// included, or none.
func (g *shapeGen) windowFunc(x rel) (string, gcol) {
	part := ""
	if g.chance(0.6) {
		part = "PARTITION BY " + x.ref(g.col(x)) + " "
	}
	total := "ORDER BY " + g.orderAll(refs(x))
	partial := "ORDER BY " + g.orderAll([]string{x.ref(g.col(x))})
	c, ic := g.col(x), g.intCol(x)
	rowsFrame := func() string {
		b := []string{"UNBOUNDED PRECEDING", "2 PRECEDING", "1 PRECEDING", "CURRENT ROW", "1 FOLLOWING", "UNBOUNDED FOLLOWING"}
		i := g.pick(len(b) - 1)
		j := i + g.pick(len(b)-i)
		if j == 0 {
			j = 3
		}
		ex := []string{"", "", "", " EXCLUDE CURRENT ROW", " EXCLUDE GROUP", " EXCLUDE TIES"}[g.pick(6)]
		return fmt.Sprintf(" %s BETWEEN %s AND %s%s", []string{"ROWS", "ROWS", "GROUPS"}[g.pick(3)], b[i], b[j], ex)
	}
	// Frames of whole peer groups: RANGE, GROUPS, and exclusions of
	// whole groups, whose rows do not depend on the order among peers.
	rangeFrame := []string{"", " RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
		" RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING", " RANGE BETWEEN CURRENT ROW AND CURRENT ROW",
		" GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW", " GROUPS BETWEEN 1 FOLLOWING AND 2 FOLLOWING",
		" GROUPS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING EXCLUDE GROUP", " RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING EXCLUDE GROUP"}
	agg := func() (string, bool) {
		switch g.pick(4) {
		case 0:
			return "count(*)", false
		case 1:
			return []string{"sum(", "avg("}[g.pick(2)] + x.ref(ic) + ")", false
		case 2:
			return "count(" + x.ref(c) + ")", false
		}
		return []string{"min(", "max("}[g.pick(2)] + x.ref(c) + ")", c.text
	}
	switch g.pick(10) {
	case 0:
		return fmt.Sprintf("row_number() OVER (%s%s)", part, total), gcol{}
	case 1:
		return fmt.Sprintf("%s OVER (%s%s)", []string{"rank()", "dense_rank()"}[g.pick(2)], part, partial), gcol{}
	case 2:
		return fmt.Sprintf("%s OVER (%s%s)", []string{"percent_rank()", "cume_dist()"}[g.pick(2)], part, partial), gcol{opaque: true}
	case 3:
		return fmt.Sprintf("ntile(%d) OVER (%s%s)", 1+g.pick(3), part, total), gcol{}
	case 4:
		fn := []string{"lag", "lead"}[g.pick(2)]
		def := ""
		if g.chance(0.5) {
			def = fmt.Sprintf(", %d, %s", 1+g.pick(2), g.value(c.text))
		}
		return fmt.Sprintf("%s(%s%s) OVER (%s%s)", fn, x.ref(c), def, part, total), gcol{text: c.text}
	case 5:
		fn := []string{"first_value(" + x.ref(c) + ")", "last_value(" + x.ref(c) + ")", fmt.Sprintf("nth_value(%s, %d)", x.ref(c), 1+g.pick(2))}[g.pick(3)]
		return fmt.Sprintf("%s OVER (%s%s%s)", fn, part, total, rowsFrame()), gcol{text: c.text}
	case 6, 7:
		a, text := agg()
		return fmt.Sprintf("%s OVER (%s%s%s)", a, part, total, rowsFrame()), gcol{text: text}
	case 8:
		a, text := agg()
		if g.chance(0.4) {
			// RANGE offsets over one integer column: value-based, so
			// the order among peers does not matter either.
			// Over the integer itself, as float8 (numeric offsets), as
			// a date, as a time of day that wraps past midnight (its
			// bounds do not) or as an interval (interval offsets).
			key := x.ref(ic)
			b := []string{"UNBOUNDED PRECEDING", "2 PRECEDING", "1 PRECEDING", "CURRENT ROW", "0 FOLLOWING", "1 FOLLOWING", "UNBOUNDED FOLLOWING"}
			switch g.pick(5) {
			case 1:
				key = "(" + key + ")::float8"
				b = []string{"UNBOUNDED PRECEDING", "2.5 PRECEDING", "0.5 PRECEDING", "CURRENT ROW", "0 FOLLOWING", "1.5 FOLLOWING", "UNBOUNDED FOLLOWING"}
			case 2:
				key = "DATE '2024-02-27' + (" + key + ")::int"
				b = []string{"UNBOUNDED PRECEDING", "INTERVAL '2 days' PRECEDING", "INTERVAL '12 hours' PRECEDING", "CURRENT ROW", "INTERVAL '0' FOLLOWING", "INTERVAL '1 day 12:00' FOLLOWING", "UNBOUNDED FOLLOWING"}
			case 3:
				key = "TIME '23:00' + (" + key + ") * INTERVAL '30 minutes'"
				b = []string{"UNBOUNDED PRECEDING", "INTERVAL '1 day 1 hour' PRECEDING", "INTERVAL '30 minutes' PRECEDING", "CURRENT ROW", "INTERVAL '0' FOLLOWING", "INTERVAL '45 minutes' FOLLOWING", "UNBOUNDED FOLLOWING"}
			case 4:
				key = "(" + key + ") * INTERVAL '12 hours'"
				b = []string{"UNBOUNDED PRECEDING", "INTERVAL '1 day' PRECEDING", "INTERVAL '12 hours' PRECEDING", "CURRENT ROW", "INTERVAL '0' FOLLOWING", "INTERVAL '1 mon -29 days' FOLLOWING", "UNBOUNDED FOLLOWING"}
			}
			o := g.orderAll([]string{key})
			i := g.pick(len(b) - 1)
			j := max(i+g.pick(len(b)-i), 1)
			return fmt.Sprintf("%s OVER (%sORDER BY %s RANGE BETWEEN %s AND %s)", a, part, o, b[i], b[j]), gcol{text: text}
		}
		return fmt.Sprintf("%s OVER (%s%s%s)", a, part, partial, rangeFrame[g.pick(len(rangeFrame))]), gcol{text: text}
	}
	a, text := agg()
	return fmt.Sprintf("%s OVER (%s)", a, strings.TrimSpace(part)), gcol{text: text}
}

// windowShape adds one to three window functions to a source's columns.
func (g *shapeGen) windowShape(depth int) (string, []gcol) {
	x := g.source(depth)
	sel, cols := g.project(x)
	positional := false
	for range 1 + g.pick(3) {
		f, c := g.windowFunc(x)
		// Over duplicate rows of x, a function that tells rows apart by
		// position (row_number, ntile, lag, a ROWS frame) gives the
		// duplicates different values, and two such functions sorting
		// them separately may pair those values either way: keep the
		// first only, so that PostgreSQL's answer is determined.
		if isPositional(f) {
			if positional {
				continue
			}
			positional = true
		}
		sel += fmt.Sprintf(", %s AS c%d", f, len(cols))
		c.name = fmt.Sprintf("c%d", len(cols))
		cols = append(cols, c)
	}
	q := "SELECT " + sel + " FROM " + x.sql
	if g.chance(0.3) {
		q += " WHERE " + g.pred(x)
	}
	return q, cols
}

// positionalMarks are what windowFunc writes for the functions that
// isPositional names (one each).
var positionalMarks = []string{"row_number()", "ntile(", "lag(", "lead(", " ROWS BETWEEN"}

// isPositional reports whether window function call f (as windowFunc
// writes it) can give rows that are equal in every column different
// values: the functions it orders totally and ROWS frames. Ranks,
// RANGE and GROUPS frames and aggregates over the whole partition treat
// such rows as peers.
func isPositional(f string) bool {
	for _, p := range positionalMarks {
		if strings.Contains(f, p) {
			return true
		}
	}
	// first_value, last_value, nth_value and aggregates over a GROUPS
	// frame drawn by rowsFrame read the total order's neighbours only
	// through whole peer groups, but with EXCLUDE CURRENT ROW or TIES a
	// duplicate's frame still holds its twin: the same values.
	return false
}

// groupShape aggregates a source by one or two keys, plainly or by
// GROUPING SETS, ROLLUP or CUBE, or globally, with HAVING now and then.
func (g *shapeGen) groupShape(depth int) (string, []gcol) {
	x := g.source(depth)
	var exprs []string
	var kinds []bool
	k1, k2 := g.col(x), g.col(x)
	keys := []string{x.ref(k1)}
	if k2 != k1 {
		keys = append(keys, x.ref(k2))
	}
	group := ""
	switch g.pick(6) {
	case 0:
		keys = nil
	case 1:
		group = " GROUP BY GROUPING SETS ((" + keys[0] + "), (" + strings.Join(keys, ", ") + "), ())"
	case 2:
		group = " GROUP BY ROLLUP (" + strings.Join(keys, ", ") + ")"
	case 3:
		group = " GROUP BY CUBE (" + strings.Join(keys, ", ") + ")"
	default:
		if g.chance(0.25) {
			// A subquery as a key, named again by the select list.
			keys[0] = "(SELECT " + keys[0] + ")"
		}
		group = " GROUP BY " + strings.Join(keys, ", ")
	}
	for i, k := range keys {
		exprs = append(exprs, k)
		kinds = append(kinds, []gcol{k1, k2}[i].text)
	}
	exprs = append(exprs, "count(*)")
	kinds = append(kinds, false)
	for range g.pick(3) {
		c := g.col(x)
		switch g.pick(4) {
		case 0:
			exprs = append(exprs, "sum("+x.ref(g.intCol(x))+")")
			kinds = append(kinds, false)
		case 1:
			exprs = append(exprs, "count(DISTINCT "+x.ref(c)+")")
			kinds = append(kinds, false)
		default:
			exprs = append(exprs, []string{"min(", "max("}[g.pick(2)]+x.ref(c)+")")
			kinds = append(kinds, c.text)
		}
	}
	if strings.HasPrefix(group, " GROUP BY ") && g.chance(0.5) {
		// GROUPING over the keys, in a random order, a key maybe twice.
		args := append([]string(nil), keys...)
		g.r.Shuffle(len(args), func(i, j int) { args[i], args[j] = args[j], args[i] })
		if g.chance(0.3) {
			args = append(args, keys[0])
		}
		exprs = append(exprs, "GROUPING("+strings.Join(args, ", ")+")")
		kinds = append(kinds, false)
	}
	q := "SELECT " + selectAs(exprs) + " FROM " + x.sql
	if g.chance(0.4) {
		q += " WHERE " + g.pred(x)
	}
	q += group
	switch {
	case group != "" && g.chance(0.3):
		q += fmt.Sprintf(" HAVING count(*) > %d", g.pick(2))
	case group != "" && g.chance(0.2):
		// An aggregate of this level written inside a subquery.
		q += fmt.Sprintf(" HAVING EXISTS (SELECT 1 WHERE max(%s) > %d)", x.ref(g.intCol(x)), g.pick(5))
	}
	return q, outCols(kinds...)
}

// distinctOnShape keeps the first row per key in an order total over the
// selected columns, or applies plain DISTINCT.
func (g *shapeGen) distinctOnShape(depth int) (string, []gcol) {
	x := g.source(depth)
	key := g.col(x)
	exprs := []string{x.ref(key)}
	cols := []gcol{key}
	for _, c := range x.cols {
		if c != key && g.chance(0.6) {
			exprs = append(exprs, x.ref(c))
			cols = append(cols, c)
		}
	}
	if !hasInt(cols) {
		c := g.intCol(x)
		exprs = append(exprs, x.ref(c))
		cols = append(cols, c)
	}
	for i := range cols {
		cols[i].name = fmt.Sprintf("c%d", i)
	}
	where := ""
	if g.chance(0.3) {
		where = " WHERE " + g.pred(x)
	}
	if g.chance(0.25) {
		return "SELECT DISTINCT " + selectAs(exprs) + " FROM " + x.sql + where, cols
	}
	return fmt.Sprintf("SELECT DISTINCT ON (%s) %s FROM %s%s ORDER BY %s", exprs[0], selectAs(exprs), x.sql, where, g.orderAll(exprs)), cols
}

// lateralShape joins a source to a LATERAL subquery correlated to it: a
// top-k per outer row, an aggregate per outer row (LEFT JOIN ... ON), or
// a generate_series over an outer column.
func (g *shapeGen) lateralShape(depth int) (string, []gcol) {
	x := g.source(depth)
	y := g.source(depth)
	l := g.newAlias()
	sel, cols := g.project(x)
	add := func(expr string, text bool) {
		sel += fmt.Sprintf(", %s AS c%d", expr, len(cols))
		cols = append(cols, gcol{name: fmt.Sprintf("c%d", len(cols)), text: text})
	}
	corr := g.link(y, x, false)
	switch g.pick(4) {
	case 2:
		// VALUES over outer columns: the unpivot idiom.
		a, b := g.intCol(x), g.intCol(x)
		q := fmt.Sprintf(" FROM %s, LATERAL (VALUES (%s), (%s + 1), (NULL::bigint)) %s(v)", x.sql, x.ref(a), x.ref(b), l)
		add(l+".v", false)
		return "SELECT " + sel + q, cols
	case 0:
		yc := g.col(y)
		join := []string{", LATERAL", " CROSS JOIN LATERAL"}[g.pick(2)]
		q := fmt.Sprintf(" FROM %s%s (SELECT %s AS v FROM %s WHERE %s ORDER BY %s LIMIT %d) %s",
			x.sql, join, y.ref(yc), y.sql, corr, g.orderAll([]string{y.ref(yc)}), 1+g.pick(2), l)
		add(l+".v", yc.text)
		return "SELECT " + sel + q, cols
	case 1:
		yc := g.intCol(y)
		on := []string{"true", l + ".n > 0", l + ".m IS NOT NULL"}[g.pick(3)]
		q := fmt.Sprintf(" FROM %s LEFT JOIN LATERAL (SELECT count(*) AS n, max(%s) AS m FROM %s WHERE %s) %s ON %s",
			x.sql, y.ref(yc), y.sql, corr, l, on)
		add(l+".n", false)
		add(l+".m", false)
		return "SELECT " + sel + q, cols
	}
	xc := g.intCol(x)
	add(l+".v", false)
	return fmt.Sprintf("SELECT %s FROM %s, LATERAL generate_series(%d, %s) AS %s(v)", sel, x.sql, g.pick(2), x.ref(xc), l), cols
}

// topKShape is the row_number (or rank) top-k pattern, or ORDER BY ...
// LIMIT [OFFSET] over a source.
func (g *shapeGen) topKShape(depth int) (string, []gcol) {
	x := g.source(depth)
	sel, cols := g.project(x)
	if g.chance(0.4) {
		var orefs []string
		for _, c := range cols {
			orefs = append(orefs, c.name)
		}
		q := fmt.Sprintf("SELECT %s FROM %s ORDER BY %s LIMIT %d", sel, x.sql, g.orderAll(orefs), 1+g.pick(4))
		if g.chance(0.4) {
			q += fmt.Sprintf(" OFFSET %d", g.pick(3))
		}
		return q, cols
	}
	part := ""
	if g.chance(0.7) {
		part = "PARTITION BY " + x.ref(g.col(x)) + " "
	}
	fn, order := "row_number()", g.orderAll(refs(x))
	if g.chance(0.3) {
		fn, order = []string{"rank()", "dense_rank()"}[g.pick(2)], g.orderAll([]string{x.ref(g.col(x))})
	}
	rn := fmt.Sprintf("c%d", len(cols))
	inner := fmt.Sprintf("SELECT %s, %s OVER (%sORDER BY %s) AS %s FROM %s", sel, fn, part, order, rn, x.sql)
	k := 1 + g.pick(3)
	cond := []string{fmt.Sprintf("%s <= %d", rn, k), fmt.Sprintf("%s < %d", rn, k+1), rn + " = 1", fmt.Sprintf("%s BETWEEN 2 AND %d", rn, k+1)}[g.pick(4)]
	cols = append(cols, gcol{name: rn})
	return fmt.Sprintf("SELECT * FROM (%s) %s WHERE %s", inner, g.newAlias(), cond), cols
}

// recursiveShape is a bounded WITH RECURSIVE over a table's integer
// columns read as edges: reachability with a depth bound (UNION or UNION
// ALL), or the transitive closure by UNION (finite: values are small).
func (g *shapeGen) recursiveShape(int) (string, []gcol) {
	t := g.tables[g.pick(len(g.tables))]
	e := rel{alias: "e", cols: t.cols}
	src, dst := g.intCol(e), g.intCol(e)
	r := g.newAlias()
	u := []string{"UNION", "UNION ALL"}[g.pick(2)]
	if g.chance(0.5) {
		q := fmt.Sprintf("WITH RECURSIVE %s(n, d) AS (SELECT e.%s::bigint, 0 FROM %s e WHERE e.%s < %d %s SELECT e.%s::bigint, %s.d + 1 FROM %s JOIN %s e ON e.%s = %s.n WHERE %s.d < %d) ",
			r, src.name, t.name, src.name, 1+g.pick(3), u, dst.name, r, r, t.name, src.name, r, r, 1+g.pick(3))
		if g.chance(0.5) {
			return q + fmt.Sprintf("SELECT n AS c0, min(d) AS c1, count(*) AS c2 FROM %s GROUP BY n", r), outCols(false, false, false)
		}
		return q + fmt.Sprintf("SELECT n AS c0, d AS c1 FROM %s", r), outCols(false, false)
	}
	q := fmt.Sprintf("WITH RECURSIVE %s(s, d) AS (SELECT %s::bigint, %s::bigint FROM %s UNION SELECT %s.s, e.%s::bigint FROM %s JOIN %s e ON e.%s = %s.d) SELECT s AS c0, d AS c1 FROM %s",
		r, src.name, dst.name, t.name, r, dst.name, r, t.name, src.name, r, r)
	return q, outCols(false, false)
}

// setOpShape combines two or three selections of columns of the same
// kinds by UNION, INTERSECT or EXCEPT, with or without ALL.
func (g *shapeGen) setOpShape(depth int) (string, []gcol) {
	x := g.source(depth)
	first := []gcol{g.col(x)}
	if g.chance(0.5) {
		first = append(first, g.col(x))
	}
	arm := func(r rel, want []gcol) string {
		var exprs []string
		for _, w := range want {
			c, ok := g.sameKind(w, r)
			if !ok {
				// No column of that kind: a constant of it.
				exprs = append(exprs, g.value(w.text))
				if w.text {
					exprs[len(exprs)-1] += "::text"
				}
				continue
			}
			exprs = append(exprs, r.ref(c))
		}
		q := "SELECT " + strings.Join(exprs, ", ") + " FROM " + r.sql
		if g.chance(0.4) {
			q += " WHERE " + g.pred(r)
		}
		return q
	}
	var kinds []bool
	for _, c := range first {
		kinds = append(kinds, c.text)
	}
	cols := outCols(kinds...)
	q := "SELECT " + selectAs(refs(rel{alias: x.alias, cols: first})) + " FROM " + x.sql
	if g.chance(0.4) {
		q += " WHERE " + g.pred(x)
	}
	for range 1 + g.pick(2) {
		op := []string{"UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"}[g.pick(6)]
		q += " " + op + " " + arm(g.source(depth), cols)
	}
	if !hasInt(cols) {
		// Every relation has an integer column: wrap and add one.
		return fmt.Sprintf("SELECT %s, 1 AS c%d FROM (%s) %s", strings.Join(names(cols), ", "), len(cols), q, g.newAlias()), append(cols, gcol{name: fmt.Sprintf("c%d", len(cols))})
	}
	return q, cols
}

func names(cols []gcol) []string {
	var out []string
	for _, c := range cols {
		out = append(out, c.name)
	}
	return out
}

// TestWindowShapeHasOnePositionalFunction checks the generator: a window
// shape over a base table (which may hold duplicate rows) has at most one
// function that tells duplicates apart, whose pairing with another would
// leave PostgreSQL's answer undetermined.
func TestWindowShapeHasOnePositionalFunction(t *testing.T) {
	g := &shapeGen{r: rand.New(rand.NewPCG(1, 1))}
	g.schema("sh")
	for range 500 {
		q, _ := g.windowShape(0)
		n := 0
		for _, p := range positionalMarks {
			n += strings.Count(q, p)
		}
		if n > 1 {
			t.Fatalf("%d positional window functions in %s", n, q)
		}
	}
}

// cteShape reads a WITH query twice (a self-join on a link, or a union of
// two filtered reads), which Tandem computes once.
func (g *shapeGen) cteShape(depth int) (string, []gcol) {
	inner, cols := g.query(max(depth-1, 0))
	w := g.newAlias()
	a := rel{sql: w + " " + g.newAlias(), cols: cols}
	a.alias = strings.Fields(a.sql)[1]
	b := rel{sql: w + " " + g.newAlias(), cols: cols}
	b.alias = strings.Fields(b.sql)[1]
	if g.chance(0.5) {
		sel, out := g.project(a, b)
		return fmt.Sprintf("WITH %s AS (%s) SELECT %s FROM %s JOIN %s ON %s", w, inner, sel, a.sql, b.sql, g.link(a, b, false)), out
	}
	var refsA, refsB []string
	var out []gcol
	for i, c := range cols {
		if c.opaque {
			continue
		}
		refsA = append(refsA, fmt.Sprintf("%s AS c%d", a.ref(c), len(out)))
		refsB = append(refsB, b.ref(c))
		out = append(out, gcol{name: fmt.Sprintf("c%d", len(out)), text: cols[i].text})
	}
	op := []string{"UNION ALL", "UNION", "EXCEPT ALL"}[g.pick(3)]
	return fmt.Sprintf("WITH %s AS (%s) SELECT %s FROM %s WHERE %s %s SELECT %s FROM %s WHERE %s",
		w, inner, strings.Join(refsA, ", "), a.sql, g.pred(a), op, strings.Join(refsB, ", "), b.sql, g.pred(b)), out
}
