# Benchmark suite (engineer I): hack/bench, docs/benchmarks.md.
# Not part of `make test`: it starts processes, takes minutes and its
# numbers depend on the machine. The harness's own unit tests run under
# `go test ./hack/bench/...`, which `make test` already covers.
.PHONY: bench bench-full

BENCH_SCENARIOS ?= isolation routing postgres temporary memory scans skew subscribe adhoc
BENCH_OUT ?= .bench

# Every scenario with --quick (under 15 minutes on a 2-core machine). A
# scenario that fails (e.g. a feature the system lacks) does not stop the
# others; the target fails at the end, naming them.
bench:
	@failed=""; for s in $(BENCH_SCENARIOS); do \
		echo "== bench $$s (--quick)" >&2; \
		$(GO) run ./hack/bench $$s --quick --out $(BENCH_OUT) || failed="$$failed $$s"; \
	done; \
	if [ -n "$$failed" ]; then echo "bench: failed:$$failed" >&2; exit 1; fi

# The full run behind docs/benchmarks.md (longer phases, three repeats);
# its figures go to docs/bench/.
bench-full:
	@failed=""; for s in $(BENCH_SCENARIOS); do \
		echo "== bench $$s" >&2; \
		$(GO) run ./hack/bench $$s --out docs/bench || failed="$$failed $$s"; \
	done; \
	if [ -n "$$failed" ]; then echo "bench: failed:$$failed" >&2; exit 1; fi
