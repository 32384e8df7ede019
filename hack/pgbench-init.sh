#!/usr/bin/env bash
# Initialises pgbench's tables in a running Tandem and runs its
# select-only workload: pgbench -i's steps g (TRUNCATE, INSERTs and COPY
# FROM STDIN in one transaction), v (VACUUM ANALYZE) and p (ALTER TABLE
# ... ADD PRIMARY KEY), then pgbench -S. Step t (CREATE TABLE) is done
# here with text fillers until char(n) exists; pass --full to let
# pgbench create the tables itself.
#
# Usage: hack/pgbench-init.sh [--full] [host] [port] [scale] [seconds]
set -euo pipefail
full=0
if [[ "${1:-}" == "--full" ]]; then full=1; shift; fi
host=${1:-127.0.0.1} port=${2:-6875} scale=${3:-10} secs=${4:-30}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -1)
pgbench=${bin}/pgbench psql=${bin}/psql
conn=(-h "$host" -p "$port" -U tandem)
if [[ $full == 1 ]]; then
  "$pgbench" "${conn[@]}" -i -n -s "$scale" tandem
else
  "$psql" "${conn[@]}" -X -q -v ON_ERROR_STOP=1 tandem <<'SQL'
DROP TABLE IF EXISTS pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers;
CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler text);
CREATE TABLE pgbench_tellers (tid int NOT NULL, bid int, tbalance int, filler text) WITH (fillfactor = 100);
CREATE TABLE pgbench_accounts (aid int NOT NULL, bid int, abalance int, filler text) WITH (fillfactor = 100);
CREATE TABLE pgbench_branches (bid int NOT NULL, bbalance int, filler text) WITH (fillfactor = 100);
SQL
  "$pgbench" "${conn[@]}" -i -I gvp -s "$scale" tandem
fi
"$pgbench" "${conn[@]}" -S -n -c 4 -T "$secs" tandem
