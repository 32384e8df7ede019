# SQLite's sqllogictest corpus (hack/slt, driven by hack/slt.sh). The corpus
# is not part of the repository: SLT_CORPUS points at it, and the targets
# skip with a message when it is absent.
#   make slt           every select and index script against Tandem, a fresh
#                      controller per script, and the summary table
#   make slt-postgres  the same against a throwaway PostgreSQL, to check the
#                      runner reproduces PostgreSQL's counts (corpus README)
#   make test-slt      a bounded run for `make test`: fails on a wrong result,
#                      never on a refused (unsupported) statement
# Runner flags: SLT_FLAGS='--show-errors=5 --json=/tmp/slt.json', written
# --flag=value.
.PHONY: slt slt-postgres test-slt

# Empty: hack/slt.sh looks for ../shared/sqllogictest from the repository
# root (or from the main checkout of a linked worktree).
SLT_CORPUS ?=
SLT_FILES ?= select/select1.test select/select2.test select/select3.test select/select4.test select/select5.test index
SLT_FLAGS ?=
SLT_TEST_FILES ?= select/select1.test index/commute-10-0.test

slt:
	SLT_CORPUS='$(SLT_CORPUS)' bash hack/slt.sh tandem $(SLT_FLAGS) $(SLT_FILES)

slt-postgres:
	SLT_CORPUS='$(SLT_CORPUS)' bash hack/slt.sh postgres $(SLT_FLAGS) $(SLT_FILES)

test-slt: build-controller
	$(TEST_BIN_ENV) SLT_CORPUS='$(SLT_CORPUS)' bash hack/slt.sh tandem --fail-on-wrong --timeout=60s --progress=0 $(SLT_FLAGS) $(SLT_TEST_FILES)

EXTRA_TESTS += test-slt
