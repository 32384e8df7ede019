# Real PostgreSQL clients against Tandem (hack/clients): pgbench -i and -S
# against a fresh Tandem and then against a throwaway PostgreSQL (TPS,
# latency and load average of both), and the psycopg2 and node-postgres
# type round-trip scripts in test/clients against both. Not part of
# `make test`: it takes several minutes and needs the drivers
# (hack/client-drivers.sh installs them at pinned versions, outside the
# repository). Flags: CLIENTS_FLAGS='--duration=30s --scale=10 --clients=4
# --profile=DIR --skip-pgbench --skip-drivers'.
.PHONY: clients

CLIENTS_FLAGS ?=

clients:
	bash hack/postgres.sh >/dev/null
	$(GO) run ./hack/clients $(CLIENTS_FLAGS)
