# Tandem. `make run` starts the embedded default; `make test` is the test command.
# Feature areas add their own targets in hack/make/*.mk and append to EXTRA_TESTS.
SHELL := /bin/bash
GO ?= go
export GOFLAGS ?= -buildvcs=false
BIN := bin
# Packages with shared state run under the race detector in CI.
RACE_PKGS ?= ./pkg/...
EXTRA_TESTS :=
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

test-unit:
	$(GO) test -count=1 -timeout 20m ./...

test-race:
	$(GO) test -count=1 -race -timeout 30m $(RACE_PKGS)

-include hack/make/*.mk

# The embedded default: controller plus local replica processes.
run: run-controller

# Regenerates every generated file (protobuf, deepcopy, CRD YAML).
generate: generate-proto generate-k8s

test: vet test-unit test-race $(EXTRA_TESTS)

fuzz: $(FUZZ_TARGETS)

clean:
	rm -rf $(BIN)
