-- The storage engine: inserts, splits, ordered scans, the verifier.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

CREATE TABLE app ("PK" text, "SK" text, item jsonb) USING ddb;

-- An empty table has no blocks at all, and scans and the verifier cope.
SELECT pg_relation_size('app'), count(*) FROM app;
SELECT ddb_verify('app');

-- 200,000 items interleaved across 10,000 partitions (as real traffic
-- arrives) force thousands of leaf splits and several internal levels.
INSERT INTO app
SELECT 'CUST#' || (i % 10000), 'ORDER#' || lpad((i / 10000)::text, 4, '0'),
       jsonb_build_object('n', i, 'pad', repeat('x', 50))
FROM generate_series(0, 199999) i;
SELECT (v->>'items')::int AS items, (v->>'height')::int > 2 AS deep,
       (v->>'leaf_pages')::int > 1000 AS many_leaves, v->>'unused_pages' AS unused
FROM ddb_verify('app') v;
SELECT count(*), count(DISTINCT "PK"), sum((item->>'n')::bigint) FROM app;

-- A sequential scan returns items in the tree's order: hash of the
-- partition key, then partition key, then sort key.
SELECT bool_and(ok) AS scan_in_key_order FROM (
  SELECT ddb_key_bytes("PK", "SK") > lag(ddb_key_bytes("PK", "SK")) OVER () AS ok
  FROM app) s WHERE ok IS NOT NULL;

-- Items of one partition are contiguous in that order.
SELECT count(*) AS partition_runs FROM (
  SELECT "PK", lag("PK") OVER () AS prev FROM app) s WHERE "PK" IS DISTINCT FROM prev;

-- The engine's range scan over one partition, forward and backward,
-- matches ORDER BY on the sort key.
SELECT array_agg("SK") = (SELECT array_agg("SK" ORDER BY "SK") FROM app WHERE "PK" = 'CUST#42')
  AS forward_ok
FROM ddb_range_scan(NULL::app, ddb_key_bytes('CUST#42'::text), prefix => true);
SELECT array_agg("SK") = (SELECT array_agg("SK" ORDER BY "SK" DESC) FROM app WHERE "PK" = 'CUST#42')
  AS backward_ok
FROM ddb_range_scan(NULL::app, ddb_key_bytes('CUST#42'::text), forward => false, prefix => true);

-- Newest first with a limit: the last order of a customer.
SELECT "SK" FROM ddb_range_scan(NULL::app, ddb_key_bytes('CUST#42'::text),
                                forward => false, prefix => true) LIMIT 1;

