# Kubernetes: ComputeReplica API, operator, chart and their tooling (engineer F).
# hack/kube-tools.sh builds the Kubernetes binaries into a cache outside the repository
# (TANDEM_TOOLS_CACHE, default ~/.cache/tandem-tools): 5-10 minutes cold, about a second warm.
.PHONY: kube-tools generate-k8s check-generate-k8s test-chart test-k8s test-k8s-sim

kube-tools:
	bash hack/kube-tools.sh >/dev/null

generate-k8s:
	bash hack/kube-generate.sh

check-generate-k8s:
	bash hack/kube-generate.sh --check

# helm lint, golden renders and schema checks of charts/tandem. promtool (hack/promtool.sh,
# Debian's prometheus package) checks the alert rules. TestChartOnHost runs what the chart
# renders as host processes (the three binaries, against envtest's etcd and kube-apiserver)
# and connects with Debian's psql (hack/postgres.sh).
test-chart: build-operator
	bash hack/promtool.sh >/dev/null
	bash hack/postgres.sh >/dev/null
	$(TEST_BIN_ENV) TANDEM_KUBE_BIN="$$(bash hack/kube-tools.sh etcd kube-apiserver helm)" TANDEM_PROMTOOL_REQUIRED=1 \
		$(GO) test -count=1 -tags k8s -timeout 10m ./charts/...

# The operator beside the controller and replica in $(BIN), for the tests that run all three.
.PHONY: build-operator
build-operator: build-controller
	$(GO) build -o $(BIN)/ ./cmd/operator

# The suites tagged k8s start a real kube-apiserver and etcd (envtest) from the cache. The
# cmd/controller one runs the operator and the controller together (its other tests run in
# `make test`); charts/tandem/tests' TestChartOnHost runs the rendered chart on the host
# (about 30 s).
test-k8s: check-generate-k8s build-operator
	bash hack/promtool.sh >/dev/null
	bash hack/postgres.sh >/dev/null
	$(TEST_BIN_ENV) TANDEM_KUBE_BIN="$$(bash hack/kube-tools.sh etcd kube-apiserver helm)" TANDEM_PROMTOOL_REQUIRED=1 \
		$(GO) test -count=1 -tags k8s -timeout 20m ./operator/... ./charts/... ./pkg/orchestrator/kubernetes/...
	$(TEST_BIN_ENV) TANDEM_KUBE_BIN="$$(bash hack/kube-tools.sh etcd kube-apiserver)" \
		$(GO) test -count=1 -tags k8s -timeout 10m -run '^TestKubernetes' ./cmd/controller/

EXTRA_TESTS += test-k8s

# The operator's end-to-end suite (operator/e2e, build tag k8ssim) on a simulated cluster
# of its own (hack/kube-sim.sh run: etcd, API server, controller-manager, scheduler and kwok
# on loopback, in a private state directory and port range so that a developer's cluster is
# left alone), torn down however the suite ends. About 4-5 minutes warm on a loaded
# machine, of which the read scenario takes about a minute (40 s of it building
# cmd/controller and cmd/replica).
KUBE_SIM_TEST_DIR ?= /tmp/tandem-kube-sim-test
KUBE_SIM_TEST_PORT ?= 27443
test-k8s-sim: build-controller
	bash hack/kube-tools.sh etcd kube-apiserver kube-controller-manager kube-scheduler kwok kubectl helm >/dev/null
	$(TEST_BIN_ENV) TANDEM_KUBE_SIM_DIR=$(KUBE_SIM_TEST_DIR) TANDEM_KUBE_SIM_PORT=$(KUBE_SIM_TEST_PORT) \
		bash hack/kube-sim.sh run $(GO) test -count=1 -tags k8ssim -timeout 15m -v ./operator/e2e/

EXTRA_TESTS += test-k8s-sim

# Only the read scenario of that suite (helm install, the operators, then reads through a
# controller and replica processes on the host while a node drains and an image rolls), to
# measure the reads' latencies; it prints p50/p99 per phase. Not part of `make test`, which
# runs the same step inside test-k8s-sim.
.PHONY: test-k8s-sim-reads
test-k8s-sim-reads:
	bash hack/kube-tools.sh etcd kube-apiserver kube-controller-manager kube-scheduler kwok kubectl helm >/dev/null
	TANDEM_KUBE_SIM_DIR=$(KUBE_SIM_TEST_DIR) TANDEM_KUBE_SIM_PORT=$(KUBE_SIM_TEST_PORT) \
		bash hack/kube-sim.sh run $(GO) test -count=1 -tags k8ssim -timeout 15m -v \
		-run 'TestSimulatedCluster/^(HelmInstall|ChartRBAC|StartOperators|ReadsThroughDrainAndRoll)$$' ./operator/e2e/
