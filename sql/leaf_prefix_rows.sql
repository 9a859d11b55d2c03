-- Leaf prefixes of tables written row by row (storage version 3,
-- ddb_page.h "Leaf prefix"): a split gives each half the prefix its items
-- share -- kept in its high key, or copied after it when the high key lies
-- in another partition (leaf_prefix_copies) -- and a key that shares less
-- of a leaf's prefix (a new partition whose hash falls in another one's
-- last leaf, a sort key below the partition's stem) shrinks it first,
-- re-laying the leaf.  This proves that such tables hold exactly what a
-- heap twin given the same writes holds, through every writer (PutItem,
-- SQL INSERT, COPY's row path, BatchWriteItem, updates, deletes, VACUUM's
-- unlinks, VACUUM FULL) and reader (GetItem, Query both ways, plain SQL),
-- that ddb_verify finds the trees sound after each step, and that the
-- prefixes and their copies are there.  Run with a CHECKS build, every
-- page a write changes is also checked for order and for where its prefix
-- is kept.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
\i test/regress/twin_differ.sql
\i test/regress/twin_query_ok.sql
RESET client_min_messages;

-- ddb_verify's verdict and the prefix figures, in one row
CREATE FUNCTION lr_shape(t regclass, OUT live int, OUT storage_version text,
                         OUT prefix_bytes float, OUT copies int, OUT leaf_pages int)
LANGUAGE sql AS $$
  SELECT (v ->> 'live')::int, v ->> 'storage_version', (v ->> 'leaf_prefix_bytes')::float,
         (v ->> 'leaf_prefix_copies')::int, (v ->> 'leaf_pages')::int
  FROM ddb_verify(t) v
$$;

-- Every key of the twin found by GetItem with its item
CREATE FUNCTION lr_get_all(t regclass, h regclass) RETURNS bigint
LANGUAGE plpgsql AS $f$
DECLARE
  n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %s h WHERE ddb_get_item(%L, jsonb_build_object(''PK'', h."PK", ''SK'', h."SK"))'
                 ' IS NOT DISTINCT FROM h.item || jsonb_build_object(''PK'', h."PK", ''SK'', h."SK")', h, t)
    INTO n;
  RETURN n;
END
$f$;

-- 1. SQL INSERT, one row at a time as an application writes, 4,000 items
-- interleaved over 100 partitions (each grows at its end).
CREATE TABLE lr ("PK" text, "SK" text, item jsonb) USING ddb;
CREATE TABLE lr_heap ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));
DO $$
BEGIN
  FOR i IN 0 .. 3999 LOOP
    INSERT INTO lr VALUES ('CUST#' || i % 100, 'ORDER#2025-06-01T00:00:00#' || lpad(i::text, 6, '0'),
                           jsonb_build_object('n', i, 'note', repeat('x', 80)));
  END LOOP;
END $$;
INSERT INTO lr_heap SELECT * FROM lr;
-- the partitions' stems are stored once a leaf, and the leaves at a
-- partition's end keep a copy beside a high key in the next partition
SELECT live, storage_version, prefix_bytes > 30 AS prefixed, copies > 0 AS copied
FROM lr_shape('lr');
SELECT twin_differ('lr', 'lr_heap') AS differ;
-- the oracles see a difference: an attribute, a key
UPDATE lr_heap SET item = item || '{"x": 1}' WHERE "PK" = 'CUST#7' AND "SK" LIKE '%000007';
SELECT twin_differ('lr', 'lr_heap') AS differ;
UPDATE lr_heap SET item = item - 'x' WHERE "PK" = 'CUST#7' AND "SK" LIKE '%000007';
UPDATE lr_heap SET "SK" = "SK" || 'x' WHERE "PK" = 'CUST#7' AND "SK" LIKE '%000107';
SELECT twin_query_ok('lr', 'lr_heap', 'CUST#7', 'PK = :p', '{}') AS query_ok;
UPDATE lr_heap SET "SK" = rtrim("SK", 'x') WHERE "PK" = 'CUST#7' AND "SK" LIKE '%000107x';
SELECT twin_query_ok('lr', 'lr_heap', 'CUST#7', 'PK = :p', '{}') AS query_ok;

-- 2. The same items through PutItem, in the same order, and through
-- BatchWriteItem in batches of 25: the same rows, the same shape.
CREATE TABLE lr_put ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT count(*) FROM (
  SELECT ddb_put_item('lr_put', item || jsonb_build_object('PK', "PK", 'SK', "SK"))
  FROM lr_heap ORDER BY item -> 'n') p;
