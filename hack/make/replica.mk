# Compute protocol code generation and replica checks (engineer E).
.PHONY: generate-proto check-generate-proto

generate-proto:
	bash hack/generate-proto.sh

# Regenerates the protocol code and fails when the committed code differs.
check-generate-proto: generate-proto
	@git diff --exit-code -- pkg/compute/protocol/computepb || \
		{ echo "check-generate-proto: generated code is stale; run 'make generate-proto'" >&2; exit 1; }
	@untracked="$$(git ls-files --others --exclude-standard -- pkg/compute/protocol/computepb)"; \
		if [ -n "$$untracked" ]; then echo "check-generate-proto: untracked generated files: $$untracked" >&2; exit 1; fi

EXTRA_TESTS += check-generate-proto
