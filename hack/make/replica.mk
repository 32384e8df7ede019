# Compute protocol code generation and replica checks (engineer E).
.PHONY: generate-proto check-generate-proto bench-replica

# Regenerates pkg/compute/protocol/computepb from compute.proto and plan.proto.
generate-proto:
	bash hack/generate-proto.sh

# Regenerates the protocol code into a scratch directory and fails when it
# differs from the committed code (doc.go, written by hand, excepted).
check-generate-proto:
	@tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	bash hack/generate-proto.sh "$$tmp" && \
	diff -r -x doc.go "$$tmp" pkg/compute/protocol/computepb || \
		{ echo "check-generate-proto: generated code is stale; run 'make generate-proto'" >&2; exit 1; }

# Point-lookup peek round trip through gRPC on loopback (p50/p99), see
# docs/benchmarks-replica.md.
bench-replica:
	$(GO) test -run '^$$' -bench PointLookupPeek -benchtime 5000x ./cmd/replica

EXTRA_TESTS += check-generate-proto
