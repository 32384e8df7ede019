# Controller targets (engineer G). `make run-controller` builds the controller
# and replica binaries and starts the embedded default: the controller with a
# data directory under ./data, replicas as local child processes.
.PHONY: build-controller run-controller test-controller

CONTROLLER_DATA_DIR ?= data
CONTROLLER_LOG_LEVEL ?= info

build-controller:
	$(GO) build -o $(BIN)/ ./cmd/controller ./cmd/replica

run-controller: build-controller
	@mkdir -p $(CONTROLLER_DATA_DIR)
	$(BIN)/controller --data-dir=$(CONTROLLER_DATA_DIR) --replica-binary=$(BIN)/replica --log-level=$(CONTROLLER_LOG_LEVEL)

# The controller's packages under the race detector: they are the ones with
# the most goroutines (replica connections, orchestrator supervisors).
test-controller:
	$(GO) test -count=1 -race ./pkg/orchestrator/... ./pkg/catalog/... ./pkg/storage/... ./pkg/compute/controller/... ./pkg/environment/... ./cmd/controller/...