CREATE TABLE lr_batch ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT count(*) FILTER (WHERE r -> 'UnprocessedItems' = '{}') AS batches FROM (
  SELECT ddb_batch_write_item(jsonb_build_object('lr_batch', jsonb_agg(
           jsonb_build_object('PutRequest', jsonb_build_object('Item',
             item || jsonb_build_object('PK', "PK", 'SK', "SK"))) ORDER BY (item -> 'n')::int))) r
  FROM lr_heap GROUP BY (item ->> 'n')::int / 25) b;
SELECT twin_differ('lr_put', 'lr_heap') AS put_differ, twin_differ('lr_batch', 'lr_heap') AS batch_differ;
SELECT (SELECT leaf_pages FROM lr_shape('lr_put')) = (SELECT leaf_pages FROM lr_shape('lr')) AS put_same_leaves,
       (SELECT live FROM lr_shape('lr_batch')) AS batch_live;

-- 3. COPY into the table created earlier (its row path, batches of new
-- keys placed leaf by leaf): 2,000 more items, 40 partitions of them new.
COPY lr FROM PROGRAM $$awk 'BEGIN { for (i = 4000; i < 6000; i++) printf "CUST#%d\tORDER#2025-06-01T00:00:00#%06d\t{\"n\": %d, \"note\": \"%080d\"}\n", i % 140, i, i, 0 }'$$;
COPY lr_heap FROM PROGRAM $$awk 'BEGIN { for (i = 4000; i < 6000; i++) printf "CUST#%d\tORDER#2025-06-01T00:00:00#%06d\t{\"n\": %d, \"note\": \"%080d\"}\n", i % 140, i, i, 0 }'$$;
SELECT live, prefix_bytes > 30 AS prefixed FROM lr_shape('lr');
SELECT twin_differ('lr', 'lr_heap') AS differ;

-- 4. Keys that share less of their leaf's prefix: a sort key below every
-- partition's stem (its leaf's prefix shrinks to the partition key), new
-- partitions of one item each (their hashes fall inside other partitions'
-- leaves), through SQL, PutItem and COPY's row path.
SELECT prefix_bytes AS before_bytes FROM lr_shape('lr') \gset
INSERT INTO lr SELECT 'CUST#' || p, 'ALERT', '{"a": 1}' FROM generate_series(0, 139) p;
INSERT INTO lr_heap SELECT 'CUST#' || p, 'ALERT', '{"a": 1}' FROM generate_series(0, 139) p;
SELECT count(*) FROM (SELECT ddb_put_item('lr', jsonb_build_object('PK', 'NEW#' || p, 'SK', 'S', 'p', p))
                      FROM generate_series(1, 300) p) x;
INSERT INTO lr_heap SELECT 'NEW#' || p, 'S', jsonb_build_object('p', p) FROM generate_series(1, 300) p;
COPY lr FROM PROGRAM $$awk 'BEGIN { for (p = 1; p <= 300; p++) printf "OTHER#%d\tS\t{\"p\": %d}\n", p, p }'$$;
COPY lr_heap FROM PROGRAM $$awk 'BEGIN { for (p = 1; p <= 300; p++) printf "OTHER#%d\tS\t{\"p\": %d}\n", p, p }'$$;
SELECT live, prefix_bytes < :before_bytes AS shrunk FROM lr_shape('lr');
SELECT twin_differ('lr', 'lr_heap') AS differ;

-- 5. Readers: GetItem of every key, Query with bounds below, inside and
-- above the stem, both ways, plain SQL in key order both ways.
SELECT lr_get_all('lr', 'lr_heap') = (SELECT count(*) FROM lr_heap) AS every_key_found;
SELECT c, twin_query_ok('lr', 'lr_heap', 'CUST#7', c, v) AS ok
FROM (VALUES
  ('PK = :p', '{}'::jsonb),
  ('PK = :p AND SK < :a', '{":a": "ORDER#2025-06-01T00:00:00#001000"}'),
  ('PK = :p AND SK >= :a', '{":a": "ORDER#2025-06-01T00:00:00#003507"}'),
  ('PK = :p AND SK BETWEEN :a AND :b', '{":a": "B", ":b": "ORDER#2025-06-01T00:00:00#002"}'),
  ('PK = :p AND SK > :a', '{":a": "ORDER#2026"}'),
  ('PK = :p AND SK <= :a', '{":a": "ALERT"}')) q(c, v);
SELECT count(*) FILTER (WHERE NOT ok) AS partitions_wrong FROM (
  SELECT twin_query_ok('lr', 'lr_heap', 'CUST#' || p, 'PK = :p', '{}') AS ok FROM generate_series(0, 139) p) q;
