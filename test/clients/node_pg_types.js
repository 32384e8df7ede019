// Round-trips every column type Tandem supports through node-postgres
// (npm `pg`, extended protocol: parameters sent as text with their types
// left for the server to infer).
//
// Creates a table with one column per type, inserts rows through
// parameters (NULLs included), creates an index on the table and an indexed
// view over it, and checks what is read back -- the whole table, a key
// lookup through the primary key's index, the view, rows selected by
// parameters -- against what was written: the values node-postgres parses
// (its default type parsers, as an application sees them), each column's
// text form (`col::text`), and the type OIDs in RowDescription.
//
// Usage: TZ=UTC NODE_PATH=<dir with pg> node node_pg_types.js postgres://user@host:port/db
// Exit status 0 when every check passed; 1 with the differences otherwise.
'use strict';

const assert = require('node:assert');
const { Client } = require('pg');

const TABLE = 'client_types_js';
const VIEW = 'client_types_js_v';

// [column, SQL type, type OID RowDescription must report]
const COLUMNS = [
  ['c_int2', 'smallint', 21],
  ['c_int4', 'integer', 23],
  ['c_int8', 'bigint', 20],
  ['c_numeric', 'numeric', 1700],
  ['c_numeric_ps', 'numeric(10,2)', 1700],
  ['c_float8', 'double precision', 701],
  ['c_text', 'text', 25],
  ['c_varchar', 'varchar(12)', 1043],
  ['c_char', 'char(6)', 1042],
  ['c_bool', 'boolean', 16],
  ['c_bytea', 'bytea', 17],
  ['c_uuid', 'uuid', 2950],
  ['c_date', 'date', 1082],
  ['c_time', 'time', 1083],
  ['c_timestamp', 'timestamp', 1114],
  ['c_timestamptz', 'timestamptz', 1184],
  ['c_interval', 'interval', 1186],
  ['c_jsonb', 'jsonb', 3802],
  ['c_int2_arr', 'smallint[]', 1005],
  ['c_int4_arr', 'integer[]', 1007],
  ['c_int8_arr', 'bigint[]', 1016],
  ['c_float8_arr', 'double precision[]', 1022],
  ['c_numeric_arr', 'numeric[]', 1231],
  ['c_text_arr', 'text[]', 1009],
  ['c_bool_arr', 'boolean[]', 1000],
];
const NAMES = COLUMNS.map((c) => c[0]);

