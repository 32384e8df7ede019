// Package plan is the dataflow IR: what the SQL layer compiles to, what
// the controller sends (as JSON, inside the protocol) and what replicas
// render into operators.
//
//   - GlobalID: "u12" (user), "s3" (system), "t7" (transient); ParseGlobalID
//     and String are inverse and canonical; JSON uses the string.
//   - Plan: a tagged union (exactly one field set) of Get, Constant, Mfp,
//     Join (inner equi-join; output = left columns then right), Reduce
//     (output = group key then aggregates), Distinct, Threshold, Union,
//     Negate, TopK, ArrangeBy, Window (window functions per partition;
//     output = input columns then one per function; window.go), FlatMap
//     (a table function per input row; output = input columns then the
//     function's, with the input's multiplicity; flatmap.go), Recursive
//     (WITH RECURSIVE's fixed point over a local binding that only its step
//     reads; recursive.go), Let (a value bound to a local id that its body
//     reads any number of times, computed once; let.go) and TemporalFilter (rows kept while bounds
//     compared with the logical time hold, so they enter and leave as time
//     passes; temporal.go). Outer joins are lowered by the SQL layer to
//     inner joins plus Negate/Union/Distinct/Threshold. Plan.Desc
//     infers the output RelationDesc from the descs of the ids it reads
//     and reports precise errors with the path to the failing node.
//   - DataflowDescription: imports (sources, indexes), ObjectsToBuild in
//     topological order, exports (indexes, subscribe sinks), AsOf, Until
//     and Class. Validate checks all of it (unknown ids, arity and type
//     mismatches, order); Marshal/Unmarshal are its wire form, with
//     frontiers in their String form ("[5]", "[]") and unknown fields
//     rejected; Compatible decides whether a running dataflow can stand in
//     for a re-sent one during reconciliation.
//   - Finishing: ORDER BY / OFFSET / LIMIT / projection applied to a read's
//     collected rows, by replicas and the controller alike.
//
// Invariant: a DataflowDescription that passes Validate can be rendered
// without further type checks: every Get resolves, every expression
// type-checks against its input, every join key pair has identical types.
package plan
