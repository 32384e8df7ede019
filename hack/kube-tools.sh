#!/usr/bin/env bash
# kube-tools.sh builds, from Go modules, the Kubernetes binaries the operator's envtest
# suites, the simulated cluster and `make generate-k8s` need, into a versioned cache outside
# the repository, and prints the bin directory on stdout:
#
#   KUBE_BIN=$(hack/kube-tools.sh)        # build what is missing (5-10 min cold, ~1 s warm)
#   hack/kube-tools.sh --check            # exit 1 if anything would be built
#   hack/kube-tools.sh controller-gen     # build only the named tools
#
# Pins live in hack/tools-k8s (one module per tool, so that their dependency graphs never
# need reconciling); the cache key is a hash of those go.mod/go.sum files, so changing a pin
# builds into a fresh directory and never reuses a stale binary. Each binary is written to a
# temporary name and renamed, so an interrupted build never leaves a half-written binary
# that a later run would skip. Builds run at low priority with -p=1 because a developer's
# machine is shared; under CI (CI=true, the machine is ours alone) they use every core at
# normal priority. Override with KUBE_TOOLS_PARALLEL / KUBE_TOOLS_NICE.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mods="$here/tools-k8s"
cache_root=${TANDEM_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem-tools}
if [[ "${CI:-}" == true ]]; then
	parallel=${KUBE_TOOLS_PARALLEL:-$(nproc)}
	nice_level=${KUBE_TOOLS_NICE:-0}
else
	parallel=${KUBE_TOOLS_PARALLEL:-1}
	nice_level=${KUBE_TOOLS_NICE:-10}
fi

K8S_VERSION=v1.37.2
ETCD_VERSION=v3.7.3
KWOK_VERSION=v0.8.0
HELM_VERSION=v3.22.0
CONTROLLER_GEN_VERSION=v0.23.0

check_only=false
if [[ ${1:-} == --check ]]; then
	check_only=true
	shift
fi
only=" $* "

key=$(cd "$mods" && cat go.mod go.sum */go.mod */go.sum | sha256sum | cut -c1-12)
bin="$cache_root/k8s-$K8S_VERSION-$key/bin"
mkdir -p "$bin"

log() { echo "kube-tools: $*" >&2; }

# build NAME MODULE_DIR PACKAGE LDFLAGS: go build PACKAGE inside MODULE_DIR into $bin/NAME
# unless it is already there.
missing=0
build() {
	local name=$1 dir=$2 pkg=$3 ldflags=$4
	if [[ "$only" != "  " && "$only" != *" $name "* ]] || [[ -x "$bin/$name" ]]; then
		return 0
	fi
	missing=$((missing + 1))
	if $check_only; then
		log "missing $name"
		return 0
	fi
	log "building $name ($pkg)"
	local start=$SECONDS tmp="$bin/.$name.tmp.$$"
	(cd "$dir" && CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" \
		nice -n "$nice_level" go build -p "$parallel" -trimpath -ldflags "-s -w $ldflags" -o "$tmp" "$pkg")
	mv -f "$tmp" "$bin/$name"
	log "built $name in $((SECONDS - start))s"
}

k8s_ldflags() {
	local v=$K8S_VERSION minor
	minor=$(echo "$v" | cut -d. -f2)
	local f=""
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		f+=" -X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=$minor"
		f+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
	done
	echo "$f"
}

kl=$(k8s_ldflags)
# etcd first: it is the smallest, and the envtest suites need only it and the API server.
build etcd "$mods/etcd" go.etcd.io/etcd/server/v3 "-X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION"
build kube-apiserver "$mods" k8s.io/kubernetes/cmd/kube-apiserver "$kl"
build controller-gen "$mods/controller-gen" sigs.k8s.io/controller-tools/cmd/controller-gen \
	"-X sigs.k8s.io/controller-tools/pkg/version.version=$CONTROLLER_GEN_VERSION"
build kubectl "$mods" k8s.io/kubernetes/cmd/kubectl "$kl"
build kube-controller-manager "$mods" k8s.io/kubernetes/cmd/kube-controller-manager "$kl"
build kube-scheduler "$mods" k8s.io/kubernetes/cmd/kube-scheduler "$kl"
build kwok "$mods/kwok" sigs.k8s.io/kwok/cmd/kwok "-X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}"
build helm "$mods/helm" helm.sh/helm/v3/cmd/helm \
	"-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"

if $check_only && ((missing > 0)); then
	exit 1
fi
echo "$bin"
