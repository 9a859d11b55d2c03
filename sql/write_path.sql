-- Single-item writes without waste (issue 19): what the faster write path
-- must keep exactly as it was.
--  * Parsed expressions are cached per backend, keyed by the expression
--    texts, ExpressionAttributeNames and ExpressionAttributeValues: a change
--    of any of them is parsed anew, never answered with a stale parse; an
--    invalid expression is not cached and fails every time.
--  * A PutItem or DeleteItem that needs no old item (no condition, no
--    ReturnValues) skips building it, unless the table's indexes or stream
--    need it: the index and the stream still see the old item.
--  * A write finds the version it read on the leaf where it read it (no
--    second lookup through the row-id map); ddb_verify agrees afterwards.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA write_path;
SET ddb.schema = write_path;
SET search_path = write_path, public;

SELECT ddb_create_table('counters', 'PK', 'S', 'SK', 'S') IS NOT NULL AS created;
SELECT ddb_put_item('counters', '{"PK": "c", "SK": "1", "a": 0, "b": 0}');

-- The same UpdateExpression text with other names updates other attributes.
SELECT ddb_update_item('counters', '{"PK": "c", "SK": "1"}', 'ADD #x :one',
       names => '{"#x": "a"}', vals => '{":one": 1}', return_values => 'ALL_NEW');
SELECT ddb_update_item('counters', '{"PK": "c", "SK": "1"}', 'ADD #x :one',
       names => '{"#x": "b"}', vals => '{":one": 1}', return_values => 'ALL_NEW');
-- ... and with other values adds other amounts.
SELECT ddb_update_item('counters', '{"PK": "c", "SK": "1"}', 'ADD #x :one',
       names => '{"#x": "a"}', vals => '{":one": 10}', return_values => 'UPDATED_NEW');
SELECT ddb_update_item('counters', '{"PK": "c", "SK": "1"}', 'ADD #x :one',
       names => '{"#x": "a"}', vals => '{":one": 1}', return_values => 'UPDATED_NEW');

-- A repeated request is parsed once: ten more calls, no more misses.
SELECT ddb_expression_cache_stats() AS before \gset
SELECT count(coalesce(ddb_update_item('counters', '{"PK": "c", "SK": "1"}', 'ADD #x :one',
       names => '{"#x": "b"}', vals => '{":one": 1}'), '{}')) FROM generate_series(1, 10);
SELECT (ddb_expression_cache_stats() ->> 'misses')::int - (:'before'::jsonb ->> 'misses')::int AS new_misses,
       (ddb_expression_cache_stats() ->> 'hits')::int - (:'before'::jsonb ->> 'hits')::int AS new_hits;
SELECT ddb_get_item('counters', '{"PK": "c", "SK": "1"}');

-- The same text and values as an UpdateExpression and as a
-- ConditionExpression: two entries, each parsed for its part.
SELECT ddb_update_item('counters', '{"PK": "c", "SK": "1"}', 'SET a = :v',
       vals => '{":v": 12}', return_values => 'UPDATED_NEW');
SELECT ddb_update_item('counters', '{"PK": "c", "SK": "1"}', 'SET b = :w', 'a = :v',
       vals => '{":v": 12, ":w": 5}', return_values => 'UPDATED_NEW');
SELECT ddb_update_item('counters', '{"PK": "c", "SK": "1"}', 'SET b = :w', 'a = :v',
       vals => '{":v": 13, ":w": 5}', return_values => 'UPDATED_NEW');

-- An invalid expression fails every time (nothing cached), and so does an
-- unused placeholder next to a cached expression.
SELECT ddb_update_item('counters', '{"PK": "c", "SK": "1"}', 'ADD #x');
SELECT ddb_update_item('counters', '{"PK": "c", "SK": "1"}', 'ADD #x');
SELECT ddb_update_item('counters', '{"PK": "c", "SK": "1"}', 'ADD #x :one',
       names => '{"#x": "a", "#y": "b"}', vals => '{":one": 1}');
SELECT ddb_update_item('counters', '{"PK": "c", "SK": "1"}', 'ADD #x :one',
       names => '{"#x": "a"}', vals => '{":one": 1, ":two": 2}');

-- Conditions on PutItem and DeleteItem through the cache: the same text
-- with other values gives other answers.
SELECT ddb_put_item('counters', '{"PK": "c", "SK": "2", "v": 1}');
SELECT ddb_put_item('counters', '{"PK": "c", "SK": "2", "v": 2}', 'v = :v', vals => '{":v": 1}');
SELECT ddb_put_item('counters', '{"PK": "c", "SK": "2", "v": 3}', 'v = :v', vals => '{":v": 1}');
SELECT ddb_delete_item('counters', '{"PK": "c", "SK": "2"}', 'v = :v', vals => '{":v": 1}');
SELECT ddb_delete_item('counters', '{"PK": "c", "SK": "2"}', 'v = :v', vals => '{":v": 2}',
       return_values => 'ALL_OLD');
