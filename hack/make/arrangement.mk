# Arrangement engine (batch, spine, trace, loadgen) benchmarks (engineer A).
# `make bench-arrangement` runs the 1M-update benchmarks; set BIG=1 for the
# 10M-update runs recorded in docs/benchmarks-engine.md (one iteration each).
.PHONY: bench-arrangement

ARRANGEMENT_PKGS := ./pkg/compute/batch ./pkg/compute/trace ./pkg/compute/loadgen

bench-arrangement:
ifeq ($(BIG),1)
	TANDEM_BENCH_BIG=1 $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 60m $(ARRANGEMENT_PKGS)
else
	$(GO) test -run '^$$' -bench . -benchtime 3x $(ARRANGEMENT_PKGS)
endif
