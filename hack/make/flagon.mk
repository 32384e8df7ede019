# The tests that run a controller with replicas, again with
# enable_compute_interactive_dataflows on (issue 6: the suite passes with
# the flag on and off; `make test` runs them with it off). The parameters
# reach every such test through TANDEM_TEST_SYSTEM_PARAMETERS, read by
# pkg/compute/controller/testparams; TestOneShotReadRunsWhereTheFlagSays
# and TestSystemParametersFromEnvironment fail if a run ignores it.
# Not repeated here because `make test` already runs them both ways:
# TestReadsDuringHydration (its two arms set the flag themselves), the
# replica scripts (cmd/replica TestScripts) and the SQL oracle against the
# real system (test-oracle-controller).
.PHONY: test-flag-on

FLAG_ON_PARAMETERS ?= enable_compute_interactive_dataflows=on

test-flag-on: build-controller
	$(TEST_BIN_ENV) TANDEM_TEST_SYSTEM_PARAMETERS=$(FLAG_ON_PARAMETERS) $(GO) test -count=1 -race -timeout 15m ./pkg/compute/controller/... ./pkg/environment/...
	$(TEST_BIN_ENV) TANDEM_TEST_SYSTEM_PARAMETERS=$(FLAG_ON_PARAMETERS) $(GO) test -count=1 -timeout 15m -skip '^TestReadsDuringHydration$$' ./cmd/controller/

EXTRA_TESTS += test-flag-on
