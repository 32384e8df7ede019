package oracle

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Generated scripts: random data, random queries of the shapes the
// planner rewrites (multi-way joins with single-table filters and
// equalities, outer joins among them; the row_number top-k pattern),
// each a one-shot query and a maintained materialized view, compared
// with PostgreSQL after every one of a series of random inserts, deletes
// and updates. The seed and the number of cases are fixed inside `make
// test` (TANDEM_ORACLE_SEED, default 1; TANDEM_ORACLE_CASES, default 12
// queries of each shape); a longer run outside it sets them, e.g.
//
//	TANDEM_ORACLE_REQUIRED=1 TANDEM_ORACLE_SEED=7 TANDEM_ORACLE_CASES=200 \
//	  go test -count=1 -run 'TestOracle/generated' ./pkg/sql/oracle/

type generatedScript struct {
	name, text string
	// replay, if set, returns the statements that reproduce a failure
	// at a line of text.
	replay func(line int) string
}

func generatedScripts(t *testing.T) []generatedScript {
	seed, cases := uint64(1), 12
	if v, err := strconv.ParseUint(os.Getenv("TANDEM_ORACLE_SEED"), 10, 64); err == nil {
		seed = v
	}
	if v, err := strconv.Atoi(os.Getenv("TANDEM_ORACLE_CASES")); err == nil && v > 0 {
		cases = v
	}
	t.Logf("generated scripts: TANDEM_ORACLE_SEED=%d TANDEM_ORACLE_CASES=%d", seed, cases)
	g := &scriptGen{r: rand.New(rand.NewPCG(seed, 14))}
	out := []generatedScript{
		{name: fmt.Sprintf("generated_joins_seed%d", seed), text: g.script(cases, g.joinQuery)},
		{name: fmt.Sprintf("generated_topk_seed%d", seed), text: g.script(cases, g.topKQuery)},
	}
	shapesSeed, shapesCases := uint64(1), 54
	if v, err := strconv.ParseUint(os.Getenv("TANDEM_ORACLE_SHAPES_SEED"), 10, 64); err == nil {
		shapesSeed = v
	}
	if v, err := strconv.Atoi(os.Getenv("TANDEM_ORACLE_SHAPES_CASES")); err == nil && v > 0 {
		shapesCases = v
	}
	t.Logf("shapes scripts: TANDEM_ORACLE_SHAPES_SEED=%d TANDEM_ORACLE_SHAPES_CASES=%d", shapesSeed, shapesCases)
	return append(out, shapesScripts(shapesSeed, shapesCases)...)
}

// scriptGen writes scripts over tables g1..g4 (a, b, c integer), whose
// values are small so that equalities match often, NULLs included.
type scriptGen struct {
	r  *rand.Rand
	sb strings.Builder
}

const genTables = 4

func (g *scriptGen) rec(kind, sql string) {
	fmt.Fprintf(&g.sb, "%s\n%s\n\n", kind, sql)
}

// value is a small integer or NULL.
func (g *scriptGen) value() string {
	if g.r.IntN(6) == 0 {
		return "NULL"
	}
	return strconv.Itoa(g.r.IntN(5))
}

func (g *scriptGen) rows(n int) string {
	var rs []string
	for range n {
		rs = append(rs, fmt.Sprintf("(%s, %s, %s)", g.value(), g.value(), g.value()))
	}
	return strings.Join(rs, ", ")
}

// script creates the tables, then per query a materialized view (a plain
// view on PostgreSQL) and the one-shot query, then writes, reading every
// view after each.
func (g *scriptGen) script(cases int, query func() string) string {
	g.sb.Reset()
	for i := 1; i <= genTables; i++ {
		g.rec("statement ok", fmt.Sprintf("CREATE TABLE g%d (a integer, b integer, c integer)", i))
		g.rec("statement ok", fmt.Sprintf("INSERT INTO g%d VALUES %s", i, g.rows(4+g.r.IntN(5))))
	}
	var views []string
	for i := range cases {
		q := query()
		v := fmt.Sprintf("v%d", i)
		g.rec("tandem ok", fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", v, q))
		g.rec("postgres ok", fmt.Sprintf("CREATE VIEW %s AS %s", v, q))
		g.rec("query", q)
		views = append(views, v)
	}
	for range 6 {
		g.rec("statement ok", g.write())
		for _, v := range views {
			g.rec("query", "SELECT * FROM "+v)
		}
	}
	return g.sb.String()
}

// write is a random insert, delete or update of one table.
func (g *scriptGen) write() string {
	t := fmt.Sprintf("g%d", 1+g.r.IntN(genTables))
	col := string(rune('a' + g.r.IntN(3)))
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf("INSERT INTO %s VALUES %s", t, g.rows(1+g.r.IntN(4)))
	case 1:
		return fmt.Sprintf("DELETE FROM %s WHERE %s = %d", t, col, g.r.IntN(5))
	}
	return fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s IS NULL OR %s = %d", t, col, g.value(), col, col, g.r.IntN(5))
}

