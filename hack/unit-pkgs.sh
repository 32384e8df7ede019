#!/usr/bin/env bash
# Prints the packages `make test-unit` runs without the race detector:
# every package of the module except those that `make test` already runs
# under -race (the package patterns given as arguments, RACE_PKGS) and
# whose tests behave the same with and without it. A package keeps its
# run without -race when one of its test files has a build constraint
# naming race (such as pkg/storage's race_test.go/norace_test.go pair):
# its tests then check something only without the detector (an allocation
# count, a 300 MiB append skipped under it), so that run is not a
# duplicate. Every other package in the arguments runs once, under -race:
# the same tests, the same assertions, plus the detector.
# Usage: hack/unit-pkgs.sh [race package patterns...]
set -euo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
covered=$(mktemp)
trap 'rm -f "$covered"' EXIT
if [[ $# -gt 0 ]]; then
	# Each race-run package with its directory and test files.
	while IFS=' ' read -r pkg dir files; do
		conditional=no
		for f in $files; do
			if grep -Eq '^//go:build .*race' "$dir/$f"; then conditional=yes; break; fi
		done
		if [[ $conditional == no ]]; then echo "$pkg"; fi
	done < <("$go" list -f '{{.ImportPath}} {{.Dir}} {{join .TestGoFiles " "}} {{join .XTestGoFiles " "}}' "$@") >"$covered"
fi
all=$("$go" list ./...)
# grep exits 1 when every package is covered: an empty list, not an error.
grep -vxF -f "$covered" <<<"$all" || [[ $? -eq 1 ]]
