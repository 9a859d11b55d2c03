-- A leaf split makes its halves in place (ddb_tree.c, ddb_split_leaf_left
-- and _right): the right half is copied from the leaf to the new page, the
-- left half compacted on the leaf itself.  These loads split leaves that
-- hold items of mixed sizes (a few bytes to a third of a page), versions
-- that the splitting transaction itself made dead (an update's old
-- versions beside the new ones, which no prune may remove yet) and
-- rolled-back inserts' items, in key orders that put the new item first,
-- last and in the middle of its leaf, and rightmost leaves (no high key)
-- as well as inner ones.  After each, ddb_verify checks every page's
-- layout, order and high keys, and the items read back equal a heap copy
-- written by the same statements.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;

-- wait_no_xmin(), before the VACUUMs whose pruning this file checks
\i test/regress/wait_no_xmin.sql
RESET client_min_messages;

-- incompressible text of n bytes, so that long items stay on the page
CREATE FUNCTION sip_text(seed int, n int) RETURNS text
LANGUAGE sql IMMUTABLE
RETURN substr((SELECT string_agg(md5((seed * 1000 + g)::text), '')
               FROM generate_series(0, n / 32) g), 1, n);

CREATE TABLE sip ("PK" text, "SK" text, item jsonb) USING ddb;
CREATE TABLE sip_heap ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));

-- mixed sizes: every 7th item long (up to ~2,000 bytes), the rest 10 to
-- 400 bytes; three partitions, keys arriving out of order
CREATE TEMP TABLE sip_rows AS
  SELECT 'P' || (i % 3) AS "PK", 'S' || lpad(((i * 7919) % 1500)::text, 5, '0') AS "SK",
         jsonb_build_object('n', i, 'pad', sip_text(i, CASE WHEN i % 7 = 0 THEN 1200 + (i * 13) % 800
                                                          ELSE 10 + (i * 37) % 390 END)) AS item
  FROM generate_series(0, 1499) i;
INSERT INTO sip SELECT * FROM sip_rows;
INSERT INTO sip_heap SELECT * FROM sip_rows;
SELECT (v ->> 'items')::int AS items, (v ->> 'leaf_pages')::int > 20 AS split
FROM ddb_verify('sip') v;

-- dead versions on the leaves as they split: one transaction updates a
-- third of the items (each old version stays beside its new one, dead to
-- later snapshots but not prunable while the transaction runs), then adds
-- items between them, splitting the leaves that hold both
TRUNCATE sip_rows;
INSERT INTO sip_rows
  SELECT 'P' || (i % 3), 'S' || lpad(((i * 7919) % 1500)::text, 5, '0') || 'b',
         jsonb_build_object('n', i, 'pad', sip_text(i, 50 + (i * 53) % 900))
  FROM generate_series(0, 1499) i;
BEGIN;
UPDATE sip SET item = item || jsonb_build_object('u', sip_text(("item" ->> 'n')::int, 300))
WHERE ("item" ->> 'n')::int % 3 = 0;
UPDATE sip_heap SET item = item || jsonb_build_object('u', sip_text(("item" ->> 'n')::int, 300))
WHERE ("item" ->> 'n')::int % 3 = 0;
INSERT INTO sip SELECT * FROM sip_rows;
INSERT INTO sip_heap SELECT * FROM sip_rows;
COMMIT;
-- (ddb_verify after the commit: inside the transaction, with Generic WAL,
-- the new versions' row-id map entries are still deferred)
SELECT (v ->> 'items')::int > (v ->> 'live')::int AS dead_versions_on_leaves
FROM ddb_verify('sip') v;

-- rolled-back items among the live ones, then more items at the ends of
-- each partition (appends: the leaf splits after the new item) and before
-- their first items
BEGIN;
INSERT INTO sip
  SELECT 'P' || (i % 3), 'S' || lpad(((i * 7919) % 1500)::text, 5, '0') || 'r',
         jsonb_build_object('pad', sip_text(i, 700))
  FROM generate_series(0, 499) i;
ROLLBACK;
TRUNCATE sip_rows;
INSERT INTO sip_rows
  SELECT 'P' || (i % 3), CASE WHEN i < 600 THEN 'T' || lpad(i::text, 5, '0')
                              ELSE 'A' || lpad((1600 - i)::text, 5, '0') END,
         jsonb_build_object('n', i, 'pad', sip_text(i, 20 + (i * 29) % 1500))
  FROM generate_series(0, 1199) i;
INSERT INTO sip SELECT * FROM sip_rows ORDER BY ("item" ->> 'n')::int;
INSERT INTO sip_heap SELECT * FROM sip_rows;

SELECT (v ->> 'live')::int AS live FROM ddb_verify('sip') v;
-- the same items as the heap copy, in key order
SELECT count(*) AS differing FROM (
  (SELECT * FROM sip EXCEPT ALL SELECT * FROM sip_heap)
  UNION ALL
  (SELECT * FROM sip_heap EXCEPT ALL SELECT * FROM sip)) d;
SELECT bool_and(a."SK" = b."SK") AS same_order
FROM (SELECT "SK", row_number() OVER () AS r FROM sip WHERE "PK" = 'P1') a
JOIN (SELECT "SK", row_number() OVER (ORDER BY "SK") AS r FROM sip_heap WHERE "PK" = 'P1') b
  USING (r);

-- vacuum removes the dead versions; the tree stays sound
SELECT wait_no_xmin();
VACUUM sip;
SELECT (v ->> 'items')::int = (v ->> 'live')::int AS only_live
FROM ddb_verify('sip') v;

DROP TABLE sip, sip_heap, sip_rows;
DROP FUNCTION sip_text(int, int);
DROP FUNCTION wait_no_xmin();
