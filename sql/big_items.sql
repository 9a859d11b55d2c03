-- Every item DynamoDB accepts is stored, whatever its neighbours: keys up
-- to DynamoDB's limits (partition 2048 bytes, sort 1024) beside attributes
-- of any size, including the sizes just around what a leaf page holds next
-- to such a key (the toaster must count the key), and long keys that make
-- long separators (a split must always find room for the new item).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

SELECT setseed(0.42);
-- n characters of hex noise, which pglz cannot compress
CREATE FUNCTION pg_temp.noise(n int) RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT left(string_agg(md5(random()::text), ''), n) FROM generate_series(1, n / 32 + 1)
$$;

-- 1. The grid: partition key lengths x sort key lengths x attribute sizes.
SELECT ddb_create_table('grid', 'PK', 'S', 'SK', 'S');
CREATE TEMP TABLE grid_want AS
SELECT left(chr(65 + ai::int) || chr(65 + si) || chr(65 + pi) || repeat('p', 2048), pl) AS pk,
       left(chr(65 + si) || chr(65 + ai::int) || chr(65 + pi) || repeat('s', 1024), sl) AS sk,
       pg_temp.noise(attr) AS pad, attr
FROM (VALUES (0, 1), (1, 1024), (2, 2047), (3, 2048)) p(pi, pl),
     (VALUES (0, 1), (1, 512), (2, 1023), (3, 1024)) s(si, sl),
     unnest(ARRAY[1200, 1500, 1700, 1800, 1850, 1900, 1950, 2000, 2100, 3000, 5000, 9000])
       WITH ORDINALITY a(attr, ai);
SELECT count(*) AS items, max(length(pk)) AS max_pk, max(length(sk)) AS max_sk FROM grid_want;

-- item API puts, then read back through GetItem, Query and SQL
SELECT count(*) FROM grid_want WHERE ddb_put_item('grid', jsonb_build_object('PK', pk, 'SK', sk, 'pad', pad)) IS NULL;
SELECT count(*) FILTER (WHERE ddb_get_item('grid', jsonb_build_object('PK', pk, 'SK', sk)) ->> 'pad' = pad) AS read_back
FROM grid_want;
SELECT count(*) AS same_in_sql FROM grid g JOIN grid_want w ON g."PK" = w.pk AND g."SK" = w.sk
WHERE g.item ->> 'pad' = w.pad;

-- every item updated to another size across the same limits, through SQL
UPDATE grid SET item = jsonb_build_object('pad', pg_temp.noise(3200 - length(item ->> 'pad') % 2900));
SELECT count(*) AS resized FROM grid g JOIN grid_want w ON g."PK" = w.pk AND g."SK" = w.sk
WHERE length(g.item ->> 'pad') <> w.attr;
SELECT (v ->> 'live')::int AS live FROM ddb_verify('grid') v;

-- and through the item API, then deleted
SELECT count(*) FROM grid_want
WHERE ddb_update_item('grid', jsonb_build_object('PK', pk, 'SK', sk), 'SET #p = :p',
                      names => '{"#p": "pad"}', vals => jsonb_build_object(':p', pad)) IS NULL;
SELECT count(*) FILTER (WHERE ddb_get_item('grid', jsonb_build_object('PK', pk, 'SK', sk)) ->> 'pad' = pad) AS updated
FROM grid_want;
DELETE FROM grid WHERE length("PK") > 1024;
SELECT (v ->> 'live')::int AS live FROM ddb_verify('grid') v;

-- the same grid through SQL INSERT and COPY's path (multi-insert)
CREATE TABLE grid_sql (pk text, sk text, item jsonb) USING ddb;
INSERT INTO grid_sql SELECT pk, sk, jsonb_build_object('pad', pad) FROM grid_want;
SELECT count(*) AS same_in_sql FROM grid_sql g JOIN grid_want w USING (pk, sk) WHERE g.item ->> 'pad' = w.pad;
SELECT (v ->> 'live')::int AS live FROM ddb_verify('grid_sql') v;

