// Package reference is a naive evaluator of the plan IR, the oracle the
// engine's property tests compare against. It is written to be obviously
// correct, not fast: collections are plain maps from encoded row to
// multiplicity, every operator is a loop over whole collections, integer
// sums use math/big.
//
// Time. Every plan operator commutes with accumulation, so a collection
// as of t is computed by evaluating the plan over the inputs accumulated
// as of t (AsOf). Evaluate therefore takes inputs already accumulated and
// knows nothing of frontiers; Constant rows exist at the dataflow's as_of
// and so at every time a read may ask about. Until is not modelled. The
// one operator that does not commute with accumulation, TemporalFilter,
// needs the read's time: EvalPlanAt evaluates its bounds with now() = t.
// (Evaluate does not take one and refuses temporal filters.)
//
// Semantics, matching the engine's render layer:
//   - Mfp, join keys, reduce keys and aggregate arguments, and index export
//     keys are evaluated with package expr (SQL three-valued logic); a row
//     whose evaluation fails contributes its multiplicity to the error
//     collection as ErrorRow(err) = (SQLSTATE, message) instead of a row.
//     Group key expressions are evaluated before aggregate arguments, and
//     the first error wins.
//   - Every operator passes its inputs' errors through unchanged; Negate
//     does not negate errors.
//   - Join matches keys as encoded rows (NULL matches NULL) and outputs
//     left ++ right with the product multiplicity.
//   - Reduce: a group exists when some argument tuple has non-zero
//     multiplicity; a negative one is error XX000 ("reduce: negative
//     multiplicity in input"); otherwise one row key ++ aggregates, the
//     first failing aggregate's error (e.g. 22003 "bigint out of range in
//     sum") replacing it. Aggregates: count(*) counts rows, count(x) non-null
//     x, sum/min/max/avg ignore NULLs and are NULL without non-null input,
//     DISTINCT collapses equal arguments; int64 sums are exact and
//     range-checked at the end, avg is float64(sum)/float64(count), float
//     sums add value*multiplicity in ascending value order (the engine's
//     definition of a deterministic float sum); string_agg sorts the
//     expanded rows by its ORDER BY, value and separator and joins them;
//     float variances divide the exact sum of squared deviations from
//     the exact mean (aggregate_more.go).
//   - Distinct outputs rows with positive multiplicity once (negative:
//     error XX000 "distinct: negative multiplicity in input", once per
//     row); Threshold keeps positive multiplicities; TopK orders each
//     group by its columns (NULLs first unless NullsLast), ties by encoded
//     row, and keeps positions [offset, offset+limit) counting
//     multiplicities (negative: one error XX000 per group); Window
//     expands each partition's multiplicities, orders it as TopK does
//     and computes every function from its definition at every position
//     (rank by counting rows ordered before, frames by testing every
//     row), independently of the operator's peer-group arithmetic.
//   - Let evaluates its value once into a copy of the environment in
//     which its body is evaluated (eval.go); a Let in a recursive step is
//     expanded first (plan.ExpandLets).
//   - Recursive iterates as PostgreSQL does (recursive.go): the working
//     table starts as the base (distinct for UNION), each round evaluates
//     the step over it with the binding set to it, the rows it adds
//     (UNION: new distinct rows only) become the next working table. The
//     step's subtrees that do not read the binding are evaluated once and
//     their errors pass through; an error elsewhere in the step, a
//     negative multiplicity or more than MaxIterations rounds make the
//     output one error (the smallest of the first failing round, or
//     LimitError) and no rows.
//   - An index export holds its collection's rows; rows whose export key
//     fails to evaluate are errors of the index.
//
// A read of a collection reports an error when some error row has positive
// multiplicity (Result.Errs).
package reference
