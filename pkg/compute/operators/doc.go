// Package operators holds the logic of the engine's stateful differential
// operators for a totally ordered time, independent of any runtime: the
// render layer calls these functions when an operator's input frontier
// advances from f0 to f1, handing over the input arrangements' immutable
// batches split at f0, and feeds what they emit into its output batches.
//
// Contract of a step. For each input arrangement the caller passes
//   - old: every batch with upper <= f0. Logical compaction may have
//     advanced their times, but only to a since <= f0, so accumulating them
//     gives the input's state just before the step;
//   - fresh: the batches covering [f0, f1); every update time t has
//     f0 <= t < f1.
//
// The functions emit the change of the operator's output over [f0, f1)
// through an Emit callback (row, time, diff), and errors through EmitErr.
// They keep no state between calls: the previous output is recomputed from
// the old input state, so an operator's only state is its input traces
// (whose holds the caller keeps at f0 until the step is done). They read
// batches only, so any number of workers may run them concurrently on
// their own shards; a GroupLogic value holds scratch buffers and belongs to
// one operator instance on one worker.
//
// Operators:
//   - Join(JoinInput, Emit): inner equi-join of two arrangements keyed by
//     the join key, values the whole rows. Output ΔL ⋈ R(old) + (L(old) +
//     ΔL) ⋈ ΔR, each pair at max(tl, tr) with diff dl*dr, row l ++ r. The
//     two inputs may be cut at different frontiers (each at its own upper:
//     a cut at the meet of the uppers could straddle a batch of the input
//     that ran ahead); their old batches may be compacted up to the meet of
//     the two cuts.
//   - ReduceGroups(old, fresh, GroupLogic, Emit, EmitErr): for every key with
//     fresh updates, accumulate its old state, then for each distinct fresh
//     time in ascending order apply that time's updates, recompute the
//     group's output and emit the difference at that time. The group logics:
//     AggregateLogic (GROUP BY with count(*), count, sum, min, max, avg,
//     string_agg, concat_agg (array_agg, ordered jsonb_agg),
//     var_pop/var_samp/stddev_pop/stddev_samp of floats and
//     DISTINCT variants; input keyed by the group key, values rows of the
//     aggregates' argument columns; output key ++ aggregates), DistinctLogic
//     and ThresholdLogic (input keyed by the whole row, empty values),
//     TopKLogic (input keyed by the group key, values the whole rows),
//     WindowLogic (input keyed by the partition key, values the whole
//     rows; output each row, once per multiplicity, ++ its window
//     functions' values; the partition is recomputed when it changes).
//   - JoinBounded and ReduceGroupsBounded: the same steps in slices. A call
//     stops at the end of the key at which its work (updates emitted plus
//     one per key walked) has reached its limit and records the next key in
//     a Progress; the next call with the same inputs seeks there. A join
//     also stops between two pairs of one key (a skewed key's product);
//     ReduceGroupsBounded never splits a group, whose output is a function
//     of the whole group. Keys are independent, so the slices together
//     are exactly the unbounded step's output (bounded.go).
//   - ReduceGroupsResumable(old, fresh, GroupEval, ...): ReduceGroups in
//     slices that may stop inside a group, keeping the group's partial
//     state in the Progress: its old state and fresh changes are gathered
//     by merging the batches' cursors by value, each time's changes merged
//     in, and the group evaluated through a GroupEval, which does a budget
//     of work per Step (AggregateEval folds the aggregates that can be
//     folded in value order, WholeGroup runs any GroupLogic in one Step).
//     A group's change at a time is emitted only once its evaluation is
//     complete (groupresume.go, groupeval.go).
//   - Negate(Emit) Emit: the stateless negation; Union is two inputs
//     emitting into one Emit; Mfp is expr's job.
//
// SQL semantics. sum, min, max and avg ignore NULLs and are NULL when no
// non-null argument remains; count(x) counts non-null arguments, count(*)
// rows. Integer sums are exact (128-bit) and an int64 result out of range is
// error 22003, delivered through EmitErr and retracted when the group
// changes back, never a panic. avg is float64(sum)/float64(count); float
// sums add value*multiplicity in ascending value order, so they are a
// deterministic function of the group's multiset. A group with no rows has
// no output row: the row of a global aggregate over an empty input (count
// 0, others NULL) is the SQL layer's to add. A negative multiplicity in the
// input of Reduce, Distinct or TopK is error XX000 (the plan promised a
// collection); Threshold exists to drop such rows. string_agg orders its
// values by its ORDER BY, then by value and separator, concat_agg its
// arguments by its ORDER BY, then by value, and the float
// variances sum x and x² exactly (math/big) before one rounding, so these
// too depend only on the group's multiset (stringagg.go, concatagg.go,
// variance.go).
//
// Worked example: SELECT k, count(*), sum(v) ... GROUP BY k, arranged by k
// with values Pack(v). Before the step the trace holds (k=a, v=1)@1 +1 and
// (a, 2)@3 +1 in old batches; the fresh batch [5, 10) holds (a, 4)@5 +1 and
// (a, 1)@7 -1.
//
//	logic := operators.AggregateLogic([]operators.Aggregate{
//		{Func: operators.AggCountStar}, {Func: operators.AggSum, Column: 0}})
//	operators.ReduceGroups(old, fresh, logic, emit, emitErr)
//
// The old state of key a is {1, 2}, whose output is (a, 2, 3). At time 5 the
// state becomes {1, 2, 4}: emit (a, 2, 3)@5 -1 and (a, 3, 7)@5 +1. At time 7
// it becomes {2, 4}: emit (a, 3, 7)@7 -1 and (a, 2, 6)@7 +1. Keys without
// fresh updates emit nothing.
//
// Cost. A touched key's old history is read once per step (batches are
// sorted, so finding it is a seek per batch), and a group's logic runs once
// per distinct fresh time over the whole group: O(group size) per changed
// time. That is the right shape for many small groups; very large groups
// with frequent changes would want accumulations kept in an arrangement of
// their own, which this package does not do yet.
package operators
