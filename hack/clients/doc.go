// Command clients runs PostgreSQL clients that nobody on this project
// wrote against Tandem, and the same clients against PostgreSQL in the
// same run (`make clients`):
//
//   - pgbench: `pgbench -i -n -s SCALE` initialises its tables, then
//     `pgbench -S -n -c CLIENTS -T SECONDS` runs its select-only workload;
//     first against a fresh Tandem, then against a throwaway PostgreSQL
//     (never both at once). Both results are printed with the machine's
//     load average around each run, the CPU time per transaction of each
//     process (controller and replica from /proc/PID/stat, PostgreSQL's
//     postmaster with its exited backends, pgbench from its rusage: on a
//     shared machine the number to move, where TPS and latency vary with
//     the load), and for Tandem the mean time per read of each stage of
//     pkg/readtrace (tandem_read_stage_seconds). --profile=DIR adds CPU
//     profiles and then execution traces of the controller and the
//     replica during -S; --bin-dir runs given binaries instead of
//     building, so two builds can be compared alternately in one session.
//   - psycopg2 (test/clients/psycopg2_types.py) and node-postgres
//     (test/clients/node_pg_types.js): a table with every column type,
//     filled with parameters, read back and compared. Each script runs
//     against PostgreSQL too, which checks the script itself.
//
// The drivers are installed at pinned versions by hack/client-drivers.sh
// (outside the repository); PostgreSQL by hack/postgres.sh.
//
// Invariants: every process the command starts (controller and replicas,
// PostgreSQL) is stopped before it returns, on success, failure or
// interrupt; each system gets a fresh data directory and free loopback
// ports, so a run never touches another server on the machine; the
// command fails when any client fails, after running the others.
package main
