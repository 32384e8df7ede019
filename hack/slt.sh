#!/usr/bin/env bash
# Runs SQLite's sqllogictest corpus with the runner in hack/slt.
#
# Usage: hack/slt.sh tandem|postgres [--flag=value ...] [FILE|DIR ...]
#
#   tandem    builds bin/controller and bin/replica and runs every script on
#             a fresh controller (fresh temporary data directory, free
#             ports), started and stopped by the runner itself.
#   postgres  runs the same scripts against a throwaway PostgreSQL
#             (installed by hack/postgres.sh), each in a fresh database.
#
# FILE|DIR are relative to the corpus, SLT_CORPUS (default
# ../shared/sqllogictest from the repository root, or from the main
# checkout when this is a linked git worktree); without any, the select
# and index scripts. Flags go to the runner (go run ./hack/slt -h) and must
# be written --flag=value. A missing corpus is reported and skipped, not
# failed, so that `make test` runs where the corpus is not installed.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-}"
shift || true
case "$mode" in
tandem | postgres) ;;
*)
	echo "usage: hack/slt.sh tandem|postgres [--flag=value ...] [FILE|DIR ...]" >&2
	exit 2
	;;
esac
corpus="${SLT_CORPUS:-}"
if [[ -z "$corpus" ]]; then
	corpus=../shared/sqllogictest
	# From a linked worktree, ../shared is beside the main checkout.
	common="$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null || true)"
	if [[ ! -d "$corpus" && -n "$common" && -d "$(dirname "$common")/../shared/sqllogictest" ]]; then
		corpus="$(dirname "$common")/../shared/sqllogictest"
	fi
fi
if [[ ! -d "$corpus" ]]; then
	echo "sqllogictest corpus not found at $corpus; skipping"
	exit 0
fi
corpus="$(cd "$corpus" && pwd)"
flags=()
files=()
for a in "$@"; do
	case "$a" in
	-*) flags+=("$a") ;;
	*) files+=("$corpus/$a") ;;
	esac
done
if [[ ${#files[@]} -eq 0 ]]; then
	files=("$corpus"/select/select*.test "$corpus/index")
fi

tmp="$(mktemp -d)"
runner=""
cleanup() {
	# The runner stops its servers on SIGTERM; the controllers it started
	# also die with it if it is killed outright (Pdeathsig).
	if [[ -n "$runner" ]]; then
		kill -TERM "$runner" 2>/dev/null || true
		wait "$runner" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

go build -o "$tmp/" ./hack/slt
case "$mode" in
tandem)
	# `make test` has built them once for all its targets (TANDEM_TEST_BIN_DIR).
	bindir="${TANDEM_TEST_BIN_DIR:-$PWD/bin}"
	if [[ -z "${TANDEM_TEST_BIN_DIR:-}" ]]; then go build -o bin/ ./cmd/controller ./cmd/replica; fi
	target=(--controller="$bindir/controller" --replica="$bindir/replica")
	;;
postgres)
	bash hack/postgres.sh >/dev/null
	target=(--start-postgres)
	;;
esac
echo "slt: $mode on $(nproc) cores, corpus $corpus" >&2
# In the background and waited for, so that the traps run at once on a
# signal instead of after the runner ends.
"$tmp/slt" "${target[@]}" --root="$corpus" ${flags[@]+"${flags[@]}"} "${files[@]}" &
runner=$!
rc=0
wait "$runner" || rc=$?
runner=""
exit "$rc"