// Each row: what is sent (a parameter per column), what node-postgres
// parses back, and the column's text form in PostgreSQL.
// A column missing from `read` reads back as sent; from `text`: no check.
const ROWS = [
  {
    id: 1,
    sent: {
      c_int2: 1, c_int4: 1, c_int8: '1', c_numeric: '1.5', c_numeric_ps: '12.3', c_float8: 1.25,
      c_text: 'plain', c_varchar: 'varchar', c_char: 'ab', c_bool: true,
      c_bytea: Buffer.from([0, 1, 0xfe, 0xff]), c_uuid: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
      c_date: '2024-01-02', c_time: '13:14:15.123456', c_timestamp: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678)),
      c_timestamptz: '2024-06-30 23:59:59+05:30', c_interval: '3 days 04:05:06.000007',
      c_jsonb: { a: 1, b: [true, null, 'x'], nested: { k: 'v' } },
      c_int2_arr: [1, -2], c_int4_arr: [1, 2, 3], c_int8_arr: ['9007199254740993', '-1'], c_float8_arr: [0.5, -2.25],
      c_numeric_arr: ['1.25', '-3'], c_text_arr: ['x', 'with space', 'quote"d', 'back\\slash', '', 'NULL'],
      c_bool_arr: [true, false],
    },
    read: {
      c_numeric_ps: '12.30', c_char: 'ab    ', c_date: new Date(Date.UTC(2024, 0, 2)), c_numeric_arr: [1.25, -3],
      c_timestamptz: new Date(Date.UTC(2024, 5, 30, 18, 29, 59)),
      c_interval: { days: 3, hours: 4, minutes: 5, seconds: 6, milliseconds: 0.007 },
    },
    text: {
      c_int8: '1', c_numeric: '1.5', c_numeric_ps: '12.30', c_float8: '1.25', c_char: 'ab', c_bool: 'true',
      c_bytea: '\\x0001feff', c_date: '2024-01-02', c_time: '13:14:15.123456', c_timestamp: '2024-01-02 03:04:05.678',
      c_timestamptz: '2024-06-30 18:29:59+00', c_interval: '3 days 04:05:06.000007',
      c_jsonb: '{"a": 1, "b": [true, null, "x"], "nested": {"k": "v"}}',
      c_int8_arr: '{9007199254740993,-1}', c_numeric_arr: '{1.25,-3}',
      c_text_arr: '{x,"with space","quote\\"d","back\\\\slash","","NULL"}', c_bool_arr: '{t,f}',
    },
  },
  {
    id: 2,
    sent: {
      c_int2: -32768, c_int4: -2147483648, c_int8: '-9223372036854775808',
      c_numeric: '-123456789012345678901234567890.123456789', c_numeric_ps: '-99999999.99', c_float8: -1.5e300,
      c_text: "unicode: \u00e9\u4e2d\u{1f600} and 'quotes'", c_varchar: '', c_char: 'abcdef', c_bool: false,
      c_bytea: Buffer.alloc(0), c_uuid: '00000000-0000-0000-0000-000000000000', c_date: '0001-01-01',
      c_time: '00:00:00', c_timestamp: '1970-01-01 00:00:00', c_timestamptz: '2000-01-01 00:00:00+00',
      c_interval: '-00:00:00.000001', c_jsonb: [], c_int2_arr: [], c_int4_arr: [], c_int8_arr: [], c_float8_arr: [],
      c_numeric_arr: [], c_text_arr: [], c_bool_arr: [],
    },
    read: {
      c_date: new Date('0001-01-01T00:00:00Z'), c_timestamp: new Date(Date.UTC(1970, 0, 1)),
      c_timestamptz: new Date(Date.UTC(2000, 0, 1)), c_interval: { milliseconds: -0.001 },
    },
    text: {
      c_float8: '-1.5e+300', c_char: 'abcdef', c_bool: 'false', c_bytea: '\\x', c_date: '0001-01-01',
      c_interval: '-00:00:00.000001', c_jsonb: '[]', c_int4_arr: '{}', c_text_arr: '{}',
    },
  },
  {
    id: 3,
    sent: {
      c_int2: 32767, c_int4: 2147483647, c_int8: '9223372036854775807', c_numeric: '0.000000000000000000001',
      c_numeric_ps: '0.01', c_float8: 5e-324, c_text: 'line\nbreak\ttab', c_varchar: 'twelve chars', c_char: 'a b',
      c_bool: null, c_bytea: null, c_uuid: null, c_date: '9999-12-31', c_time: '23:59:59.999999',
      c_timestamp: '9999-12-31 23:59:59.999', c_timestamptz: null, c_interval: '-40 days 00:00:01',
      c_jsonb: '"just a string"', c_int2_arr: [null, 7], c_int4_arr: [null, 4], c_int8_arr: null,
      c_float8_arr: '{Infinity,-Infinity,NaN}', c_numeric_arr: [null], c_text_arr: [null, 'y'], c_bool_arr: [null],
    },
    read: {
      c_char: 'a b   ', c_date: new Date(Date.UTC(9999, 11, 31)), c_numeric_arr: [null], c_timestamp: new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)),
      c_interval: { days: -40, seconds: 1 }, c_jsonb: 'just a string', c_float8_arr: [Infinity, -Infinity, NaN],
    },
    text: {
      c_numeric: '0.000000000000000000001', c_float8: '5e-324', c_interval: '-40 days +00:00:01',
      c_jsonb: '"just a string"', c_int4_arr: '{NULL,4}', c_float8_arr: '{Infinity,-Infinity,NaN}',
      c_text_arr: '{NULL,y}',
    },
  },
  { id: 4, sent: Object.fromEntries(NAMES.map((n) => [n, null])), read: {}, text: {} },
];

