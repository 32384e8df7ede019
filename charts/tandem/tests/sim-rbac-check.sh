#!/usr/bin/env bash
# sim-rbac-check.sh installs the chart with operator.watchNamespaces on a simulated cluster and
# asks the API server's authorizer (kubectl auth can-i) what the operator's ServiceAccount may
# do: writes in the watched namespaces and the lease in the release namespace, nothing
# cluster-wide but reading nodes. Run from the repository root:
#   TANDEM_KUBE_SIM_DIR=/tmp/chart-rbac-sim TANDEM_KUBE_SIM_PORT=28443 \
#     bash hack/kube-sim.sh run charts/tandem/tests/sim-rbac-check.sh
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export PATH="$TANDEM_KUBE_BIN:$PATH" HELM_CONFIG_HOME=$home HELM_CACHE_HOME=$home HELM_DATA_HOME=$home
kubectl create namespace tandem >/dev/null; kubectl create namespace team-a >/dev/null; kubectl create namespace other >/dev/null
helm install tandem charts/tandem -n tandem --set operator.watchNamespaces='{tandem,team-a}' --set controller.enabled=false >/dev/null || exit 1
kubectl get networkpolicies -A --no-headers | awk '{print "np:", $1"/"$2}'
sa=system:serviceaccount:tandem:tandem-operator
fail=0
check() { # expect verb resource namespace [subresource]
	local scope=(-A); [[ -n "$4" ]] && scope=(-n "$4")
	got=$(kubectl auth can-i --as="$sa" "$2" ${3%%/*} ${5:+--subresource=$5} "${scope[@]}" 2>/dev/null)
	printf '%-4s %-8s %-40s %-8s -> %s\n' "$1" "$2" "$3${5:+/$5}" "${4:-<all>}" "$got"
	[[ "$got" == "$1" ]] || fail=1
}
check yes create statefulsets.apps team-a
check yes create statefulsets.apps tandem
check no  create statefulsets.apps other
check no  create statefulsets.apps ""
check yes update leases.coordination.k8s.io tandem
check no  update leases.coordination.k8s.io team-a
check no  update leases.coordination.k8s.io other
check yes patch computereplicas.compute.tandem.dev team-a status
check no  patch computereplicas.compute.tandem.dev other status
check no  patch computereplicas.compute.tandem.dev team-a
check yes list nodes ""
check no  delete pods other
check yes delete pods team-a
exit $fail
