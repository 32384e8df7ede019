#!/usr/bin/env bash
# Runs the SQL oracle suite (pkg/sql/oracle) against a real controller with
# its local replica fleet, the embedded default, on a fresh data directory.
# Usage: hack/oracle-controller.sh [name=value,...]   (system parameter defaults,
# e.g. enable_compute_interactive_dataflows=on to run with two runtimes;
# without an argument, TANDEM_TEST_SYSTEM_PARAMETERS as for the Go tests).
set -euo pipefail
cd "$(dirname "$0")/.."
params="${1:-${TANDEM_TEST_SYSTEM_PARAMETERS:-}}"
bash hack/postgres.sh >/dev/null
data="$(mktemp -d)"
# `make test` builds the binaries once for all its targets and names the
# directory in TANDEM_TEST_BIN_DIR; run alone, this script builds its own.
if [[ -n "${TANDEM_TEST_BIN_DIR:-}" ]]; then
	bin="$TANDEM_TEST_BIN_DIR"
	own_bin=
else
	bin="$(mktemp -d)"
	own_bin="$bin"
	go build -o "$bin/" ./cmd/controller ./cmd/replica
fi
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pg="127.0.0.1:$(port)"
"$bin/controller" --data-dir "$data" --pgwire-listen-addr "$pg" \
	--http-listen-addr "127.0.0.1:$(port)" --storage-listen-addr "127.0.0.1:$(port)" \
	--replica-binary "$bin/replica" --log-level warn \
	--system-parameter-default "$params" >"$data/controller.log" 2>&1 &
ctl=$!
cleanup() {
	kill "$ctl" 2>/dev/null || true
	wait "$ctl" 2>/dev/null || true
	rm -rf "$data" ${own_bin:+"$own_bin"}
}
trap cleanup EXIT
# Up to a minute: a loaded CI machine can take tens of seconds to start it.
for _ in $(seq 1 300); do
	if pg_isready -q -h "${pg%:*}" -p "${pg#*:}" 2>/dev/null; then break; fi
	sleep 0.2
done
echo "oracle: controller on $pg (parameters: ${params:-defaults})" >&2
# A run asked for the interactive runtime must get it, not silently run
# with the defaults.
want=off
if [[ ",${params// /}," =~ ,enable_compute_interactive_dataflows=(on|true|yes|1), ]]; then want=on; fi
got="$(psql -h "${pg%:*}" -p "${pg#*:}" -U tandem -d tandem -Atc 'SHOW enable_compute_interactive_dataflows')"
if [[ "$got" != "$want" ]]; then
	echo "oracle: enable_compute_interactive_dataflows is $got, want $want (parameters: ${params:-defaults})" >&2
	exit 1
fi
if ! TANDEM_ORACLE_ADDR="$pg" TANDEM_ORACLE_REQUIRED=1 go test -count=1 -timeout 15m -run TestOracle ./pkg/sql/oracle/; then
	tail -50 "$data/controller.log" >&2
	exit 1
fi
