# Engine operators, reference evaluator and property tests (engineer D2).
.PHONY: test-engine-properties bench-operators

# The engine's property tests (operators vs recomputation, reference vs
# operators, runtime vs reference) with more cases than `go test` runs.
ENGINE_PROPERTY_CHECKS ?= 3000
test-engine-properties:
	$(GO) test -count=1 -run 'MatchesReference|MatchesRecomputation|AgreesWithOperators|CompactionPreservesReads' \
		./pkg/compute/operators/ ./pkg/compute/reference/ ./pkg/compute/enginetest/ \
		-rapid.checks=$(ENGINE_PROPERTY_CHECKS)

# Reduce and join throughput; results are recorded in docs/benchmarks-operators.md.
bench-operators:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./pkg/compute/operators/

EXTRA_TESTS += test-engine-properties
