#!/usr/bin/env bash
# Installs promtool from Debian's prometheus package (idempotent) and prints
# its path, for the chart's alert-rule test (charts/tandem/tests). Usage:
# hack/promtool.sh
set -euo pipefail

if p=$(command -v promtool); then
	echo "$p"
	exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "promtool.sh: promtool is not installed and installing needs root" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# The package also ships the server; nothing here starts it.
apt-get install -y -qq --no-install-recommends prometheus >&2
command -v promtool || { echo "promtool.sh: promtool not found after install" >&2; exit 1; }
