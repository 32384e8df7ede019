# Worker runtime, rendering, peeks and introspection (engineer D).
.PHONY: bench-runtime fuzz-runtime

RUNTIME_PKGS := ./pkg/compute/runtime/... ./pkg/compute/render/... ./pkg/compute/peek/... ./pkg/compute/logging/...

# Arrange throughput through the runtime (1 and 2 workers) and point-lookup
# peek latency; results are recorded in docs/benchmarks-runtime.md.
bench-runtime:
	$(GO) test -run '^$$' -bench 'Arrange' -benchtime 3x ./pkg/compute/render/
	$(GO) test -run '^$$' -bench 'PeekPointLookup' -benchtime 2000x ./pkg/compute/runtime/

# Short fuzz run of the cross-process exchange message decoder.
FUZZTIME ?= 5s
fuzz-runtime:
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeWire$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 0 ./pkg/compute/runtime/dataflow

FUZZ_TARGETS += fuzz-runtime
