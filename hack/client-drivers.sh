#!/usr/bin/env bash
# Installs the PostgreSQL drivers `make clients` runs against Tandem, at
# pinned versions, and prints where they are (idempotent):
#   python3-psycopg2  Debian's package (system Python, /usr/bin/python3)
#   pg                node-postgres from npm, into a cache outside the
#                     repository (TANDEM_CLIENTS_CACHE, default
#                     ~/.cache/tandem/clients), never into the work tree
# pgbench comes with PostgreSQL (hack/postgres.sh) or postgresql-client.
# Output: two lines, "python=<interpreter>" and "node_path=<dir>" (the
# NODE_PATH that resolves require('pg')).
# Usage: hack/client-drivers.sh
set -euo pipefail

PSYCOPG2_DEB_VERSION=2.9.5-1+b1 # Debian bookworm
NODE_PG_VERSION=8.23.1

python=/usr/bin/python3
cache="${TANDEM_CLIENTS_CACHE:-$HOME/.cache/tandem/clients}"
nodedir="$cache/node-pg-$NODE_PG_VERSION"

have_psycopg2() {
	local v
	v=$(dpkg-query -W -f='${Version}' python3-psycopg2 2>/dev/null) || return 1
	[[ "$v" == "$PSYCOPG2_DEB_VERSION" ]] && "$python" -c 'import psycopg2' 2>/dev/null
}

if ! have_psycopg2; then
	if [[ $(id -u) -ne 0 ]]; then
		echo "client-drivers.sh: python3-psycopg2=$PSYCOPG2_DEB_VERSION is not installed and installing needs root" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends "python3-psycopg2=$PSYCOPG2_DEB_VERSION" >&2
	have_psycopg2 || { echo "client-drivers.sh: psycopg2 not importable after install" >&2; exit 1; }
fi

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	if [[ $(id -u) -ne 0 ]]; then
		echo "client-drivers.sh: node and npm are needed (Debian: nodejs, npm)" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends nodejs npm >&2
fi

if [[ ! -f "$nodedir/node_modules/pg/package.json" ]] ||
	[[ "$(node -p "require('$nodedir/node_modules/pg/package.json').version")" != "$NODE_PG_VERSION" ]]; then
	mkdir -p "$nodedir"
	# A package.json of its own so npm installs here, not in a parent.
	echo '{"name":"tandem-client-drivers","private":true}' >"$nodedir/package.json"
	npm install --prefix "$nodedir" --no-audit --no-fund --silent --save-exact "pg@$NODE_PG_VERSION" >&2
fi

echo "python=$python"
echo "node_path=$nodedir/node_modules"
