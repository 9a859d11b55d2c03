-- Read paths (issues 16 and 19): what the read-path work changed must not
-- change what the reads return.
--  * ddb_query and ddb_scan hand each item out as built, without a copy:
--    a value-per-call result lives until the next call, in a FROM clause
--    (the function scan's tuplestore) and in a target list (ProjectSet),
--    also with two readers side by side and when the caller stops early.
--  * The table information cache remembers the last table asked for: calls
--    that alternate between tables with different key names, and a change
--    of a table's catalog row between calls, read the right names.
--  * The table-name cache remembers the last name it resolved: a table
--    dropped and created again under that name, and another ddb.schema,
--    are seen by the next call.
--  * Descents read internal pages through the buffer each was last found
--    in (ddb_read_internal): a tree of three levels read, then its storage
--    replaced (TRUNCATE, VACUUM FULL, a TRUNCATE rolled back, the table
--    dropped and created again) reads that storage's items; the reads are
--    counted in the table's statistics as ReadBuffer counts them.
--  * GetItem encodes a string key straight from the request and builds the
--    item's string keys straight from the stored key: keys with non-ASCII
--    text, escapes and the longest allowed key read back as written.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA reads;
SET ddb.schema = reads;
SET search_path = reads, public;

SELECT ddb_create_table('rd1', 'PK', 'S', 'SK', 'N') IS NOT NULL AS created;
-- a 70-character partition key name: longer than a column name can be, so
-- the DynamoDB name comes from the catalog row, not from the column
SELECT ddb_create_table('rd2', repeat('k', 70), 'S') IS NOT NULL AS created;
SELECT count(ddb_put_item('rd1', jsonb_build_object('PK', 'p' || (i % 2), 'SK', i, 'v', repeat('x', i))) IS NULL)
  FROM generate_series(1, 20) i;
SELECT count(ddb_put_item('rd2', jsonb_build_object(repeat('k', 70), 'k' || i, 'w', i)) IS NULL)
  FROM generate_series(1, 3) i;

-- FROM clause: every item, in order, each one itself (not the last one
-- built, which an item handed out uncopied and then reused would show)
SELECT x ->> 'SK' AS sk, length(x ->> 'v') AS len
  FROM ddb_query('rd1', 'PK = :p', '{":p": "p1"}') x;
-- target list: one reader, then two side by side (ProjectSet)
SELECT ddb_query('rd1', 'PK = :p', '{":p": "p0"}', "limit" => 4) ->> 'SK' AS sk;
SELECT a ->> 'SK' AS a, b ->> 'SK' AS b
  FROM (SELECT ddb_query('rd1', 'PK = :p', '{":p": "p0"}', "limit" => 3) a,
               ddb_query('rd1', 'PK = :p', '{":p": "p1"}', forward => false, "limit" => 5) b) s;
-- the caller stops early; the items kept by the upper node stay intact
SELECT array_agg(x ->> 'SK' ORDER BY x ->> 'v') AS sks
  FROM (SELECT x FROM ddb_query('rd1', 'PK = :p', '{":p": "p0"}') x LIMIT 3) s;
SELECT count(*), count(DISTINCT x), min(length(x ->> 'v')), max(length(x ->> 'v'))
  FROM ddb_scan('rd1') x;
-- projection and filter results are handed out the same way
SELECT x FROM ddb_query('rd1', 'PK = :p', '{":p": "p1", ":n": 15}',
  filter => 'size(v) > :n', projection => 'SK') x;

-- alternating tables in one statement: each call names its own keys
SELECT i, ddb_get_item('rd1', jsonb_build_object('PK', 'p' || (i % 2), 'SK', i)) ->> 'SK' AS rd1_sk,
       ddb_get_item('rd2', jsonb_build_object(repeat('k', 70), 'k' || i)) ->> 'w' AS rd2_w,
       ddb_get_item('rd2', jsonb_build_object(repeat('k', 70), 'k1')) ? repeat('k', 70) AS long_name
  FROM generate_series(1, 3) i ORDER BY i;
-- a key of the other table's shape is refused, so the names really come
-- from the table each call names
SELECT ddb_get_item('rd2', '{"PK": "p1", "SK": 1}');
SELECT ddb_get_item('rd1', jsonb_build_object(repeat('k', 70), 'k1'));
-- BatchGetItem over both tables, then the catalog row of rd2 changes
-- (billing mode) and DescribeTable shows the change right after a read of
-- the same table cached its row
SELECT jsonb_array_length(ddb_batch_get_item(jsonb_build_object(
         'rd1', jsonb_build_object('Keys', jsonb_build_array('{"PK": "p1", "SK": 1}'::jsonb, '{"PK": "p0", "SK": 2}'::jsonb)),
         'rd2', jsonb_build_object('Keys', jsonb_build_array(jsonb_build_object(repeat('k', 70), 'k2'))))) -> 'Responses' -> 'rd1') AS rd1_items;
SELECT ddb_api('DescribeTable', '{"TableName": "rd2"}') -> 'Table' -> 'BillingModeSummary' ->> 'BillingMode' AS before;
SELECT ddb_api('UpdateTable', '{"TableName": "rd2", "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}') -> 'TableDescription' ->> 'TableName' AS updated;
SELECT ddb_api('DescribeTable', '{"TableName": "rd2"}') -> 'Table' -> 'BillingModeSummary' ->> 'BillingMode' AS after,
       ddb_api('DescribeTable', '{"TableName": "rd2"}') -> 'Table' -> 'ProvisionedThroughput' ->> 'ReadCapacityUnits' AS rcu;

-- the last name resolved: the same call again, then the table behind the
-- name dropped and created again with another key, then another schema
-- holding a table of the same name
SELECT ddb_create_table('rd3', 'PK', 'S') IS NOT NULL AS created;
SELECT ddb_put_item('rd3', '{"PK": "a", "v": 1}');
SELECT ddb_get_item('rd3', '{"PK": "a"}') AS first, ddb_get_item('rd3', '{"PK": "a"}') AS again;
SELECT ddb_api('DeleteTable', '{"TableName": "rd3"}') -> 'TableDescription' ->> 'TableName' AS deleted;
SELECT ddb_get_item('rd3', '{"PK": "a"}');
SELECT ddb_create_table('rd3', 'id', 'N') IS NOT NULL AS created;
SELECT ddb_put_item('rd3', '{"id": 7, "v": 2}');
SELECT ddb_get_item('rd3', '{"id": 7}') AS recreated;
SELECT ddb_get_item('rd3', '{"PK": "a"}');
CREATE SCHEMA reads_other;
SET ddb.schema = reads_other;
SELECT ddb_get_item('rd3', '{"id": 7}');
SELECT ddb_create_table('rd3', 'id', 'N') IS NOT NULL AS created;
SELECT ddb_put_item('rd3', '{"id": 7, "v": "other"}');
SELECT ddb_get_item('rd3', '{"id": 7}') AS other_schema;
SET ddb.schema = reads;
SELECT ddb_get_item('rd3', '{"id": 7}') AS back;

-- buffer hints: a tree three levels deep (item of ~900 bytes: 8 to a leaf)
SELECT ddb_create_table('rd4', 'PK', 'S', 'SK', 'N') IS NOT NULL AS created;
INSERT INTO rd4 SELECT 'p' || (i % 20), i, jsonb_build_object('gen', 1, 'pad', repeat('x', 900))
  FROM generate_series(1, 3000) i;
SELECT (v ->> 'height')::int AS height FROM ddb_verify('rd4') v;
CREATE FUNCTION reads.rd4_gens(step int) RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(coalesce(ddb_get_item('rd4', jsonb_build_object('PK', 'p' || (i % 20), 'SK', i)) ->> 'gen', '-'), '' ORDER BY i)
    FROM generate_series(1, 3000, step) i $$;
SELECT rd4_gens(97) AS gens, rd4_gens(97) AS again;
-- every GetItem reads three pages (root, internal, leaf), all counted as
-- buffer hits, whether through a hint or not (a relcache invalidation
-- meanwhile, by autovacuum say, adds a read of the metapage)
BEGIN;
SELECT pg_stat_get_xact_blocks_fetched('rd4'::regclass) AS f0,
       pg_stat_get_xact_blocks_hit('rd4'::regclass) AS h0 \gset
SELECT count(*) FROM (SELECT rd4_gens(30)) s;
SELECT fetched BETWEEN 300 AND 303 AS three_per_get, hit = fetched AS all_hits
  FROM (SELECT pg_stat_get_xact_blocks_fetched('rd4'::regclass) - :f0 AS fetched,
               pg_stat_get_xact_blocks_hit('rd4'::regclass) - :h0 AS hit) s;
COMMIT;
-- the storage replaced: TRUNCATE and a new load (every other key)
TRUNCATE rd4;
INSERT INTO rd4 SELECT 'p' || (i % 20), i, jsonb_build_object('gen', 2, 'pad', repeat('y', 900))
  FROM generate_series(2, 3000, 2) i;
SELECT rd4_gens(97) AS truncated,
       (SELECT count(*) FROM ddb_query('rd4', 'PK = :p', '{":p": "p4"}')) AS p4_items;
VACUUM FULL rd4;
SELECT rd4_gens(97) AS vacuumed_full;
-- a TRUNCATE rolled back: the file read before it again
BEGIN;
TRUNCATE rd4;
INSERT INTO rd4 SELECT 'p' || (i % 20), i, jsonb_build_object('gen', 3, 'pad', repeat('z', 900))
  FROM generate_series(1, 3000, 3) i;
SELECT rd4_gens(97) AS in_transaction;
ROLLBACK;
SELECT rd4_gens(97) AS rolled_back;
-- dropped and created again under the name
SELECT ddb_api('DeleteTable', '{"TableName": "rd4"}') -> 'TableDescription' ->> 'TableName' AS deleted;
SELECT ddb_create_table('rd4', 'PK', 'S', 'SK', 'N') IS NOT NULL AS created;
INSERT INTO rd4 SELECT 'p' || (i % 20), i, jsonb_build_object('gen', 4, 'pad', repeat('w', 900))
  FROM generate_series(1, 3000, 4) i;
SELECT rd4_gens(97) AS recreated;
SELECT (v ->> 'live')::int AS live FROM ddb_verify('rd4') v;

-- string keys straight from the request and from the stored key
SELECT ddb_create_table('rd5', 'PK', 'S', 'SK', 'S') IS NOT NULL AS created;
SELECT count(ddb_put_item('rd5', jsonb_build_object('PK', pk, 'SK', sk, 'v', n)) IS NULL)
  FROM (VALUES ('ä', 'ß', 1), ('a"b\c', E'tab\there', 2), ('日本', '語', 3),
               (repeat('p', 2048), repeat('s', 1024), 4)) v(pk, sk, n);
SELECT length(x ->> 'PK') AS pk_len, length(x ->> 'SK') AS sk_len, x ->> 'v' AS v, x
  FROM (SELECT ddb_get_item('rd5', jsonb_build_object('PK', pk, 'SK', sk)) x
          FROM (VALUES ('ä', 'ß'), ('a"b\c', E'tab\there'), ('日本', '語')) v(pk, sk)) s;
SELECT length(x ->> 'PK') AS pk_len, length(x ->> 'SK') AS sk_len, x ->> 'v' AS v
  FROM ddb_get_item('rd5', jsonb_build_object('PK', repeat('p', 2048), 'SK', repeat('s', 1024))) x;
-- the key checks are the same as before: a key too long, empty, of the
-- wrong type, missing, or with another attribute
SELECT ddb_get_item('rd5', jsonb_build_object('PK', repeat('p', 2049), 'SK', 's'));
SELECT ddb_get_item('rd5', jsonb_build_object('PK', 'p', 'SK', repeat('s', 1025)));
SELECT ddb_get_item('rd5', '{"PK": "", "SK": "s"}');
SELECT ddb_get_item('rd5', '{"PK": "p", "SK": 1}');
SELECT ddb_get_item('rd5', '{"PK": "p"}');
SELECT ddb_get_item('rd5', '{"PK": "p", "SK": "s", "x": 1}');
SELECT ddb_get_item('rd5', '{"PK": "ä", "SK": "zz"}') IS NULL AS absent;

RESET ddb.schema;
RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA reads_other CASCADE;
DROP SCHEMA reads CASCADE;
RESET client_min_messages;