SELECT (SELECT array_agg("SK" ORDER BY "SK" COLLATE "C") FROM lr WHERE "PK" = 'CUST#42') =
       (SELECT array_agg("SK" ORDER BY "SK" COLLATE "C") FROM lr_heap WHERE "PK" = 'CUST#42') AS sql_forward,
       (SELECT array_agg("SK" ORDER BY "SK" COLLATE "C" DESC) FROM lr WHERE "PK" = 'CUST#42') =
       (SELECT array_agg("SK" ORDER BY "SK" COLLATE "C" DESC) FROM lr_heap WHERE "PK" = 'CUST#42') AS sql_backward;

-- 6. Updates (new versions beside the old), deletes, VACUUM's unlinks,
-- new keys into the emptied key ranges, then VACUUM FULL.
UPDATE lr SET item = item || '{"u": 1}' WHERE "PK" IN ('CUST#3', 'CUST#4', 'NEW#5');
UPDATE lr_heap SET item = item || '{"u": 1}' WHERE "PK" IN ('CUST#3', 'CUST#4', 'NEW#5');
DELETE FROM lr WHERE "PK" LIKE 'CUST#1_' OR ("PK" LIKE 'CUST#2%' AND "SK" < 'ORDER#2025-06-01T00:00:00#003000');
DELETE FROM lr_heap WHERE "PK" LIKE 'CUST#1_' OR ("PK" LIKE 'CUST#2%' AND "SK" < 'ORDER#2025-06-01T00:00:00#003000');
VACUUM lr;
SELECT (v ->> 'deleted_pages')::int > 0 AS unlinked FROM ddb_verify('lr') v;
INSERT INTO lr SELECT 'CUST#1' || p % 10, 'B#' || lpad(p::text, 4, '0'), '{"b": 1}' FROM generate_series(0, 199) p;
INSERT INTO lr_heap SELECT 'CUST#1' || p % 10, 'B#' || lpad(p::text, 4, '0'), '{"b": 1}' FROM generate_series(0, 199) p;
SELECT live = (SELECT count(*) FROM lr_heap) AS live_ok, prefix_bytes > 5 AS prefixed FROM lr_shape('lr');
SELECT twin_differ('lr', 'lr_heap') AS differ;
-- (the build keeps a leaf's prefix in a copy where the leaf ends before a
-- key that shares less of it: where a partition's last leaf ends)
VACUUM FULL lr;
SELECT live = (SELECT count(*) FROM lr_heap) AS live_ok, copies AS copies_after_build FROM lr_shape('lr');
SELECT twin_differ('lr', 'lr_heap') AS differ;
INSERT INTO lr SELECT 'CUST#' || p, 'ORDER#2025-07', '{"c": 1}' FROM generate_series(0, 139) p;
INSERT INTO lr_heap SELECT 'CUST#' || p, 'ORDER#2025-07', '{"c": 1}' FROM generate_series(0, 139) p;
SELECT live = (SELECT count(*) FROM lr_heap) AS live_ok FROM lr_shape('lr');
SELECT twin_differ('lr', 'lr_heap') AS differ;

-- 7. Long keys: 1,900-byte partition keys and 1,000-byte sort keys, row
-- by row.  A leaf's prefix is then most of each key; a copy of it never
-- makes the high key longer than the longest separator, so an item of any
-- size still fits beside the high key when a split needs it alone.
CREATE TABLE lr_long ("PK" text, "SK" text, item jsonb) USING ddb;
CREATE TABLE lr_long_heap ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));
INSERT INTO lr_long SELECT lpad((i % 6)::text, 1900, 'p'), lpad(i::text, 1000, 's'),
                           jsonb_build_object('pad', repeat('z', (i * 37) % 2500))
FROM generate_series(1, 300) i;
INSERT INTO lr_long_heap SELECT lpad((i % 6)::text, 1900, 'p'), lpad(i::text, 1000, 's'),
                                jsonb_build_object('pad', repeat('z', (i * 37) % 2500))
FROM generate_series(1, 300) i;
SELECT live, prefix_bytes > 1000 AS prefixed FROM lr_shape('lr_long');
SELECT twin_differ('lr_long', 'lr_long_heap') AS differ;
-- short sort keys below the stem: every leaf of a partition they reach shrinks
INSERT INTO lr_long SELECT lpad(p::text, 1900, 'p'), 'a' || p, '{"a": 1}' FROM generate_series(0, 5) p;
INSERT INTO lr_long_heap SELECT lpad(p::text, 1900, 'p'), 'a' || p, '{"a": 1}' FROM generate_series(0, 5) p;
SELECT live FROM lr_shape('lr_long');
SELECT twin_differ('lr_long', 'lr_long_heap') AS differ;

DROP TABLE lr, lr_heap, lr_put, lr_batch, lr_long, lr_long_heap;
DROP FUNCTION lr_shape(regclass), twin_query_ok(regclass, regclass, text, text, jsonb),
              lr_get_all(regclass, regclass), twin_differ(regclass, regclass);