SELECT ddb_get_item('counters', '{"PK": "c", "SK": "2"}') IS NULL AS deleted;

-- Many distinct expressions: the cache stays bounded and keeps answering.
SELECT count(coalesce(ddb_update_item('counters', '{"PK": "c", "SK": "3"}', 'SET #n = :v',
       names => jsonb_build_object('#n', 'n' || i), vals => jsonb_build_object(':v', i)), '{}'))
  FROM generate_series(1, 200) i;
SELECT (ddb_expression_cache_stats() ->> 'entries')::int <= 64 AS bounded,
       (SELECT count(*) FROM jsonb_object_keys(ddb_get_item('counters', '{"PK": "c", "SK": "3"}'))) AS attributes;

-- PutItem and DeleteItem without a condition or return values on a table
-- with an index and a stream: both still see the old item.
SELECT ddb_create_table('wp_orders', 'PK', 'S', 'SK', 'S') IS NOT NULL AS created;
SELECT ddb_create_gsi('wp_orders', 'ByStatus', 'status') IS NOT NULL AS indexed;
SELECT ddb_update_stream('wp_orders', 'NEW_AND_OLD_IMAGES') ? 'LatestStreamArn' AS streaming;
SELECT ddb_put_item('wp_orders', '{"PK": "o", "SK": "1", "status": "NEW"}');
SELECT ddb_put_item('wp_orders', '{"PK": "o", "SK": "1", "status": "PAID"}');
SELECT x FROM ddb_query('wp_orders', '#s = :s', '{":s": "NEW"}', '{"#s": "status"}', index_name => 'ByStatus') x;
SELECT x FROM ddb_query('wp_orders', '#s = :s', '{":s": "PAID"}', '{"#s": "status"}', index_name => 'ByStatus') x;
SELECT ddb_delete_item('wp_orders', '{"PK": "o", "SK": "1"}');
SELECT count(*) AS index_entries FROM ddb_query('wp_orders', '#s = :s', '{":s": "PAID"}', '{"#s": "status"}', index_name => 'ByStatus') x;
SELECT r->>'eventName' AS event, r->'dynamodb'->'OldImage' AS old, r->'dynamodb'->'NewImage' AS new
  FROM ddb_stream_records('wp_orders') r;

-- Without an index or a stream the old item is not built; overwrites and
-- deletes are the same as ever.
SELECT ddb_put_item('counters', '{"PK": "p", "SK": "1", "v": 1}');
SELECT ddb_put_item('counters', '{"PK": "p", "SK": "1", "v": 2}');
SELECT ddb_put_item('counters', '{"PK": "p", "SK": "1", "v": 3}', return_values => 'ALL_OLD');
SELECT ddb_delete_item('counters', '{"PK": "p", "SK": "1"}');
SELECT ddb_delete_item('counters', '{"PK": "p", "SK": "1"}', return_values => 'ALL_OLD');
SELECT ddb_get_item('counters', '{"PK": "p", "SK": "1"}') IS NULL AS gone;

-- Many overwrites and updates of keys on leaves that split meanwhile: each
-- write finds its version where it read it, or through the map after a
-- split moved it; the tree stays sound.
SELECT count(coalesce(ddb_put_item('counters', jsonb_build_object('PK', 'k' || (i % 7), 'SK', lpad(i::text, 5, '0'), 'pad', repeat('x', 300))), '{}'))
  FROM generate_series(1, 600) i;
SELECT count(coalesce(ddb_put_item('counters', jsonb_build_object('PK', 'k' || (i % 7), 'SK', lpad(i::text, 5, '0'), 'pad', repeat('y', 300 + i % 50))), '{}'))
  FROM generate_series(1, 600, 3) i;
SELECT count(coalesce(ddb_update_item('counters', jsonb_build_object('PK', 'k' || (i % 7), 'SK', lpad(i::text, 5, '0')), 'ADD n :one', vals => '{":one": 1}'), '{}'))
  FROM generate_series(1, 600, 2) i;
SELECT count(coalesce(ddb_delete_item('counters', jsonb_build_object('PK', 'k' || (i % 7), 'SK', lpad(i::text, 5, '0'))), '{}'))
  FROM generate_series(1, 600, 5) i;
SELECT count(*) AS items, count(*) FILTER (WHERE item ? 'n') AS counted,
       count(*) FILTER (WHERE item->>'pad' LIKE 'y%') AS overwritten
  FROM counters WHERE "PK" LIKE 'k%';
SELECT (v ->> 'live')::int AS live FROM ddb_verify('counters') v;

-- PutItem of a new key inserts at the key's first leaf, which its read of
-- the current version found (one descent; checked builds start every other
-- such insert at the leftmost leaf, so the move right is tested too).  New
-- keys into leaves that split under them, in every partition, with
-- UpdateItem creating missing items the same way:
SELECT count(coalesce(ddb_put_item('counters', jsonb_build_object('PK', 'n' || (i % 5), 'SK', lpad((i * 7919 % 1000)::text, 4, '0'), 'pad', repeat('z', 200 + i % 400))), '{}'))
  FROM generate_series(1, 400) i;