// column is a random column of alias x.
func (g *scriptGen) column(x string) string {
	return x + "." + string(rune('a'+g.r.IntN(3)))
}

// joinQuery is a join of 2 to 5 aliases of g1..g4, comma-separated or
// with an inner or left join among them, with equalities linking most of
// them, single-table conditions, and sometimes a cross-table condition
// that is no key (a disjunction, arithmetic).
func (g *scriptGen) joinQuery() string {
	n := 2 + g.r.IntN(4)
	aliases := make([]string, n)
	for i := range aliases {
		aliases[i] = fmt.Sprintf("x%d", i)
	}
	var from []string
	var conds []string
	for i := 0; i < n; i++ {
		item := fmt.Sprintf("g%d %s", 1+g.r.IntN(genTables), aliases[i])
		if i > 0 && g.r.IntN(4) == 0 {
			// Join the previous item explicitly.
			kind := "JOIN"
			if g.r.IntN(2) == 0 {
				kind = "LEFT JOIN"
			}
			prev := from[len(from)-1]
			from[len(from)-1] = fmt.Sprintf("%s %s %s ON %s = %s", prev, kind, item, g.column(aliases[i-1]), g.column(aliases[i]))
			continue
		}
		from = append(from, item)
		if i > 0 && g.r.IntN(8) != 0 {
			conds = append(conds, fmt.Sprintf("%s = %s", g.column(aliases[g.r.IntN(i)]), g.column(aliases[i])))
		}
	}
	for range g.r.IntN(4) {
		x := aliases[g.r.IntN(n)]
		switch g.r.IntN(5) {
		case 0:
			conds = append(conds, g.column(x)+" IS NULL")
		case 1:
			conds = append(conds, g.column(x)+" IS NOT NULL")
		default:
			op := []string{"=", "<", ">", "<>"}[g.r.IntN(4)]
			conds = append(conds, fmt.Sprintf("%s %s %d", g.column(x), op, g.r.IntN(5)))
		}
	}
	if g.r.IntN(4) == 0 {
		x, y := aliases[g.r.IntN(n)], aliases[g.r.IntN(n)]
		if g.r.IntN(2) == 0 {
			conds = append(conds, fmt.Sprintf("(%s = %s OR %s > 2)", g.column(x), g.column(y), g.column(x)))
		} else {
			conds = append(conds, fmt.Sprintf("%s + %s = %s", g.column(x), g.column(y), g.column(aliases[g.r.IntN(n)])))
		}
	}
	var sel []string
	for _, x := range aliases {
		sel = append(sel, fmt.Sprintf("%s.a AS %s_a, %s.c AS %s_c", x, x, x, x))
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + strings.Join(from, ", ")
	if len(conds) > 0 {
		q += " WHERE " + strings.Join(conds, " AND ")
	}
	return q
}

// topKQuery is the row_number top-k pattern over one table, with a total
// order (all three columns) so that PostgreSQL's numbering is determined,
// sometimes beside other window functions, and sometimes rank() or
// dense_rank() over an order with ties filtered instead (kept as
// windows).
func (g *scriptGen) topKQuery() string {
	t := fmt.Sprintf("g%d", 1+g.r.IntN(genTables))
	dirs := func() string {
		d := []string{"", " DESC", " NULLS FIRST", " DESC NULLS LAST"}
		return d[g.r.IntN(len(d))]
	}
	order := fmt.Sprintf("b%s, c%s, a%s", dirs(), dirs(), dirs())
	over := "(PARTITION BY a ORDER BY " + order + ")"
	if g.r.IntN(4) == 0 {
		over = "(ORDER BY " + order + ")"
	}
	fn := "row_number()"
	switch g.r.IntN(5) {
	case 0, 1:
		// rank() and dense_rank() number ties alike, so ordering by b
		// alone (many ties) still has one answer; they must keep every
		// tied row.
		fn = []string{"rank()", "dense_rank()"}[g.r.IntN(2)]
		over = "(PARTITION BY a ORDER BY b" + dirs() + ")"
		k := 1 + g.r.IntN(3)
		return fmt.Sprintf("SELECT * FROM (SELECT a, b, c, %s OVER %s AS rn FROM %s) x WHERE rn <= %d", fn, over, t, k)
	}
	extra := ""
	switch g.r.IntN(4) {
	case 0:
		extra = ", sum(c) OVER (PARTITION BY a ORDER BY " + order + " ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS s"
	case 1:
		extra = ", lag(b) OVER " + over + " AS l"
	case 2:
		extra = ", count(*) OVER (PARTITION BY a) AS n"
	}
	k := g.r.IntN(4)
	cond := []string{fmt.Sprintf("rn <= %d", k), fmt.Sprintf("rn < %d", k+1), "rn = 1", fmt.Sprintf("%d >= rn", k)}[g.r.IntN(4)]
	return fmt.Sprintf("SELECT * FROM (SELECT a, b, c, %s OVER %s AS rn%s FROM %s) x WHERE %s", fn, over, extra, t, cond)
}
