#!/usr/bin/env bash
# kube-sim.sh runs a simulated Kubernetes cluster on loopback from the binaries that
# hack/kube-tools.sh builds: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
# kwok playing the kubelet for a few fake nodes. StatefulSets really create pods, the
# scheduler binds them, and kwok reports them Running and Ready (it runs no containers and no
# probes). Measured on a loaded 2-core machine: 25-50 s to start (about 10 s idle) and about
# 570 MiB resident, which `up` prints.
#
#   hack/kube-sim.sh up      start (idempotent: does nothing if already up); prints KUBECONFIG
#   hack/kube-sim.sh down    stop what `up` started (by the pids it recorded) and delete state
#   hack/kube-sim.sh env     print `export KUBECONFIG=...` and the tools' PATH
#   hack/kube-sim.sh run CMD...  start a cluster of its own, run CMD with KUBECONFIG,
#                            TANDEM_KUBE_SIM_KUBECONFIG and TANDEM_KUBE_BIN set, and always
#                            tear the cluster down; exits with CMD's status
#
# State lives in TANDEM_KUBE_SIM_DIR (default /tmp/tandem-kube-sim); ports are on 127.0.0.1
# from TANDEM_KUBE_SIM_PORT (default 26443: API server; +1 and +2 etcd client and peer, +3
# the controller manager, +4 the scheduler, +5 kwok). TANDEM_KUBE_SIM_NODES fake nodes
# (default 3). A failed `up` leaves the processes and logs for inspection: `down` clears them.
set -euo pipefail
shopt -s inherit_errexit

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${TANDEM_KUBE_SIM_DIR:-/tmp/tandem-kube-sim}
base=${TANDEM_KUBE_SIM_PORT:-26443}
nodes=${TANDEM_KUBE_SIM_NODES:-3}
api_port=$base etcd_port=$((base + 1)) etcd_peer=$((base + 2)) kcm_port=$((base + 3))
sched_port=$((base + 4)) kwok_port=$((base + 5))
kubeconfig="$dir/kubeconfig"
# The tools a cluster needs (kubectl and helm for its users); kube-tools.sh builds only these.
tools=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok kubectl helm)

log() { echo "kube-sim: $*" >&2; }

start() { # start NAME CMD... : run in the background, record its pid, log to $dir/NAME.log
	local name=$1
	shift
	"$@" >"$dir/$name.log" 2>&1 &
	echo $! >"$dir/$name.pid"
}

alive() { [[ -f "$dir/$1.pid" ]] && kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null; }

wait_for() { # wait_for WHAT SECONDS CMD...
	local what=$1 limit=$2
	shift 2
	local deadline=$((SECONDS + limit))
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS > deadline)); then
			log "timed out waiting for $what; logs in $dir"
			return 1
		fi
		sleep 0.5
	done
}

down() {
	local name pid
	for name in kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
		if [[ -f "$dir/$name.pid" ]]; then
			pid=$(cat "$dir/$name.pid")
			kill "$pid" 2>/dev/null || true
			for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -9 "$pid" 2>/dev/null || true
			rm -f "$dir/$name.pid"
		fi
	done
	rm -rf "$dir"
}

