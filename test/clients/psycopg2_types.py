"""Round-trips every column type Tandem supports through psycopg2.

Creates a table with one column per type, inserts rows through psycopg2's
parameters (its client-side quoting of Python values, NULLs included),
creates an index on the table and an indexed view over it, and checks that
what is read back -- the whole table, a key lookup through the primary
key's index, the view, and rows selected by typed parameters -- equals
what was written, value by value, with the column types psycopg2 reports.

Usage: python3 psycopg2_types.py DSN
Exit status 0 when every check passed; 1 with the differences otherwise.
"""

import datetime as dt
import sys
import uuid
from decimal import Decimal

import psycopg2
import psycopg2.extras

TABLE = "client_types_py"
VIEW = "client_types_py_v"

# (column, SQL type, type OID RowDescription must report)
COLUMNS = [
    ("c_int2", "smallint", 21),
    ("c_int4", "integer", 23),
    ("c_int8", "bigint", 20),
    ("c_numeric", "numeric", 1700),
    ("c_numeric_ps", "numeric(10,2)", 1700),
    ("c_float8", "double precision", 701),
    ("c_text", "text", 25),
    ("c_varchar", "varchar(12)", 1043),
    ("c_char", "char(6)", 1042),
    ("c_bool", "boolean", 16),
    ("c_bytea", "bytea", 17),
    ("c_uuid", "uuid", 2950),
    ("c_date", "date", 1082),
    ("c_time", "time", 1083),
    ("c_timestamp", "timestamp", 1114),
    ("c_timestamptz", "timestamptz", 1184),
    ("c_interval", "interval", 1186),
    ("c_jsonb", "jsonb", 3802),
    ("c_int4_arr", "integer[]", 1007),
    ("c_int8_arr", "bigint[]", 1016),
    ("c_float8_arr", "double precision[]", 1022),
    ("c_numeric_arr", "numeric[]", 1231),
    ("c_text_arr", "text[]", 1009),
    ("c_bool_arr", "boolean[]", 1000),
]

UTC = dt.timezone.utc
PLUS_0530 = dt.timezone(dt.timedelta(hours=5, minutes=30))


def rows():
    """The rows written: ordinary values, edge values, and all NULLs."""
    return [
        (1, 1, 1, 1, Decimal("1.5"), Decimal("12.34"), 1.25, "plain", "varchar", "ab",
         True, b"\x00\x01\xfe\xff", uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
         dt.date(2024, 1, 2), dt.time(13, 14, 15, 123456), dt.datetime(2024, 1, 2, 3, 4, 5, 678901),
         dt.datetime(2024, 6, 30, 23, 59, 59, tzinfo=PLUS_0530),
         dt.timedelta(days=3, hours=4, minutes=5, seconds=6, microseconds=7),
         {"a": 1, "b": [True, None, "x"], "nested": {"k": "v"}},
         [1, 2, 3], [9007199254740993, -1], [0.5, -2.25], [Decimal("1.25"), Decimal("-3")],
         ["x", "with space", 'quote"d', "back\\slash", "", "NULL"], [True, False]),
        (2, -32768, -2147483648, -9223372036854775808, Decimal("-123456789012345678901234567890.123456789"),
         Decimal("-99999999.99"), -1.5e300, "unicode: \u00e9\u4e2d\U0001f600 and 'quotes'", "",
         "abcdef", False, b"", uuid.UUID(int=0),
         dt.date(1, 1, 1), dt.time(0, 0), dt.datetime(1970, 1, 1),
         dt.datetime(2000, 1, 1, tzinfo=UTC), dt.timedelta(microseconds=-1),
         [], [], [], [], [], [], []),
        (3, 32767, 2147483647, 9223372036854775807, Decimal("0.000000000000000000001"),
         Decimal("0.01"), 5e-324, "line\nbreak\ttab", "twelve chars", "a b",
         None, None, None, dt.date(9999, 12, 31), dt.time(23, 59, 59, 999999),
         dt.datetime(9999, 12, 31, 23, 59, 59, 999999), None,
         dt.timedelta(days=-40, seconds=1), "just a string",
         [None, 4], None, [float("inf"), float("-inf")], [None], [None, "y"], [None]),
        (4,) + (None,) * len(COLUMNS),
    ]


def expected(row):
    """What psycopg2 must read back for a written row."""
    out = list(row)
    for i, (name, _, _) in enumerate(COLUMNS, start=1):
        v = out[i]
        if v is None:
            continue
        if name == "c_char":
            out[i] = v.ljust(6)  # char(n) pads with spaces
        elif name == "c_bytea":
            out[i] = bytes(v)
        elif name == "c_timestamptz":
            out[i] = v.astimezone(UTC)  # the session's TimeZone is UTC
    return tuple(out)


def normalise(row):
    """Converts what psycopg2 returns into comparable Python values."""
    out = list(row)
    for i, v in enumerate(out):
        if isinstance(v, memoryview):
            out[i] = bytes(v)
        elif isinstance(v, dt.datetime) and v.tzinfo is not None:
            out[i] = v.astimezone(UTC)
    return tuple(out)


class Checker:
    def __init__(self):
        self.failures = []
        self.checks = 0

    def equal(self, what, got, want):
        self.checks += 1
        if got != want:
            self.failures.append(f"{what}:\n    got  {got!r}\n    want {want!r}")

    def rows(self, what, got, want):
        self.equal(f"{what}: row count", len(got), len(want))
        for g, w in zip(got, want):
            for (name, _, _), gv, wv in zip([("id", "", 0)] + COLUMNS, g, w):
                self.equal(f"{what}: id {w[0]} column {name}", gv, wv)


