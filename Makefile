# Tandem. `make run` starts the embedded default; `make test` is the test command.
# Feature areas add their own targets in hack/make/*.mk and append to EXTRA_TESTS.
SHELL := /bin/bash
GO ?= go
export GOFLAGS ?= -buildvcs=false
BIN := bin
# Packages with shared state run under the race detector in CI.
RACE_PKGS ?= ./pkg/...
# Race-run packages left to a target of their own: the SQL oracle needs
# PostgreSQL, so test-sql-oracle runs it under -race after installing it.
RACE_ELSEWHERE := github.com/tandemdb/tandem/pkg/sql/oracle
EXTRA_TESTS :=
# Property tests (pgregory.net/rapid) draw from this seed in every test
# target, so `make test` checks the same cases on every run and a red CI is
# never a new random draw; `make test-properties-random` draws fresh seeds
# with more cases (docs/testing.md). RAPID_SEED=0 here draws at random.
export RAPID_SEED ?= 20261202
# The test targets that run the controller or replica as processes depend
# on build-controller and pass its binaries to the tests in
# TANDEM_TEST_BIN_DIR: one build per make invocation instead of one per test
# binary and script (each links two large binaries). Run by hand, the tests
# build their own.
TEST_BIN_ENV = TANDEM_TEST_BIN_DIR=$(CURDIR)/$(BIN)
# Fuzzing campaigns (go test -fuzz): run by `make fuzz`, not by `make test`,
# because a time-boxed campaign is not deterministic. `make test` replays
# every fuzz target's seed corpus (testdata/fuzz) as ordinary tests.
FUZZ_TARGETS :=

.PHONY: all build test test-unit test-race vet run generate bench clean fuzz
all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

vet:
	$(GO) vet ./...
	@unformatted="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
		if [ -n "$$unformatted" ]; then echo "gofmt needed:" $$unformatted >&2; exit 1; fi

# Every package once: a package test-race runs (RACE_PKGS) is left out here
# unless its tests differ without the detector (hack/unit-pkgs.sh says
# which), since running the same tests again without -race checks nothing
# more (docs/testing.md).
test-unit: build-controller
	pkgs="$$(GO=$(GO) bash hack/unit-pkgs.sh $(RACE_PKGS))" && \
		$(TEST_BIN_ENV) $(GO) test -count=1 -timeout 20m $$pkgs

test-race: build-controller
	pkgs="$$($(GO) list $(RACE_PKGS))" && \
		$(TEST_BIN_ENV) $(GO) test -count=1 -race -timeout 30m $$(grep -vxF '$(RACE_ELSEWHERE)' <<<"$$pkgs")

-include hack/make/*.mk

# The embedded default: controller plus local replica processes.
run: run-controller

# Regenerates every generated file (protobuf, deepcopy, CRD YAML).
generate: generate-proto generate-k8s

test: vet test-unit test-race $(EXTRA_TESTS)

fuzz: $(FUZZ_TARGETS)

clean:
	rm -rf $(BIN)