// Converts node-postgres' value into something deepStrictEqual compares.
function plain(v) {
  if (v === null || v === undefined) return v;
  if (Buffer.isBuffer(v)) return { buffer: v.toString('hex') };
  if (v instanceof Date) return { date: v.toISOString() };
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === 'object' && v.constructor && v.constructor.name === 'PostgresInterval') {
    // Only the fields that are set (postgres-interval omits zeros).
    return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== 0 && x !== undefined));
  }
  if (typeof v === 'number' && Number.isNaN(v)) return 'NaN';
  return v;
}

function wantRead(r, name) {
  return Object.prototype.hasOwnProperty.call(r.read, name) ? r.read[name] : r.sent[name];
}

class Checker {
  constructor() { this.failures = []; this.checks = 0; }

  equal(what, got, want) {
    this.checks++;
    try {
      assert.deepStrictEqual(plain(got), plain(want));
    } catch {
      this.failures.push(`${what}:\n    got  ${JSON.stringify(plain(got))}\n    want ${JSON.stringify(plain(want))}`);
    }
  }

  rows(what, got, want) {
    this.equal(`${what}: row count`, got.length, want.length);
    for (let i = 0; i < Math.min(got.length, want.length); i++) {
      this.equal(`${what}: id`, got[i].id, want[i].id);
      for (const n of NAMES) this.equal(`${what}: id ${want[i].id} column ${n}`, got[i][n], wantRead(want[i], n));
    }
  }
}