def main(dsn):
    psycopg2.extras.register_uuid()
    conn = psycopg2.connect(dsn, client_encoding="UTF8")
    conn.autocommit = True
    cur = conn.cursor()
    ck = Checker()
    tandem = "Tandem" in conn.get_parameter_status("server_version")

    cur.execute("SET TimeZone = 'UTC'")
    cur.execute(f"DROP VIEW IF EXISTS {VIEW} CASCADE")
    cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
    cols = ", ".join(f"{n} {t}" for n, t, _ in COLUMNS)
    cur.execute(f"CREATE TABLE {TABLE} (id integer PRIMARY KEY, {cols})")

    placeholders = ", ".join(["%s"] * (len(COLUMNS) + 1))
    written = rows()
    params = []
    for r in written:
        p = list(r)
        # jsonb goes through psycopg2's Json adapter (a quoted literal).
        j = 1 + [n for n, _, _ in COLUMNS].index("c_jsonb")
        if p[j] is not None:
            p[j] = psycopg2.extras.Json(p[j])
        params.append(tuple(p))
    cur.executemany(f"INSERT INTO {TABLE} VALUES ({placeholders})", params)
    want = [expected(r) for r in written]

    cur.execute(f"CREATE INDEX {TABLE}_date ON {TABLE} (c_date)")
    cur.execute(f"CREATE VIEW {VIEW} AS SELECT * FROM {TABLE} WHERE c_bool IS NOT FALSE")
    if tandem:
        # Tandem maintains the view as an index; PostgreSQL cannot index a
        # view (the script also runs against PostgreSQL to check itself).
        cur.execute(f"CREATE INDEX {VIEW}_id ON {VIEW} (id)")

    cur.execute(f"SELECT * FROM {TABLE} ORDER BY id")
    ck.equal("RowDescription type OIDs", [d.type_code for d in cur.description],
             [23] + [oid for _, _, oid in COLUMNS])
    ck.rows("SELECT * ORDER BY id", [normalise(r) for r in cur.fetchall()], want)

    for w in want:
        cur.execute(f"SELECT * FROM {TABLE} WHERE id = %s", (w[0],))
        ck.rows(f"key lookup id = {w[0]}", [normalise(r) for r in cur.fetchall()], [w])

    cur.execute(f"SELECT * FROM {VIEW} ORDER BY id")
    ck.equal("view RowDescription type OIDs", [d.type_code for d in cur.description],
             [23] + [oid for _, _, oid in COLUMNS])
    ck.rows("indexed view", [normalise(r) for r in cur.fetchall()],
            [w for w in want if w[1 + 9] is not False])

    # Typed parameters in predicates: each value selects its own row.
    for name in ("c_numeric", "c_float8", "c_text", "c_bytea", "c_uuid", "c_date", "c_time",
                 "c_timestamp", "c_timestamptz", "c_interval", "c_int8"):
        i = 1 + [n for n, _, _ in COLUMNS].index(name)
        for r in written:
            if r[i] is None:
                continue
            cur.execute(f"SELECT id FROM {TABLE} WHERE {name} = %s ORDER BY id", (r[i],))
            ck.equal(f"WHERE {name} = %s ({r[i]!r})", [x[0] for x in cur.fetchall()], [r[0]])
    cur.execute(f"SELECT id FROM {TABLE} WHERE c_int4 = ANY(%s) ORDER BY id", ([1, 2147483647],))
    ck.equal("WHERE c_int4 = ANY(list)", [x[0] for x in cur.fetchall()], [1, 3])
    cur.execute(f"SELECT id FROM {TABLE} WHERE c_jsonb @> %s ORDER BY id",
                (psycopg2.extras.Json({"nested": {"k": "v"}}),))
    ck.equal("WHERE c_jsonb @> json", [x[0] for x in cur.fetchall()], [1])
    cur.execute(f"SELECT count(*) FROM {TABLE} WHERE c_text IS NULL")
    ck.equal("count of NULL text", cur.fetchone()[0], 1)

    # A bad value is refused with PostgreSQL's code and writes nothing.
    for value, code in (("not a date", "22007"), ("2024-02-30", "22008")):
        try:
            cur.execute(f"INSERT INTO {TABLE} (id, c_date) VALUES (%s, %s)", (99, value))
            ck.equal(f"INSERT bad date {value!r}", "no error", code)
        except psycopg2.Error as e:
            ck.equal(f"INSERT bad date {value!r}: SQLSTATE", e.pgcode, code)
    cur.execute(f"SELECT count(*) FROM {TABLE}")
    ck.equal("row count after refused INSERTs", cur.fetchone()[0], len(written))

    cur.execute(f"DROP VIEW {VIEW} CASCADE")
    cur.execute(f"DROP TABLE {TABLE}")
    conn.close()

    if ck.failures:
        print(f"psycopg2 {psycopg2.__version__}: {len(ck.failures)} of {ck.checks} checks failed:")
        for f in ck.failures:
            print("  " + f)
        return 1
    print(f"psycopg2 {psycopg2.__version__}: all {ck.checks} checks passed "
          f"({len(COLUMNS)} column types, {len(written)} rows)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