SELECT count(coalesce(ddb_update_item('counters', jsonb_build_object('PK', 'n' || (i % 5), 'SK', 'u' || i), 'ADD n :one', vals => '{":one": 1}'), '{}'))
  FROM generate_series(1, 100) i;
SELECT count(*) AS items, count(DISTINCT "SK") AS keys FROM counters WHERE "PK" LIKE 'n%';
SELECT (v ->> 'live')::int AS live FROM ddb_verify('counters') v;
-- a key whose dead versions fill more than a leaf: the insert of the key
-- again checks them all, from the key's first leaf, and finds none live
BEGIN;
SELECT count(coalesce(ddb_put_item('counters', jsonb_build_object('PK', 'h', 'SK', '1', 'pad', repeat('v', 2000), 'i', i)), '{}'))
  FROM generate_series(1, 30) i;
SELECT ddb_delete_item('counters', '{"PK": "h", "SK": "1"}', return_values => 'ALL_OLD')->>'i' AS deleted;
SELECT ddb_put_item('counters', '{"PK": "h", "SK": "1", "again": true}', return_values => 'ALL_OLD') AS old;
SELECT ddb_put_item('counters', '{"PK": "h", "SK": "1", "again": false}', return_values => 'ALL_OLD') AS old;
COMMIT;
SELECT ddb_get_item('counters', '{"PK": "h", "SK": "1"}') AS item;
-- a duplicate still fails with unique_violation in SQL, and a conditional
-- create of an existing key fails its condition
INSERT INTO counters VALUES ('h', '1', '{}');
SELECT ddb_put_item('counters', '{"PK": "h", "SK": "1"}', 'attribute_not_exists(PK)');
SELECT (v ->> 'live')::int AS live FROM ddb_verify('counters') v;

-- The same under REPEATABLE READ: the version read is judged by the
-- transaction's snapshot.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT ddb_update_item('counters', '{"PK": "c", "SK": "1"}', 'ADD a :one', vals => '{":one": 1}', return_values => 'UPDATED_NEW');
SELECT ddb_put_item('counters', '{"PK": "c", "SK": "4", "v": 1}');
SELECT ddb_put_item('counters', '{"PK": "c", "SK": "4", "v": 2}', return_values => 'ALL_OLD');
SELECT ddb_delete_item('counters', '{"PK": "c", "SK": "4"}', return_values => 'ALL_OLD');
COMMIT;

-- A dropped and re-created table of the same name is the new table.
SELECT ddb_put_item('counters', '{"PK": "z", "SK": "1"}');
DROP TABLE counters;
SELECT ddb_put_item('counters', '{"PK": "z", "SK": "1"}');
SELECT ddb_create_table('counters', 'id', 'S') IS NOT NULL AS created;
SELECT ddb_put_item('counters', '{"PK": "z", "SK": "1"}');
SELECT ddb_put_item('counters', '{"id": "z", "v": 1}');
SELECT ddb_put_item('counters', '{"id": "z", "v": 2}', return_values => 'ALL_OLD');

-- SQL UPDATE and DELETE of many rows of one leaf: each finds its version
-- at the offset its key scan saw it at or, when an earlier write of the
-- same statement moved it (an update's new version goes in beside its old
-- one), elsewhere on that leaf.  Every row is changed once, the tree stays
-- sound.
CREATE TABLE seen ("PK" text, "SK" text, item jsonb) USING ddb;
INSERT INTO seen SELECT 'a', lpad(i::text, 3, '0'), jsonb_build_object('n', i)
  FROM generate_series(1, 30) i;
EXPLAIN (COSTS OFF) UPDATE seen SET item = item || '{"u": 1}' WHERE "PK" = 'a';
UPDATE seen SET item = item || '{"u": 1}' WHERE "PK" = 'a';
UPDATE seen SET item = item || '{"v": 1}' WHERE "PK" = 'a' AND "SK" >= '010';
DELETE FROM seen WHERE "PK" = 'a' AND "SK" < '005';
DELETE FROM seen WHERE "PK" = 'a' AND "SK" IN ('007', '020', '029');
SELECT count(*) AS items, count(*) FILTER (WHERE item ? 'u') AS updated,
       count(*) FILTER (WHERE item ? 'v') AS again, sum((item ->> 'n')::int) AS n
  FROM seen;
BEGIN;
UPDATE seen SET item = item || '{"w": 1}' WHERE "PK" = 'a' AND "SK" > '020';
DELETE FROM seen WHERE "PK" = 'a' AND "SK" > '025' RETURNING "SK", item ? 'w' AS w;
COMMIT;
SELECT count(*) AS items, string_agg("SK", ',' ORDER BY "SK") FILTER (WHERE item ? 'w') AS w
  FROM seen;
SELECT (v ->> 'live')::int AS live FROM ddb_verify('seen') v;

RESET search_path;
RESET ddb.schema;
DROP SCHEMA write_path CASCADE;