up() {
	if alive kube-apiserver; then
		echo "$kubeconfig"
		return 0
	fi
	local bin
	bin=$(bash "$here/kube-tools.sh" "${tools[@]}")
	rm -rf "$dir"
	mkdir -p "$dir/pki" "$dir/etcd"
	local start_time=$SECONDS

	local token
	token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	echo "$token,tandem-admin,tandem-admin,system:masters" >"$dir/tokens.csv"
	openssl genrsa -out "$dir/pki/sa.key" 2048 2>/dev/null
	cat >"$kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: sim
  cluster:
    server: https://127.0.0.1:$api_port
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: $token
contexts:
- name: sim
  context: {cluster: sim, user: admin}
current-context: sim
EOF

	start etcd "$bin/etcd" --data-dir "$dir/etcd" --name sim \
		--listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
		--listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
		--initial-cluster "sim=http://127.0.0.1:$etcd_peer" --unsafe-no-fsync --quota-backend-bytes 1073741824
	# --endpoint-reconciler-type=none: on loopback the default reconciler would publish
	# 127.0.0.1 as the kubernetes Service endpoint and fight over it.
	start kube-apiserver "$bin/kube-apiserver" \
		--etcd-servers "http://127.0.0.1:$etcd_port" \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
		--cert-dir "$dir/pki" --token-auth-file "$dir/tokens.csv" \
		--authorization-mode Node,RBAC \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-account-key-file "$dir/pki/sa.key" --service-account-signing-key-file "$dir/pki/sa.key" \
		--service-cluster-ip-range 10.96.0.0/16 \
		--endpoint-reconciler-type none --allow-privileged=true
	wait_for "kube-apiserver" 120 "$bin/kubectl" --kubeconfig "$kubeconfig" get --raw /readyz

	# With RBAC, each controller must run with its own service account's credentials. The
	# trust-bundle publisher is off: the API server's self-signed serving certificate is not
	# a CA, so it would fail and retry forever.
	start kube-controller-manager "$bin/kube-controller-manager" \
		--kubeconfig "$kubeconfig" --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
		--bind-address 127.0.0.1 --secure-port "$kcm_port" --leader-elect=false \
		--use-service-account-credentials=true --service-account-private-key-file "$dir/pki/sa.key" \
		--root-ca-file "$dir/pki/apiserver.crt" \
		--controllers '*,-nodeipam,-kube-apiserver-serving-clustertrustbundle-publisher-controller' \
		--node-monitor-grace-period 60s
	start kube-scheduler "$bin/kube-scheduler" \
		--kubeconfig "$kubeconfig" --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
		--bind-address 127.0.0.1 --secure-port "$sched_port" --leader-elect=false
	start kwok "$bin/kwok" --kubeconfig "$kubeconfig" --config "$here/kube-sim/stages.yaml" \
		--manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
		--node-lease-duration-seconds 40 --cidr 10.244.0.0/16 --node-ip 10.0.0.1 \
		--server-address "127.0.0.1:$kwok_port"

	local i
	for i in $(seq 0 $((nodes - 1))); do
		cat <<EOF
apiVersion: v1
kind: Node
metadata:
  name: sim-node-$i
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: sim-node-$i, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
---
EOF
	done | "$bin/kubectl" --kubeconfig "$kubeconfig" apply -f - >/dev/null
	wait_for "fake nodes Ready" 60 "$bin/kubectl" --kubeconfig "$kubeconfig" wait --for=condition=Ready node --all --timeout=1s
	# The namespace's default ServiceAccount must exist before pods can be created there.
	wait_for "default service account" 60 "$bin/kubectl" --kubeconfig "$kubeconfig" get serviceaccount default -n default
	log "up in $((SECONDS - start_time))s with $nodes fake nodes, $(rss_mib) MiB resident; state in $dir"
	echo "$kubeconfig"
}

# rss_mib prints the resident memory of the cluster's processes, in MiB.
rss_mib() {
	local name total=0 kib
	for name in etcd kube-apiserver kube-controller-manager kube-scheduler kwok; do
		if alive "$name"; then
			kib=$(ps -o rss= -p "$(cat "$dir/$name.pid")" | tr -d ' ')
			total=$((total + ${kib:-0}))
		fi
	done
	echo $((total / 1024))
}

# run CMD...: a throwaway cluster around one command.
run() {
	if alive kube-apiserver; then
		log "a cluster is already up in $dir; set TANDEM_KUBE_SIM_DIR and TANDEM_KUBE_SIM_PORT for another"
		return 1
	fi
	trap down EXIT
	trap 'exit 130' INT TERM
	local kc rc=0
	kc=$(up)
	TANDEM_KUBE_BIN=$(bash "$here/kube-tools.sh" "${tools[@]}") KUBECONFIG="$kc" TANDEM_KUBE_SIM_KUBECONFIG="$kc" "$@" || rc=$?
	log "memory after the run: $(rss_mib) MiB resident"
	return "$rc"
}

case ${1:-} in
up) up ;;
down) down ;;
run)
	shift
	run "$@"
	;;
env)
	echo "export KUBECONFIG=$kubeconfig"
	echo "export PATH=$(bash "$here/kube-tools.sh" "${tools[@]}"):\$PATH"
	;;
*)
	echo "usage: $0 up|down|env|run CMD..." >&2
	exit 2
	;;
esac