-- 2. Splits with long separators: one 2048-byte partition key, sort keys
-- of up to 1024 bytes sharing long prefixes (so high keys and separators
-- are long), attribute sizes mixed, arriving in random order.  Some new
-- items fit beside neither neighbour on their leaf.
SELECT ddb_create_table('seps', 'PK', 'S', 'SK', 'S');
CREATE TEMP TABLE seps_want AS
SELECT repeat('P', 2048) AS pk,
       repeat('s', (897 + random() * 124)::int) || lpad(i::text, 3, '0') AS sk,
       pg_temp.noise((random() * 2400)::int) AS pad, random() AS ord
FROM generate_series(1, 300) i;
SELECT count(*) FROM (SELECT * FROM seps_want ORDER BY ord) w
WHERE ddb_put_item('seps', jsonb_build_object('PK', pk, 'SK', sk, 'pad', pad)) IS NULL;
SELECT count(*) FILTER (WHERE ddb_get_item('seps', jsonb_build_object('PK', pk, 'SK', sk)) ->> 'pad' = pad) AS read_back
FROM seps_want;
SELECT (v ->> 'live')::int AS live, (v ->> 'height')::int > 1 AS split FROM ddb_verify('seps') v;
-- Query returns the partition in sort-key order
SELECT bool_and(a.sk = b.sk) AS in_order, count(*) AS n
FROM (SELECT q ->> 'SK' AS sk, row_number() OVER () AS r
      FROM ddb_query('seps', 'PK = :p', jsonb_build_object(':p', repeat('P', 2048))) q) a
JOIN (SELECT sk, row_number() OVER (ORDER BY sk COLLATE "C") AS r FROM seps_want) b USING (r);

-- Long keys in ascending and in descending order: every insert lands at
-- an end of the tree, whose edge nodes have no bound on one side.  The
-- tree must stay shallow (it once grew a level every two inserts).
CREATE TABLE ends (pk text, sk text, item jsonb) USING ddb;
INSERT INTO ends SELECT repeat('P', 2048), repeat('s', 1000) || lpad(i::text, 5, '0'), '{}'
FROM generate_series(1, 400) i ORDER BY i DESC;
SELECT (v ->> 'live')::int AS live, (v ->> 'height')::int <= 4 AS shallow FROM ddb_verify('ends') v;
TRUNCATE ends;
INSERT INTO ends SELECT repeat('P', 2048), repeat('s', 1000) || lpad(i::text, 5, '0'), '{}'
FROM generate_series(1, 400) i ORDER BY i;
SELECT (v ->> 'live')::int AS live, (v ->> 'height')::int <= 4 AS shallow FROM ddb_verify('ends') v;
SELECT count(*) FILTER (WHERE ddb_get_item('ends', jsonb_build_object('pk', repeat('P', 2048),
         'sk', repeat('s', 1000) || lpad(i::text, 5, '0'))) IS NOT NULL) AS found
FROM generate_series(1, 400) i;
-- Partitions side by side, loaded in other orders: a node spanning the
-- boundary between two partitions has separators that share no long
-- prefix, and its splits must send the short separator between the
-- partitions up (it once grew a level every few inserts there).
INSERT INTO ends SELECT repeat('D', 2048), repeat('s', 1000) || lpad(i::text, 5, '0'), '{}'
FROM generate_series(1, 400) i ORDER BY i DESC;
SELECT setseed(0.5);
INSERT INTO ends SELECT repeat('R', 2048), repeat('s', 1000) || lpad(i::text, 5, '0'), '{}'
FROM generate_series(1, 400) i ORDER BY random();
SELECT (v ->> 'live')::int AS live, (v ->> 'height')::int <= 4 AS shallow FROM ddb_verify('ends') v;
-- VACUUM FULL's bottom-up build gives internal pages prefixes too (it once
-- built a tree of height 11 here)
VACUUM FULL ends;
SELECT (v ->> 'live')::int AS live, (v ->> 'height')::int <= 4 AS shallow FROM ddb_verify('ends') v;
SELECT count(*) FILTER (WHERE ddb_get_item('ends', jsonb_build_object('pk', repeat(p, 2048),
         'sk', repeat('s', 1000) || lpad(i::text, 5, '0'))) IS NOT NULL) AS found
