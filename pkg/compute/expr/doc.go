// Package expr is Tandem's scalar expression language: the trees the SQL
// layer compiles WHERE clauses, SELECT lists, join keys and group keys to,
// and the evaluator the dataflow operators run per row.
//
// Expr is one struct (a tagged union on Op) so plans serialise to JSON
// without wrappers. Leaves are Column(i) and Literal(d); OpCall applies a
// Func (arithmetic with overflow checks, comparisons, string and math
// functions); And, Or, If/Case, Coalesce, In, Cast and IsNull have their
// SQL rules. Expr.Eval(datums) computes a value; Expr.Type(columnTypes)
// infers the result type and checks the tree, so a plan can be validated
// before it runs.
//
// Invariants:
//   - Evaluation never panics, on any tree and any input: failures are
//     *EvalError values carrying a SQLSTATE (22012 division by zero, 22003
//     out of range, 22P02 bad text input, 42883 no such function, XX000
//     malformed tree). Dataflows turn them into error collections.
//   - SQL three-valued logic: strict functions map NULL to NULL; AND is
//     false if any argument is false (even if another errors), else NULL
//     if any is NULL; OR dually; a NULL CASE condition takes ELSE.
//   - A column's datums all have the column's type: int64 op float64
//     yields float64 at run time exactly when Type says so, and branch
//     types of CASE/COALESCE must agree exactly (the SQL layer casts).
//   - float64 arithmetic reports overflow and underflow like Postgres
//     float8; int64 arithmetic reports overflow ("bigint out of range").
//     int2(x) and int4(x) range-check values the SQL layer types as
//     smallint or integer, with Postgres' messages.
//   - Expressions are pure functions of their inputs: nothing reads the
//     clock or the session. Date/time functions that depend on a time
//     zone (timezone, timestamptz_in/_out, tz_plus, and date_part,
//     date_trunc, to_char, age of a timestamptz) take the zone as a text
//     argument, which the SQL layer fills with the session's TimeZone;
//     CastDatum reads timestamptz in UTC. Date/time arithmetic and
//     functions follow Postgres (datetime.go, datetime_funcs.go,
//     datetime_make.go, tochar.go); intervals compare by length, so
//     '1 mon' = '30 days' (see pkg/compute/row/doc.go).
//   - numeric arithmetic (numeric.go) is exact for + - *, and / follows
//     Postgres' select_div_scale, rounding half away from zero (as do
//     round, casts to integers and numeric_typmod); NaN and the
//     infinities follow Postgres' rules rather than apd's. int64 with
//     numeric computes in numeric, float64 with numeric in float64.
//   - ln, log, exp and power of numerics round once to Postgres' result
//     scale (numeric_math.go); numeric_var is the variance/stddev of a
//     group from its count and exact sums (numeric_var.go).
//   - Text functions count characters, not bytes (text_funcs.go,
//     format.go); regular expressions run on RE2 with '.' matching a
//     newline as in Postgres, and Postgres syntax RE2 lacks
//     (backreferences, lookaround) is 2201B (regexp.go).
//   - varchar/bpchar(_assign) apply varchar(n) and char(n) (math.go):
//     an assignment fails with 22001 unless the excess is spaces;
//     char(n) values drop their trailing spaces.
//
// jsonb operators and functions (jsonb.go) follow PostgreSQL 15; a
// TableCall (tablefunc.go) is a table function of argument expressions
// (generate_series, jsonb_array_elements(_text), jsonb_each(_text),
// regexp_split_to_table, generate_subscripts, json(b)_to_record(set)),
// strict unless it takes NULLs (json(b)_to_record(set), jsonrecord.go),
// checked against its argument types before it runs, and bounded to
// MaxTableFuncRows rows per call (54000 beyond). rows_from
// (rows_from.go) runs several calls in lockstep, padding with NULLs,
// its calls encoded in its arguments so that it travels as any call;
// TableCall.Prepare decodes them once for a FlatMap's input rows.
//
// MFP{Expressions, Predicates, Projection} fuses map, filter and project;
// MFP.Evaluate applies it to one row with a reusable Scratch, and
// MFP.Prepare checks it once against an input arity for per-row loops.
package expr
