-- The leaf reserve as a per-table setting (ddb_tree.c, ddb_fillfactor and
-- ddb_leaf_reserve_bytes): WITH (fillfactor = N) on a ddb table is how full
-- inserts of new keys and the bulk builds (VACUUM FULL, a bulk COPY) leave
-- a leaf; the rest of the page stays free for new versions of its keys.
-- Proves: the setting is accepted, stored and reported by ddb_verify
-- (default when unset, also when other storage parameters are set);
-- PostgreSQL's own range errors; a build fills leaves to it and not beyond;
-- inserts of new keys keep the reserve; updates use it instead of
-- splitting; ALTER TABLE ... SET changes it for the next build.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

-- Accepted and stored; ddb_verify reports the one in force.
CREATE TABLE ff_default ("PK" text, "SK" text, item jsonb) USING ddb;
CREATE TABLE ff_70 ("PK" text, "SK" text, item jsonb) USING ddb WITH (fillfactor = 70);
CREATE TABLE ff_100 ("PK" text, "SK" text, item jsonb) USING ddb WITH (fillfactor = 100);
-- other parameters alone leave the default (heap's parser reads 100 then)
CREATE TABLE ff_other ("PK" text, "SK" text, item jsonb) USING ddb WITH (autovacuum_enabled = false);
CREATE TABLE ff_both ("PK" text, "SK" text, item jsonb) USING ddb
  WITH (autovacuum_enabled = false, fillfactor = 100);
SELECT relname, reloptions, ddb_verify(oid::regclass) ->> 'fillfactor' AS fillfactor
FROM pg_class WHERE relname LIKE 'ff\_%' ORDER BY relname;

-- Out of range or not a number: PostgreSQL's own errors, nothing changes.
CREATE TABLE ff_bad ("PK" text, "SK" text, item jsonb) USING ddb WITH (fillfactor = 9);
CREATE TABLE ff_bad ("PK" text, "SK" text, item jsonb) USING ddb WITH (fillfactor = 101);
CREATE TABLE ff_bad ("PK" text, "SK" text, item jsonb) USING ddb WITH (fillfactor = 'full');
ALTER TABLE ff_70 SET (fillfactor = 0);
ALTER TABLE ff_70 SET (fillfactor = 150);
SELECT to_regclass('ff_bad') AS ff_bad, (SELECT reloptions FROM pg_class WHERE relname = 'ff_70');

-- ALTER TABLE ... SET and RESET change it (a relcache invalidation).
ALTER TABLE ff_other SET (fillfactor = 85);
SELECT ddb_verify('ff_other') ->> 'fillfactor' AS fillfactor;
ALTER TABLE ff_other RESET (fillfactor);
SELECT ddb_verify('ff_other') ->> 'fillfactor' = ddb_verify('ff_default') ->> 'fillfactor' AS back_to_default;
DROP TABLE ff_default, ff_other, ff_both;

-- A build fills leaves up to the fillfactor and not beyond: at most the
-- fillfactor, at least the fillfactor less one item (~250 bytes of a page
-- here) and a high key.  The same 6,000 items (60 partitions x 100, loaded
-- interleaved), rebuilt by VACUUM FULL at 70 and at 100.
INSERT INTO ff_70
  SELECT 'CUST#' || (i % 60), 'ORDER#' || lpad((i / 60)::text, 4, '0'),
         jsonb_build_object('note', repeat('x', 150), 'n', i)
  FROM generate_series(0, 5999) i ORDER BY i;
INSERT INTO ff_100 SELECT * FROM ff_70;
VACUUM FULL ff_70;
VACUUM FULL ff_100;
SELECT relname, (v ->> 'leaf_fill')::float BETWEEN ff / 100.0 - 0.04 AND ff / 100.0 AS fill_as_set,
       v ->> 'items' AS items
FROM (VALUES ('ff_70', 70), ('ff_100', 100)) t(relname, ff), ddb_verify(relname::regclass) v;

-- The bulk COPY build too (CREATE TABLE and COPY in one transaction).
BEGIN;
CREATE TABLE ff_bulk ("PK" text, "SK" text, item jsonb) USING ddb WITH (fillfactor = 80);
COPY ff_bulk FROM PROGRAM 'awk ''BEGIN { for (i = 0; i < 6000; i++) printf "CUST#%d\tORDER#%06d\t{\"note\": \"%0150d\"}\n", i % 60, i, i }''';
COMMIT;
SELECT (v ->> 'leaf_fill')::float BETWEEN 0.76 AND 0.80 AS fill_as_set, v ->> 'items' AS items
FROM ddb_verify('ff_bulk') v;
DROP TABLE ff_bulk;

-- Updates use the reserve: one statement updates one item on 60 leaves
-- (sort key 0050 of every partition).  The new version goes beside the one
-- it replaces: at fillfactor 70 every one finds room and no leaf splits;
-- at 100 every one of those leaves splits.
CREATE TEMP TABLE ff_before AS
  SELECT relname, (ddb_verify(relname::regclass) ->> 'leaf_pages')::int AS leaves
  FROM (VALUES ('ff_70'), ('ff_100')) t(relname);
UPDATE ff_70 SET item = item || '{"u": 1}' WHERE "SK" = 'ORDER#0050';
UPDATE ff_100 SET item = item || '{"u": 1}' WHERE "SK" = 'ORDER#0050';
SELECT b.relname, (v ->> 'leaf_pages')::int - b.leaves AS splits, v ->> 'live' AS live
FROM ff_before b, ddb_verify(b.relname::regclass) v ORDER BY b.relname;

-- Inserts of new keys keep the reserve: one partition appended to in
-- sort-key order (each split leaves the left half at the fillfactor).
-- With several partitions the row path's fill also depends on how their
-- sizes round to pages (README, Performance), which this avoids.
CREATE TABLE ff_seq ("PK" text, "SK" text, item jsonb) USING ddb WITH (fillfactor = 70);
INSERT INTO ff_seq
  SELECT 'CUST#1', 'ORDER#' || lpad(i::text, 5, '0'), jsonb_build_object('note', repeat('x', 150))
  FROM generate_series(0, 5999) i ORDER BY i;
-- (The fill as stored, under the leaves' prefixes: the partition, the
-- table's last, fills a leaf bounded by its end, not the last leaf of
-- whole keys (ddb_tree.c, last_leaf_append_split).  When it filled the
-- last leaf, the fill counted with whole keys was the fillfactor, 0.62
-- as stored.)
SELECT (v ->> 'leaf_fill')::float BETWEEN 0.66 AND 0.70 AS fill_as_set FROM ddb_verify('ff_seq') v;
ALTER TABLE ff_seq SET (fillfactor = 100);
INSERT INTO ff_seq
  SELECT 'CUST#1', 'ORDER#' || lpad(i::text, 5, '0'), jsonb_build_object('note', repeat('x', 150))
  FROM generate_series(6000, 11999) i ORDER BY i;
VACUUM FULL ff_seq;
SELECT (v ->> 'leaf_fill')::float > 0.95 AS full_after_alter, v ->> 'items' AS items
FROM ddb_verify('ff_seq') v;

-- At fillfactor 10 a leaf of the bulk build still takes a second item
-- (a leaf takes two whatever the reserve, as an insert may): 1,800-byte
-- partition keys, 40 rows each, two a leaf.  Where a partition ends, the
-- leaf keeps the partition key once, in a copy after a high key in the
-- next partition, which the two items fit beside without the reserve.
BEGIN;
CREATE TABLE ff_10 ("PK" text, "SK" text, item jsonb) USING ddb WITH (fillfactor = 10);
COPY ff_10 FROM PROGRAM $$awk 'BEGIN { s = sprintf("%1800s", ""); gsub(/ /, "p", s); for (i = 0; i < 400; i++) printf "%s%d\tS%05d\t{\"n\": %d}\n", s, i % 10, i, i }'$$;
COMMIT;
SELECT v ->> 'items' AS items, v ->> 'leaf_pages' AS leaves, (v ->> 'leaf_prefix_copies')::int > 0 AS copies
FROM ddb_verify('ff_10') v;
SELECT count(*) AS found FROM ff_10 WHERE "PK" = repeat('p', 1800) || '7' AND "SK" > 'S00100';

DROP TABLE ff_70, ff_100, ff_seq, ff_10;
