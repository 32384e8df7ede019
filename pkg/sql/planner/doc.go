// Package planner compiles parsed SQL (pg_query syntax trees) to the
// dataflow plan IR (pkg/compute/plan) with scalar expressions of
// pkg/compute/expr.
//
// It resolves names through a Catalog (views are inlined from their
// definitions), types expressions with Postgres' rules for untyped
// literals and parameters (an untyped literal or $n takes the type its
// context expects; parameter types are inferred for Describe), and lowers:
//
//   - FROM, WHERE and the select list to Mfp nodes, fused into one Mfp
//     per base relation so that a query over one indexed collection keeps
//     the Mfp-over-Get shape fast-path detection looks for;
//   - inner equi-joins to Join on the equality conjuncts (rows with NULL
//     keys filtered first, since Join matches equal encodings) plus a
//     filter for the rest; LEFT/RIGHT/FULL joins add each preserved
//     side's unmatched rows, side - (side ⋈ distinct(other side's keys)),
//     or, when ON has non-key conditions, side - (side ⋈
//     distinct(matched rows projected to that side)), padded with NULLs;
//   - GROUPING SETS, ROLLUP and CUBE to a Union of one Reduce per
//     grouping set, padded with NULLs (groupsets.go);
//   - GROUP BY and aggregates to Reduce; a global aggregate also unions a
//     default row (count 0, other aggregates NULL) minus that same row
//     mapped from the Reduce's output, so exactly one row exists even
//     over empty input;
//   - WITH lists to plans inlined at every reference (the IR has no
//     shared bindings); a view's definition never sees the CTEs of the
//     query reading it; a WITH RECURSIVE CTE that reads itself to a
//     plan.Recursive node (recursive.go: PostgreSQL's well-formedness
//     rules and errors, dependency order, column types from the
//     non-recursive term, the iteration limit);
//   - x IN (SELECT ...) and EXISTS / NOT EXISTS conjuncts of WHERE to
//     semi-joins (Join with the distinct subquery keys) and anti-joins
//     (Union with the Negate of the semi-join);
//   - other subqueries in expressions (scalar, IN / NOT IN with SQL's
//     NULL rules, op ANY/ALL, EXISTS) to columns added to the relation
//     the expression is evaluated over: a marker from a semi-join and
//     per-key counts, min and max (subquery.go); a scalar subquery's value is single_value(count,
//     max), an expression that raises 21000 per row while the subquery
//     has several rows, so maintained dataflows report it through their
//     error collection and retract it;
//   - subqueries correlated by inner = outer equalities AND-ed into their
//     WHERE to the same joins, keyed by the correlation columns, and
//     correlated aggregates to a Reduce by those columns whose missing
//     keys get the aggregates of an empty input (correlate.go);
//   - every other correlated subquery (any predicate, outer columns in
//     its select list or FROM subqueries, GROUP BY, HAVING, DISTINCT,
//     LIMIT or set operations inside, references several levels out) by
//     general decorrelation (apply.go): the subquery is planned against
//     D, the distinct values of the outer columns it names, joined into
//     its FROM and carried as leading keys through its grouping,
//     DISTINCT, set operations and LIMIT (a TopK per key), a global
//     aggregate getting its one row per key of D; the outer rows then
//     join its result on those keys, NULLs matching. The outer relation
//     and what the attachment reads twice are bound in Lets, so nesting
//     adds to the plan rather than multiplying it (sharedrel.go);
//   - an aggregate in a subquery whose arguments name only the enclosing
//     level's columns to an aggregate of that level, read by the
//     subquery by a name its output carries (outeragg.go); a subquery
//     in GROUP BY to a column attached to the aggregated input, named
//     again by the select list through its text (subquery_groupby.go);
//   - window function calls to Window nodes after the aggregation, one
//     per distinct PARTITION BY / ORDER BY, their arguments and keys
//     computed into columns first; the outputs are lowered in a second
//     pass over the Window's output (window.go);
//   - a set-returning call in the select list to a FlatMap over the
//     rows after aggregation and windows, one per level of calls nested
//     in one another's arguments, the outputs lowered again over each
//     (srf.go); x LIKE ANY (S) (and ~, @> ...) to x LIKE ANY (ARRAY(S))
//     (like_any.go);
//   - LATERAL subqueries in FROM like correlated subqueries, against the
//     distinct values of the left-hand columns they name (lateral.go);
//   - DISTINCT ON to a TopK with limit 1 per DISTINCT ON group, in
//     ORDER BY order;
//   - DISTINCT to Distinct; UNION [ALL], EXCEPT [ALL] and INTERSECT [ALL]
//     to Union, Negate, Threshold and Distinct;
//   - ORDER BY / LIMIT / OFFSET of the outermost query to a Finishing
//     applied to the result, and inside subqueries to TopK.
//
// The lowered plan is then rewritten (finalPlan): every cluster of inner
// joins gets its single-table predicates applied below the joins, its
// column = column equalities as join keys and a greedy join order
// (joinorder.go, joinbuild.go), filters above outer joins reduce them
// (LEFT to INNER, FULL to LEFT/RIGHT/INNER) when they reject the padded
// side's NULLs and filter a side that is never padded below the join
// (outerpush.go, which rebuilds the outer join the lowering recorded),
// and `WHERE rn <= k` over row_number()
// puts a TopK under the Window (windowtopk.go). These rewrites copy the
// nodes they change (plans share subtrees) and leave the output columns
// as they were.
//
// A top-level query that is a map/filter/project of one collection with
// an index on the session's cluster becomes a FastPath: a key lookup when
// the filter fixes every key column to literals (= or IN), otherwise a
// scan of the index.
//
// Integers are 64-bit in the engine, but every integer expression and
// column carries its SQL width (IntWidth: smallint, integer or bigint,
// from declared column types, casts and Postgres' promotion rules, with
// integer literals that fit 32 bits typed integer). Where Postgres
// computes or stores a smallint or integer — casts, arithmetic, abs,
// INSERT/UPDATE of such a column — the planner wraps the value in
// expr's int2/int4 range check, so out-of-range results fail with 22003
// as in Postgres. A width that is not known is bigint: losing one can
// only omit a check, never add one Postgres does not make.
//
// Date/time (datetime.go): casts to and from timestamptz, timestamptz
// literals and timestamptz ± interval are lowered to expr functions that
// take the session's TimeZone (SessionInfo.TimeZone) as an argument;
// mixed date/timestamp/timestamptz operands are promoted along that
// order; an untyped literal added to a date/time is an interval. now()
// and the current_* functions fold to literals of SessionInfo.Now. When
// Planner.Maintained says the plan is a view, index, materialized view or
// SUBSCRIBE, a WHERE conjunct comparing a row expression with now()
// becomes a bound of a plan.TemporalFilter (temporal.go) and every other
// use is refused with 0A000 naming that rule (docs/design/time.md).
//
// Likewise every value carries a TypeMod (typemod.go): varchar(n),
// char(n) and numeric(p,s) from declared columns (TableTypeMods) and
// casts, and numeric display scales from literals and + - * %, round,
// sum, min and max. Assignment to a column and explicit casts apply the
// length and scale rules through expr's varchar/bpchar/numeric_typmod
// functions; the query's output widths and modifiers
// (Query.ColumnTypes) choose RowDescription's OID and typmod and format
// numerics with their scale and char(n) with its padding. A view read
// from its index gets the widths and modifiers its query gives its
// columns (Relation.IntWidths and TypeMods, which the SQL layer derives
// once per definition; indexedViewScope plans the query apart only when
// the catalog does not give them), so that it is described as the same
// view read without an index. A date/time
// precision (timestamp(3)) is not a TypeMod: a cast with one rounds the
// value (time_precision).
//
// WITH RECURSIVE's SEARCH and CYCLE clauses become columns the recursion
// computes, as PostgreSQL 15 rewrites them (searchcycle.go), holding
// record values: ROW(...) lowers to a record (records.go), compared as
// record_cmp; a row constructor compared with a row constructor, a list
// of them or a subquery is expanded into scalar comparisons with
// PostgreSQL's field-by-field NULL rules (rowcompare.go, rowsublink.go).
//
// Anything else (named windows, ...) fails with 0A000 naming the
// feature.
// literals and avg() are float8: Tandem has no exact numeric type.
package planner
