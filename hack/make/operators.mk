# Engine operators, reference evaluator and property tests (engineer D2).
.PHONY: test-engine-properties bench-operators

# The engine's property tests (operators vs recomputation, reference vs
# operators, runtime vs reference) with more cases than `go test` runs.
ENGINE_PROPERTY_CHECKS ?= 3000
test-engine-properties:
	$(GO) test -count=1 -run 'MatchesReference|MatchesRecomputation|AgreesWithOperators|CompactionPreservesReads' \
		./pkg/compute/operators/ ./pkg/compute/reference/ ./pkg/compute/enginetest/ \
		-rapid.checks=$(ENGINE_PROPERTY_CHECKS)

# The same property tests from fresh random seeds with ten times the cases:
# outside `make test`, whose runs use the Makefile's fixed RAPID_SEED. A
# failure prints the -rapid.seed that reproduces it.
RANDOM_PROPERTY_CHECKS ?= 30000
.PHONY: test-properties-random
test-properties-random:
	RAPID_SEED=0 $(GO) test -count=1 -timeout 60m -run 'MatchesReference|MatchesRecomputation|AgreesWithOperators|CompactionPreservesReads' \
		./pkg/compute/operators/ ./pkg/compute/reference/ ./pkg/compute/enginetest/ \
		-rapid.checks=$(RANDOM_PROPERTY_CHECKS)
	RAPID_SEED=0 $(GO) test -count=1 -timeout 60m -rapid.checks=1000 \
		$$(grep -rl 'pgregory.net/rapid' --include='*_test.go' pkg | xargs -n1 dirname | sort -u | sed 's|^|./|')

# Reduce and join throughput; results are recorded in docs/benchmarks-operators.md.
bench-operators:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./pkg/compute/operators/

EXTRA_TESTS += test-engine-properties
