# Kubernetes: ComputeReplica API, operator, chart and their tooling (engineer F).
# hack/kube-tools.sh builds the Kubernetes binaries into a cache outside the repository
# (TANDEM_TOOLS_CACHE, default ~/.cache/tandem-tools): 5-10 minutes cold, about a second warm.
.PHONY: kube-tools generate-k8s check-generate-k8s test-chart test-k8s

kube-tools:
	bash hack/kube-tools.sh >/dev/null

generate-k8s:
	bash hack/kube-generate.sh

check-generate-k8s:
	bash hack/kube-generate.sh --check

# helm lint, golden renders and schema checks of charts/tandem (needs only helm).
test-chart:
	TANDEM_KUBE_BIN="$$(bash hack/kube-tools.sh helm)" \
		$(GO) test -count=1 -tags k8s -timeout 10m ./charts/...

# The suites tagged k8s start a real kube-apiserver and etcd (envtest) from the cache.
test-k8s: check-generate-k8s
	TANDEM_KUBE_BIN="$$(bash hack/kube-tools.sh etcd kube-apiserver helm)" \
		$(GO) test -count=1 -tags k8s -timeout 20m ./operator/... ./charts/... ./pkg/orchestrator/kubernetes/...

EXTRA_TESTS += test-k8s
