# SQL front door: parser, planner, pgwire. The oracle suite compares
# Tandem's answers with a real PostgreSQL, installed from Debian packages
# by hack/postgres.sh and started by the test on loopback.
.PHONY: test-sql-oracle fuzz-sql

# The package's only run in `make test` (test-unit and test-race leave it
# out), hence -race and every test of it, not only TestOracle.
test-sql-oracle:
	bash hack/postgres.sh >/dev/null
	TANDEM_ORACLE_REQUIRED=1 $(GO) test -count=1 -race -timeout 20m ./pkg/sql/oracle/

# A short fuzzing run of the SQL entry point (parse, plan, execute against
# the fake backend) and of the parser alone. The first run on a machine
# compiles libpg_query with fuzzing instrumentation (minutes).
SQL_FUZZTIME ?= 20s
fuzz-sql:
	$(GO) test -run '^$$' -fuzz FuzzExecute -fuzztime $(SQL_FUZZTIME) -parallel 2 ./pkg/sql/
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime $(SQL_FUZZTIME) -parallel 2 ./pkg/sql/parse/

EXTRA_TESTS += test-sql-oracle
FUZZ_TARGETS += fuzz-sql

# The oracle suite against the real system (controller + local replicas),
# once with a single runtime per replica and once with the interactive
# runtime beside the maintenance runtime.
.PHONY: test-oracle-controller
test-oracle-controller: build-controller
	$(TEST_BIN_ENV) bash hack/oracle-controller.sh
	$(TEST_BIN_ENV) bash hack/oracle-controller.sh enable_compute_interactive_dataflows=on

EXTRA_TESTS += test-oracle-controller

# A longer run of the oracle's shapes generator (pkg/sql/oracle,
# shapes_gen_test.go) than `make test`'s: SHAPES_SEED and SHAPES_CASES
# choose the seed and the number of generated queries. Against a running
# Tandem, add TANDEM_ORACLE_ADDR=host:port.
SHAPES_SEED ?= 2
SHAPES_CASES ?= 200
.PHONY: test-sql-shapes
test-sql-shapes:
	bash hack/postgres.sh >/dev/null
	TANDEM_ORACLE_REQUIRED=1 TANDEM_ORACLE_SHAPES_SEED=$(SHAPES_SEED) TANDEM_ORACLE_SHAPES_CASES=$(SHAPES_CASES) \
		$(GO) test -count=1 -timeout 60m -run 'TestOracle$$/shapes_' ./pkg/sql/oracle/
