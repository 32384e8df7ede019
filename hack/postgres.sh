#!/usr/bin/env bash
# Installs PostgreSQL from Debian packages (idempotent) and prints the
# directory of its server binaries (initdb, postgres, pg_ctl), for the SQL
# oracle tests (pkg/sql/oracle). Usage: hack/postgres.sh
set -euo pipefail

find_bindir() {
	local d
	for d in /usr/lib/postgresql/*/bin; do
		if [[ -x "$d/initdb" && -x "$d/postgres" ]]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

if bindir=$(find_bindir); then
	echo "$bindir"
	exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
	echo "postgres.sh: PostgreSQL is not installed and installing needs root" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# Only the server packages: no cluster is created or started here (the
# tests run throwaway servers of their own).
mkdir -p /etc/postgresql-common
if [[ ! -f /etc/postgresql-common/createcluster.conf ]] || ! grep -q '^create_main_cluster = false' /etc/postgresql-common/createcluster.conf; then
	echo 'create_main_cluster = false' >>/etc/postgresql-common/createcluster.conf
fi
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends postgresql >&2

bindir=$(find_bindir) || { echo "postgres.sh: initdb not found after install" >&2; exit 1; }
echo "$bindir"