async function main(url) {
  const client = new Client({ connectionString: url });
  await client.connect();
  const ck = new Checker();
  const q = (text, values) => client.query(text, values);
  const tandem = /Tandem/.test((await q('SHOW server_version')).rows[0].server_version);

  await q("SET TimeZone = 'UTC'");
  await q(`DROP VIEW IF EXISTS ${VIEW} CASCADE`);
  await q(`DROP TABLE IF EXISTS ${TABLE}`);
  await q(`CREATE TABLE ${TABLE} (id integer PRIMARY KEY, ${COLUMNS.map(([n, t]) => `${n} ${t}`).join(', ')})`);
  const ph = NAMES.map((_, i) => `$${i + 2}`).join(', ');
  for (const r of ROWS) {
    await q(`INSERT INTO ${TABLE} VALUES ($1, ${ph})`, [r.id, ...NAMES.map((n) => {
      const v = r.sent[n];
      // node-postgres sends arrays as array literals; jsonb needs JSON text.
      return n === 'c_jsonb' && v !== null && typeof v !== 'string' ? JSON.stringify(v) : v;
    })]);
  }
  await q(`CREATE INDEX ${TABLE}_date ON ${TABLE} (c_date)`);
  await q(`CREATE VIEW ${VIEW} AS SELECT * FROM ${TABLE} WHERE c_bool IS NOT FALSE`);
  if (tandem) {
    // PostgreSQL cannot index a view (the script also runs against it).
    await q(`CREATE INDEX ${VIEW}_id ON ${VIEW} (id)`);
  }

  const all = await q(`SELECT * FROM ${TABLE} ORDER BY id`);
  ck.equal('RowDescription type OIDs', all.fields.map((f) => f.dataTypeID), [23, ...COLUMNS.map((c) => c[2])]);
  ck.rows('SELECT * ORDER BY id', all.rows, ROWS);
  for (const r of ROWS) {
    ck.rows(`key lookup id = ${r.id}`, (await q(`SELECT * FROM ${TABLE} WHERE id = $1`, [r.id])).rows, [r]);
  }
  const viewRows = await q(`SELECT * FROM ${VIEW} ORDER BY id`);
  ck.equal('view RowDescription type OIDs', viewRows.fields.map((f) => f.dataTypeID), [23, ...COLUMNS.map((c) => c[2])]);
  ck.rows('indexed view', viewRows.rows, ROWS.filter((r) => r.sent.c_bool !== false));

  // Text forms, as PostgreSQL prints them.
  const texts = await q(`SELECT id, ${NAMES.map((n) => `${n}::text AS ${n}`).join(', ')} FROM ${TABLE} ORDER BY id`);
  for (const [i, r] of ROWS.entries()) {
    for (const [n, want] of Object.entries(r.text)) ck.equal(`text of id ${r.id} column ${n}`, texts.rows[i][n], want);
  }

  // Parameters whose type the server infers from the column they meet.
  for (const n of ['c_int8', 'c_numeric', 'c_float8', 'c_text', 'c_bytea', 'c_uuid', 'c_date', 'c_time', 'c_timestamp',
    'c_timestamptz', 'c_interval', 'c_char']) {
    for (const r of ROWS) {
      const v = r.sent[n];
      if (v === null) continue;
      const got = (await q(`SELECT id FROM ${TABLE} WHERE ${n} = $1 ORDER BY id`, [v])).rows.map((x) => x.id);
      ck.equal(`WHERE ${n} = $1 (${JSON.stringify(plain(v))})`, got, [r.id]);
    }
  }
  ck.equal('WHERE c_int4 = ANY($1)', (await q(`SELECT id FROM ${TABLE} WHERE c_int4 = ANY($1) ORDER BY id`,
    [[1, 2147483647]])).rows.map((x) => x.id), [1, 3]);
  ck.equal('WHERE c_jsonb @> $1', (await q(`SELECT id FROM ${TABLE} WHERE c_jsonb @> $1 ORDER BY id`,
    [JSON.stringify({ nested: { k: 'v' } })])).rows.map((x) => x.id), [1]);
  ck.equal('parameter in the select list', (await q('SELECT $1::int + 1 AS x, $2::text AS y', [41, 'z'])).rows,
    [{ x: 42, y: 'z' }]);

  // Bad values are refused with PostgreSQL's codes and write nothing.
  for (const [n, v, code] of [['c_date', 'not a date', '22007'], ['c_date', '2024-02-30', '22008'],
    ['c_int2', '40000', '22003'], ['c_uuid', 'xyz', '22P02'], ['c_varchar', 'thirteen char', '22001'],
    ['c_jsonb', '{bad', '22P02']]) {
    try {
      await q(`INSERT INTO ${TABLE} (id, ${n}) VALUES ($1, $2)`, [99, v]);
      ck.equal(`INSERT bad ${n} ${JSON.stringify(v)}`, 'no error', code);
    } catch (e) {
      ck.equal(`INSERT bad ${n} ${JSON.stringify(v)}: SQLSTATE`, e.code, code);
    }
  }
  ck.equal('row count after refused INSERTs', (await q(`SELECT count(*) AS n FROM ${TABLE}`)).rows[0].n, String(ROWS.length));

  await q(`DROP VIEW ${VIEW} CASCADE`);
  await q(`DROP TABLE ${TABLE}`);
  await client.end();

  const version = require('pg/package.json').version;
  if (ck.failures.length > 0) {
    console.log(`node-postgres ${version}: ${ck.failures.length} of ${ck.checks} checks failed:`);
    for (const f of ck.failures) console.log(`  ${f}`);
    return 1;
  }
  console.log(`node-postgres ${version}: all ${ck.checks} checks passed (${COLUMNS.length} column types, ${ROWS.length} rows)`);
  return 0;
}

if (process.argv.length !== 3) {
  console.error('usage: node node_pg_types.js postgres://user@host:port/db');
  process.exit(2);
}
main(process.argv[2]).then((code) => process.exit(code), (err) => {
  console.error(err);
  process.exit(1);
});