-- The same in a select list, where the LIMIT stops the function after its
-- first row: the scan still ends and the table is closed (no "relcache
-- reference leak" warning), in a statement and in a cursor closed early.
SELECT (ddb_range_scan(NULL::app, ddb_key_bytes('CUST#42'::text),
                       forward => false, prefix => true))."SK" LIMIT 1;
BEGIN;
DECLARE early CURSOR FOR
  SELECT (ddb_range_scan(NULL::app, ddb_key_bytes('CUST#42'::text), prefix => true))."SK";
FETCH 2 FROM early;
CLOSE early;
COMMIT;

-- Bounded ranges: ORDER#0005 <= SK < ORDER#0009, both directions.
SELECT array_agg("SK") FROM ddb_range_scan(NULL::app,
  ddb_key_bytes('CUST#7'::text, 'ORDER#0005'::text), ddb_key_bytes('CUST#7'::text, 'ORDER#0009'::text));
SELECT array_agg("SK") FROM ddb_range_scan(NULL::app,
  ddb_key_bytes('CUST#7'::text, 'ORDER#0005'::text), ddb_key_bytes('CUST#7'::text, 'ORDER#0009'::text), false);

-- Resuming after an exclusive start key: every version suffix of a key is
-- 6 bytes, so key || 7 x 0xff sorts after all of them and before the next
-- key; the partition ends below partition prefix || 0xff (UTF-8 has no 0xff).
SELECT array_agg("SK") FROM ddb_range_scan(NULL::app,
  ddb_key_bytes('CUST#7'::text, 'ORDER#0017'::text) || '\xffffffffffffff'::bytea,
  ddb_key_bytes('CUST#7'::text) || '\xff'::bytea);

-- A prefix scan is begins_with: the encoded sort key without its 2-byte
-- terminator is a byte prefix of every longer sort key.
INSERT INTO app VALUES
  ('CUST#42', 'PROFILE', '{"name": "Ann"}'),
  ('CUST#42', 'ORDER', '{"note": "a prefix of every ORDER# key"}'),
  ('CUST#42', 'ORDEQ', '{}'), ('CUST#42', 'ORDES', '{}');
SELECT count(*) AS begins_with_order_hash FROM ddb_range_scan(NULL::app,
  ddb_key_bytes('CUST#42'::text) ||
    substring(ddb_sort_key_bytes('ORDER#'::text) FROM 1 FOR length(ddb_sort_key_bytes('ORDER#'::text)) - 2),
  prefix => true);
SELECT "SK" FROM ddb_range_scan(NULL::app,
  ddb_key_bytes('CUST#42'::text) ||
    substring(ddb_sort_key_bytes('ORDER'::text) FROM 1 FOR length(ddb_sort_key_bytes('ORDER'::text)) - 2),
  prefix => true) LIMIT 3;

-- Point lookups: present, absent.
SELECT "PK", "SK", item FROM ddb_lookup_key(NULL::app, ddb_key_bytes('CUST#42'::text, 'PROFILE'::text));
SELECT ddb_lookup_key(NULL::app, ddb_key_bytes('CUST#42'::text, 'NOPE'::text)) IS NULL AS absent;

-- Scan segments: hash ranges [0, 2^31) and [2^31, 2^32) split the table
-- into two disjoint halves whose union is everything.
SELECT (SELECT count(*) FROM ddb_range_scan(NULL::app, NULL, '\x80000000'::bytea)) +
       (SELECT count(*) FROM ddb_range_scan(NULL::app, '\x80000000'::bytea)) = (SELECT count(*) FROM app)
  AS segments_cover;
SELECT count(*) AS overlap FROM ddb_range_scan(NULL::app, NULL, '\x80000000'::bytea) a
  JOIN ddb_range_scan(NULL::app, '\x80000000'::bytea) b USING ("PK", "SK");

-- Duplicate keys are unique violations, also within one statement.
INSERT INTO app VALUES ('CUST#42', 'PROFILE', '{}');
INSERT INTO app VALUES ('NEW', 'a', '{}'), ('NEW', 'a', '{}');
SELECT count(*) FROM app WHERE "PK" = 'NEW';

-- A rolled-back insert leaves an invisible version; the key stays free.
BEGIN;
INSERT INTO app VALUES ('TMP', 'x', '{"v": 1}');
SELECT item FROM app WHERE "PK" = 'TMP';
ROLLBACK;
SELECT count(*) FROM app WHERE "PK" = 'TMP';
INSERT INTO app VALUES ('TMP', 'x', '{"v": 2}');
SELECT item FROM app WHERE "PK" = 'TMP';

-- Savepoints: the subtransaction's insert is gone, the outer one stays.
BEGIN;
INSERT INTO app VALUES ('SP', '1', '{}');
SAVEPOINT s;
INSERT INTO app VALUES ('SP', '2', '{}');
ROLLBACK TO s;
INSERT INTO app VALUES ('SP', '3', '{}');
COMMIT;
SELECT "SK" FROM app WHERE "PK" = 'SP' ORDER BY 1;

-- Bad keys: NULL, empty, too long.  Nothing is stored.
INSERT INTO app VALUES (NULL, 'x', '{}');
INSERT INTO app VALUES ('', 'x', '{}');
INSERT INTO app VALUES ('p', '', '{}');
INSERT INTO app VALUES (repeat('k', 2049), 'x', '{}');
INSERT INTO app VALUES ('p', repeat('s', 1025), '{}');
-- DynamoDB's largest keys fit: 2048-byte partition key, 1024-byte sort key.
INSERT INTO app VALUES (repeat('k', 2048), repeat('s', 1024), '{}');
INSERT INTO app VALUES (repeat('k', 2048), repeat('s', 1023) || 't', '{}');
SELECT count(*) FROM app WHERE "PK" = repeat('k', 2048);
-- Large items are stored: big values move to the table's TOAST table.
INSERT INTO app VALUES ('big', 'x', jsonb_build_object('pad', repeat('z', 4500)));
INSERT INTO app VALUES ('big', 'y', jsonb_build_object('pad', repeat('z', 6000)));
-- Many large-key items split pages around each other correctly.
INSERT INTO app SELECT repeat('k', 2000) || i, repeat('s', 1000) || j, '{}'
FROM generate_series(1, 20) i, generate_series(1, 5) j;
SELECT count(*) FROM app WHERE "PK" LIKE 'kkk%';

SELECT (v->>'items')::int AS items FROM ddb_verify('app') v;

-- COPY goes through the same insert path.
COPY app FROM STDIN;
COPY#1	a	{"c": 1}
COPY#1	b	{"c": 2}
COPY#2	a	{"c": 3}
\.
SELECT "PK", "SK", item FROM app WHERE "PK" LIKE 'COPY#%' ORDER BY 1, 2;

-- TRUNCATE empties the table (a new, empty file); it works again after.
TRUNCATE app;
SELECT count(*), pg_relation_size('app') FROM app;
INSERT INTO app VALUES ('again', '1', '{}');
SELECT "PK", "SK" FROM app;
SELECT (v->>'items')::int AS items FROM ddb_verify('app') v;

-- TRUNCATE in the creating transaction truncates in place.
BEGIN;
CREATE TABLE tmp_trunc (k text, item jsonb) USING ddb;
INSERT INTO tmp_trunc VALUES ('a', '{}');
TRUNCATE tmp_trunc;
INSERT INTO tmp_trunc VALUES ('a', '{}');
SELECT k FROM tmp_trunc;
COMMIT;
DROP TABLE tmp_trunc;

-- Numeric keys are normalized (1e3 = 1000.00) and ordered numerically;
-- binary keys by unsigned bytes.
CREATE TABLE nums (n numeric, s numeric, item jsonb) USING ddb;
INSERT INTO nums SELECT 1, x, '{}' FROM unnest(ARRAY[-1e25, -2.5, -1, -0.001, 0, 1e-20, 0.5, 1, 1.5, 10, 1e3, 12345678901234567890123456789012345678]) x;
INSERT INTO nums VALUES (2, -9.9999999999999999999999999999999999999e125, '{}'), (2, 1e-130, '{}'),
  (2, -1e-130, '{}'), (2, 9.9999999999999999999999999999999999999e125, '{}');
SELECT array_agg(s::float8) FROM ddb_range_scan(NULL::nums, ddb_key_bytes(2::numeric), prefix => true);
INSERT INTO nums VALUES (1, 1000.00, '{}');
SELECT array_agg(s) FROM ddb_range_scan(NULL::nums, ddb_key_bytes(1::numeric), prefix => true);
SELECT array_agg(s) FROM ddb_range_scan(NULL::nums, ddb_key_bytes(1.0::numeric), forward => false, prefix => true);
CREATE TABLE bins (b bytea, s bytea, item jsonb) USING ddb;
INSERT INTO bins SELECT '\x01', x, '{}' FROM unnest(ARRAY['\xff', '\x00', '\x0000', '\x00ff', '\x01', '\x7f', '\x80']::bytea[]) x;
SELECT array_agg(s) FROM ddb_range_scan(NULL::bins, ddb_key_bytes('\x01'::bytea), prefix => true);
SELECT ddb_verify('nums') ->> 'items', ddb_verify('bins') ->> 'items';

-- Unlogged and temporary ddb tables.
CREATE UNLOGGED TABLE ul (k text, item jsonb) USING ddb;
INSERT INTO ul SELECT 'k' || i, '{}' FROM generate_series(1, 1000) i;
SELECT count(*) FROM ul;
CREATE TEMP TABLE tt (k text, item jsonb) USING ddb;
INSERT INTO tt SELECT 'k' || i, '{}' FROM generate_series(1, 1000) i;
SELECT count(*), (ddb_verify('tt')->>'items')::int FROM tt;

-- ALTER TABLE ... SET TABLESPACE copies the tree.
SET allow_in_place_tablespaces = true;
CREATE TABLESPACE ddb_ts LOCATION '';
ALTER TABLE nums SET TABLESPACE ddb_ts;
SELECT count(*) FROM nums;
SELECT (ddb_verify('nums')->>'items')::int;
ALTER TABLE nums SET TABLESPACE pg_default;
DROP TABLESPACE ddb_ts;

-- What ddb refuses, with errors that say what to do instead.
CREATE INDEX ON nums (s);
SELECT * FROM nums TABLESAMPLE SYSTEM (10);
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT count(*) FROM nums;
RESET parallel_setup_cost; RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;
-- ctid reads the row id.
SELECT ctid IS NOT NULL FROM ul LIMIT 1;

DROP TABLE app, nums, bins, ul, tt;