FROM generate_series(1, 400) i, unnest(ARRAY['P', 'D', 'R']) p;
DROP TABLE ends;

-- The batch path (ddb_tree_insert_multi: BatchWriteItem, COPY's row path)
-- splits a full leaf once for all of the batch's items that belong on it
-- (ddb_split_point_for_run), or, when not even two of them fit on a half,
-- for the first one alone.  That split was asked to leave room for the
-- whole run, which no split can beside a long high key; with a leaf of
-- one item it found none and the batch failed with "could not find a
-- split point".  Long keys, ascending within each batch of 20 and 25.
CREATE TABLE batch_seps (pk text, sk text, item jsonb) USING ddb;
SELECT p, b, ddb_batch_write_item(jsonb_build_object('batch_seps', (
  SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
    jsonb_build_object('pk', repeat(' ', 1989) || p, 'sk', repeat(' ', 999) || 'S' || i,
                       'p', repeat(' ', (i * 37) % 400) || 'v'))))
  FROM generate_series(b, least(b + size - 1, last)) i))) -> 'UnprocessedItems' AS unprocessed
FROM (VALUES ('P', 20, 40), ('Q', 25, 100)) c(p, size, last), generate_series(1, last, size) b
ORDER BY p, b;
SELECT (v ->> 'live')::int AS live FROM ddb_verify('batch_seps') v;
SELECT count(*) FILTER (WHERE ddb_get_item('batch_seps', jsonb_build_object('pk', repeat(' ', 1989) || p,
         'sk', repeat(' ', 999) || 'S' || i)) ->> 'p' = repeat(' ', (i * 37) % 400) || 'v') AS found
FROM generate_series(1, 100) i, unnest(ARRAY['P', 'Q']) p WHERE p = 'Q' OR i <= 40;
DROP TABLE batch_seps;

-- the same with partition keys only (no sort key): 2048-byte keys that
-- differ in their last bytes, items of mixed sizes
CREATE TABLE pks (pk text, item jsonb) USING ddb;
INSERT INTO pks SELECT repeat('k', 2044) || lpad(i::text, 4, '0'), jsonb_build_object('pad', pg_temp.noise((random() * 2400)::int))
FROM generate_series(1, 300) i ORDER BY random();
SELECT count(*) AS n, (SELECT (v ->> 'live')::int FROM ddb_verify('pks') v) AS live FROM pks;

-- SET STORAGE: PLAIN and EXTERNAL keep values uncompressed, and an item
-- too big for a leaf still goes out of line (a heap table with PLAIN
-- storage refuses the row); the default compresses.
CREATE TABLE st_plain (pk text, item jsonb) USING ddb;
ALTER TABLE st_plain ALTER COLUMN item SET STORAGE PLAIN;
CREATE TABLE st_external (pk text, item jsonb) USING ddb;
ALTER TABLE st_external ALTER COLUMN item SET STORAGE EXTERNAL;
CREATE TABLE st_default (pk text, item jsonb) USING ddb;
INSERT INTO st_plain VALUES ('a', jsonb_build_object('x', repeat('y', 20000)));
INSERT INTO st_external VALUES ('a', jsonb_build_object('x', repeat('y', 20000)));
INSERT INTO st_default VALUES ('a', jsonb_build_object('x', repeat('y', 20000)));
SELECT t, pg_column_size(item) AS stored, length(item ->> 'x') AS length
FROM (SELECT 'plain' AS t, item FROM st_plain UNION ALL SELECT 'external', item FROM st_external
      UNION ALL SELECT 'default', item FROM st_default) s ORDER BY t;
SELECT pg_relation_size(reltoastrelid) >= 20000 AS in_toast FROM pg_class WHERE relname = 'st_plain';
DROP TABLE st_plain, st_external, st_default;

DROP TABLE grid, grid_sql, seps, pks;
