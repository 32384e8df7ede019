# Rows, expressions and the plan IR (engineer B): short fuzz runs of the
# decoders on top of the seed corpora that `go test` already replays.
.PHONY: fuzz-ir
FUZZTIME ?= 5s

fuzz-ir:
	$(GO) test -run '^$$' -fuzz '^FuzzUnpack$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 0 ./pkg/compute/row
	$(GO) test -run '^$$' -fuzz '^FuzzUnpackUsed$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 0 ./pkg/compute/row
	$(GO) test -run '^$$' -fuzz '^FuzzParseDateTime$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 0 ./pkg/compute/row
	$(GO) test -run '^$$' -fuzz '^FuzzParseJSON$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 0 ./pkg/compute/row
	$(GO) test -run '^$$' -fuzz '^FuzzExprJSON$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 0 ./pkg/compute/expr
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeDataflow$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 0 ./pkg/compute/plan
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeDataflow$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 0 ./pkg/compute/protocol
	$(GO) test -run '^$$' -fuzz '^FuzzDecodePeek$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 0 ./pkg/compute/protocol
	$(GO) test -run '^$$' -fuzz '^FuzzReadFrame$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 0 ./pkg/compute/peeklane

FUZZ_TARGETS += fuzz-ir
