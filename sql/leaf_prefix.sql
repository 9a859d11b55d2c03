-- Leaf prefixes (ddb_page.h, "Leaf prefix"): the bulk build (COPY into a
-- table created or truncated in the same transaction, VACUUM FULL) gives
-- each leaf the bytes every key of its key space starts with --
-- lcp(low bound, high key), kept in its high key -- and its items store
-- their keys without them.  This proves that such tables hold and return
-- exactly what a heap table given the same rows and the same writes
-- holds, through every reader (plain SQL, GetItem, Query both ways with
-- bounds below, inside and above a leaf's prefix, Scan) and every writer
-- (new keys, new partitions, updates, deletes, leaf splits, VACUUM's
-- unlinks, VACUUM FULL), that ddb_verify finds the trees sound after each
-- step, and that the prefixes are there (leaf_prefix_bytes) and save
-- leaves.  Run with a CHECKS build, every page a write changes is also
-- checked for order and for where its prefix is kept.  (The writes give
-- the leaves they split the prefix of their items, storage version 3:
-- sql/leaf_prefix_rows.sql.)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
\i test/regress/wait_no_xmin.sql
\i test/regress/twin_differ.sql
\i test/regress/twin_query_ok.sql
RESET client_min_messages;

-- n items, partition i % parts, sort keys '<stem>#nnnnnn' ascending (so
-- they arrive interleaved across partitions), COPY'd into tbl.
CREATE FUNCTION lp_copy(tbl regclass, n int, parts int, pk text, stem text)
RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  EXECUTE format('COPY %s FROM PROGRAM %L', tbl, format(
    $awk$awk 'BEGIN { for (i = 0; i < %s; i++) printf "%s%%d\t%s#%%06d\t{\"n\": %%d, \"note\": \"%%080d\"}\n", i %% %s, i, i, i }'$awk$,
    n, pk, stem, parts));
END
$f$;

-- ddb_verify's verdict and the prefix figures, in one row
CREATE FUNCTION lp_verify(t regclass, OUT live text, OUT storage_version text,
                          OUT prefixed bool, OUT leaf_pages int)
LANGUAGE sql AS $$
  SELECT v ->> 'live', v ->> 'storage_version',
         (v ->> 'leaf_prefix_bytes')::float > 20, (v ->> 'leaf_pages')::int
  FROM ddb_verify(t) v
$$;

CREATE TABLE lp_heap ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));
SELECT lp_copy('lp_heap', 6000, 20, 'CUST#', 'ORDER#2025-01-01T00:00:00');
-- the key-order path (an older file): leaves as splits make them, with the
-- prefix of their items (storage version 3; sql/leaf_prefix_rows.sql)
CREATE TABLE lp_rows ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT lp_copy('lp_rows', 6000, 20, 'CUST#', 'ORDER#2025-01-01T00:00:00');
BEGIN;
CREATE TABLE lp ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT lp_copy('lp', 6000, 20, 'CUST#', 'ORDER#2025-01-01T00:00:00');
COMMIT;
SELECT * FROM lp_verify('lp');
SELECT live, storage_version, prefixed FROM lp_verify('lp_rows');
-- the same items on as few leaves by both paths: each stores about 30
-- bytes less (the key-order path's last leaf, which has no prefix, keeps
-- the next rows under theirs when it splits: last_leaf_run_split; before
-- it did, that path took 8 % more leaves than the build), and the build's
-- leaves are no more than the key-order path's: each takes its items'
-- prefix, as a split does (storage version 3; the build of version 2 gave
-- a leaf its key space's, lcp(low bound, high key), and took 136)
SELECT (SELECT leaf_pages FROM lp_verify('lp_rows'))::float /
       (SELECT leaf_pages FROM lp_verify('lp')) < 1.03 AS as_few_leaves,
       (SELECT leaf_pages FROM lp_verify('lp')) <= (SELECT leaf_pages FROM lp_verify('lp_rows'))
         AS build_as_few,
       (SELECT leaf_pages FROM lp_verify('lp_rows')) AS rows_leaves;
SELECT twin_differ('lp', 'lp_heap') AS differ, twin_differ('lp_rows', 'lp_heap') AS rows_differ;

-- Readers.  Query, both ways, with bounds below every key of the
-- partition, inside its stem, at a key, and above every key.
SELECT c, twin_query_ok('lp', 'lp_heap', 'CUST#7', c, v) AS ok
FROM (VALUES ('PK = :p', '{}'::jsonb),
             ('PK = :p AND SK < :a', '{":a": "A"}'),
             ('PK = :p AND SK > :a', '{":a": "A"}'),
             ('PK = :p AND SK < :a', '{":a": "z"}'),
             ('PK = :p AND SK >= :a', '{":a": "z"}'),
             ('PK = :p AND SK > :a', '{":a": "ORDER#2025-01-01T00:00:00#002"}'),
             ('PK = :p AND SK <= :a', '{":a": "ORDER#2025-01-01T00:00:00#002"}'),
             ('PK = :p AND SK <= :a', '{":a": "ORDER#2025-01-01T00:00:00#003007"}'),
             ('PK = :p AND SK BETWEEN :a AND :b',
              '{":a": "ORDER#2025-01-01T00:00:00#001", ":b": "ORDER#2025-01-01T00:00:00#004"}'),
             ('PK = :p AND SK BETWEEN :a AND :b', '{":a": "ORDER", ":b": "ORDER#2025-01-01T"}'),
             ('PK = :p AND begins_with(SK, :a)', '{":a": "ORDER#2025-01-01T00:00:00#0045"}'),
             ('PK = :p AND begins_with(SK, :a)', '{":a": "ORDER#2025-01-02"}')) q(c, v);
-- The newest item of each partition (Query newest-first, limit 1) in one
-- descent: no leaf ends at a high key inside a partition that a backward
-- scan from the partition's end would have to step back from.
CREATE FUNCTION lp_newest_descents(t regclass, parts int) RETURNS int
LANGUAGE plpgsql AS $f$
DECLARE
  h int := (SELECT (v ->> 'height')::int FROM ddb_verify(t) v);
  plan json;
  over int := 0;
BEGIN
  FOR p IN 0 .. parts - 1 LOOP
    EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, FORMAT JSON) '
                   'SELECT item FROM %s WHERE "PK" = %L ORDER BY "SK" DESC LIMIT 1', t, 'CUST#' || p)
      INTO plan;
    IF (plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::int +
       (plan -> 0 -> 'Plan' ->> 'Shared Read Blocks')::int > h + 1 THEN
      over := over + 1;
    END IF;
  END LOOP;
  RETURN over;
END
$f$;
SELECT lp_newest_descents('lp', 20) AS partitions_read_twice;

-- GetItem and plain SQL point reads of every item of two partitions
SELECT count(*) AS got FROM lp_heap h
WHERE h."PK" IN ('CUST#3', 'CUST#19') AND
      ddb_get_item('lp', jsonb_build_object('PK', h."PK", 'SK', h."SK")) =
      h.item || jsonb_build_object('PK', h."PK", 'SK', h."SK");
SELECT count(*) AS got FROM lp_heap h
WHERE h."PK" = 'CUST#4' AND (SELECT l.item FROM lp l WHERE l."PK" = h."PK" AND l."SK" = h."SK") = h.item;
-- a missing key just below, inside and above a partition's stem
SELECT ddb_get_item('lp', '{"PK": "CUST#4", "SK": "ORDER"}') AS below,
       ddb_get_item('lp', '{"PK": "CUST#4", "SK": "ORDER#2025-01-01T00:00:00#000004x"}') AS inside,
       ddb_get_item('lp', '{"PK": "CUST#4", "SK": "P"}') AS above;
SELECT count(*) AS scanned FROM ddb_scan('lp');

-- Writers, the same on both tables.  New keys inside partitions' stems,
-- keys that share less of them, a new partition, updates and deletes.
CREATE FUNCTION lp_write(t regclass) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  FOR i IN 0 .. 199 LOOP
    PERFORM ddb_put_item(t, jsonb_build_object('PK', 'CUST#' || (i % 20),
                            'SK', 'ORDER#2025-01-01T00:00:00#' || lpad((i * 29)::text, 6, '0') || 'b',
                            'new', i));
    PERFORM ddb_put_item(t, jsonb_build_object('PK', 'CUST#' || (i % 20),
                            'SK', 'NOTE#' || i, 'new', i));
    PERFORM ddb_put_item(t, jsonb_build_object('PK', 'NEWCUST#' || (i % 7), 'SK', 'X' || i));
  END LOOP;
  FOR i IN 0 .. 99 LOOP
    PERFORM ddb_update_item(t, jsonb_build_object('PK', 'CUST#' || (i % 20),
                              'SK', 'ORDER#2025-01-01T00:00:00#' || lpad((i * 141 % 6000)::text, 6, '0')),
                            'SET n = n + :one', vals => '{":one": 1}');
    PERFORM ddb_delete_item(t, jsonb_build_object('PK', 'CUST#' || (i % 20),
                              'SK', 'ORDER#2025-01-01T00:00:00#' || lpad(((i * 21 + 20) % 6000)::text, 6, '0')));
  END LOOP;
END
$f$;
SELECT lp_write('lp');
-- the heap twin gets the same changes through SQL
INSERT INTO lp_heap
SELECT 'CUST#' || (i % 20), 'ORDER#2025-01-01T00:00:00#' || lpad((i * 29)::text, 6, '0') || 'b',
       jsonb_build_object('new', i)
FROM generate_series(0, 199) i;
INSERT INTO lp_heap SELECT 'CUST#' || (i % 20), 'NOTE#' || i, jsonb_build_object('new', i)
FROM generate_series(0, 199) i;
INSERT INTO lp_heap SELECT 'NEWCUST#' || (i % 7), 'X' || i, '{}'
FROM generate_series(0, 199) i;
UPDATE lp_heap SET item = jsonb_set(item, '{n}', to_jsonb((item ->> 'n')::int + 1))
WHERE ("PK", "SK") IN (SELECT 'CUST#' || (i % 20), 'ORDER#2025-01-01T00:00:00#' || lpad((i * 141 % 6000)::text, 6, '0')
                       FROM generate_series(0, 99) i);
DELETE FROM lp_heap
WHERE ("PK", "SK") IN (SELECT 'CUST#' || (i % 20), 'ORDER#2025-01-01T00:00:00#' || lpad(((i * 21 + 20) % 6000)::text, 6, '0')
                       FROM generate_series(0, 99) i);
-- plain SQL writes on the prefixed leaves too
UPDATE lp SET item = item || '{"sql": true}' WHERE "PK" = 'CUST#5' AND "SK" < 'ORDER#2025-01-01T00:00:00#001';
UPDATE lp_heap SET item = item || '{"sql": true}' WHERE "PK" = 'CUST#5' AND "SK" COLLATE "C" < 'ORDER#2025-01-01T00:00:00#001';
-- (the leaves split: many more items than the build left room for)
SELECT live, storage_version, prefixed FROM lp_verify('lp');
SELECT twin_differ('lp', 'lp_heap') AS differ;
SELECT c, twin_query_ok('lp', 'lp_heap', 'CUST#7', c, v) AS ok
FROM (VALUES ('PK = :p', '{}'::jsonb),
             ('PK = :p AND SK > :a', '{":a": "ORDER#2025-01-01T00:00:00#002"}'),
             ('PK = :p AND begins_with(SK, :a)', '{":a": "NOTE#1"}')) q(c, v);

-- Key changes are refused on a prefixed leaf as on any (the key compared whole)
UPDATE lp SET "SK" = 'ORDER#2025-01-01T00:00:00#999999' WHERE "PK" = 'CUST#5' AND "SK" = 'ORDER#2025-01-01T00:00:00#000005';

-- VACUUM after deleting whole partitions: emptied leaves are unlinked
-- where the right sibling's prefix starts the emptied leaf's low bound.
DELETE FROM lp WHERE "PK" IN ('CUST#3', 'CUST#4', 'CUST#11');
DELETE FROM lp_heap WHERE "PK" IN ('CUST#3', 'CUST#4', 'CUST#11');
SELECT wait_no_xmin();
VACUUM lp;
SELECT live, storage_version, prefixed FROM lp_verify('lp');
SELECT (v ->> 'deleted_pages')::int > 0 AS unlinked FROM ddb_verify('lp') v;
SELECT twin_differ('lp', 'lp_heap') AS differ;
INSERT INTO lp SELECT 'CUST#3', 'BACK#' || i, '{}' FROM generate_series(1, 300) i;
INSERT INTO lp_heap SELECT 'CUST#3', 'BACK#' || i, '{}' FROM generate_series(1, 300) i;
SELECT live, storage_version, prefixed FROM lp_verify('lp');
SELECT twin_differ('lp', 'lp_heap') AS differ;

-- Many small partitions, every third deleted: some emptied leaves begin a
-- partition, their low bound in the partition before, while their right
-- sibling's prefix holds its own partition's key.  In storage version 2,
-- whose prefix is the key space's, unlinking those would give the sibling
-- a key space its prefix does not start (ddb_verify: "leaf prefix ... is
-- not shared by the leaf's low bound"), so they stay (TAP 027 runs that);
-- version 3's prefix is the items', which the unlink leaves as they are,
-- and every emptied leaf goes.
BEGIN;
CREATE TABLE lp3 ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT lp_copy('lp3', 16000, 200, 'CUST#', 'ORDER#2025-01-01T00:00:00');
COMMIT;
SELECT lp_newest_descents('lp3', 200) AS partitions_read_twice;
DELETE FROM lp3 WHERE "PK" IN (SELECT 'CUST#' || i FROM generate_series(0, 199, 3) i);
SELECT wait_no_xmin();
VACUUM lp3;
SELECT v ->> 'items' AS items, (v ->> 'deleted_pages')::int > 20 AS unlinked
FROM ddb_verify('lp3') v;
SELECT count(*) AS n, count(DISTINCT "PK") AS partitions FROM lp3;
INSERT INTO lp3 SELECT 'CUST#' || i, 'AGAIN', '{}' FROM generate_series(0, 199, 3) i;
SELECT v ->> 'items' AS items FROM ddb_verify('lp3') v;
DROP TABLE lp3;

-- VACUUM FULL builds the tree again, with prefixes
VACUUM FULL lp;
SELECT live, storage_version, prefixed FROM lp_verify('lp');
SELECT twin_differ('lp', 'lp_heap') AS differ;
SELECT c, twin_query_ok('lp', 'lp_heap', 'CUST#8', c, v) AS ok
FROM (VALUES ('PK = :p', '{}'::jsonb),
             ('PK = :p AND SK BETWEEN :a AND :b', '{":a": "NOTE#1", ":b": "ORDER#2025-01-01T00:00:00#001"}')) q(c, v);

-- TRUNCATE and COPY in one transaction: the bulk build again
BEGIN;
TRUNCATE lp;
SELECT lp_copy('lp', 6000, 20, 'CUST#', 'ORDER#2025-01-01T00:00:00');
COMMIT;
TRUNCATE lp_heap;
SELECT lp_copy('lp_heap', 6000, 20, 'CUST#', 'ORDER#2025-01-01T00:00:00');
SELECT live, storage_version, prefixed FROM lp_verify('lp');
SELECT twin_differ('lp', 'lp_heap') AS differ;

-- Long partition keys (1,500 bytes): leaves whose prefixes hold most of
-- each key, so that an item stores a few bytes of it.  Reads, writes and
-- splits as above.
CREATE TABLE lpl_heap ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));
SELECT lp_copy('lpl_heap', 1500, 3, repeat('p', 1500), 'S');
BEGIN;
CREATE TABLE lpl ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT lp_copy('lpl', 1500, 3, repeat('p', 1500), 'S');
COMMIT;
SELECT live, storage_version, (v ->> 'leaf_prefix_bytes')::float > 1000 AS long_prefixes
FROM lp_verify('lpl'), ddb_verify('lpl') v;
SELECT twin_differ('lpl', 'lpl_heap') AS differ;
SELECT twin_query_ok('lpl', 'lpl_heap', repeat('p', 1500) || '1', 'PK = :p AND SK BETWEEN :a AND :b',
                   '{":a": "S#000100", ":b": "S#000900"}') AS ok;
INSERT INTO lpl SELECT repeat('p', 1500) || (i % 3), 'S#000500x' || i, '{}' FROM generate_series(1, 200) i;
INSERT INTO lpl_heap SELECT repeat('p', 1500) || (i % 3), 'S#000500x' || i, '{}' FROM generate_series(1, 200) i;
UPDATE lpl SET item = '{"u": 1}' WHERE "SK" LIKE 'S#0007%';
UPDATE lpl_heap SET item = '{"u": 1}' WHERE "SK" LIKE 'S#0007%';
DELETE FROM lpl WHERE "SK" LIKE 'S#0003%';
DELETE FROM lpl_heap WHERE "SK" LIKE 'S#0003%';
SELECT ddb_get_item('lpl', jsonb_build_object('PK', repeat('p', 1500) || '2', 'SK', 'S#000701')) ->> 'u' AS u;
SELECT live, storage_version FROM lp_verify('lpl');
SELECT twin_differ('lpl', 'lpl_heap') AS differ;

-- Number sort keys
BEGIN;
CREATE TABLE lpn ("PK" text, "SK" numeric, item jsonb) USING ddb;
INSERT INTO lpn SELECT 'P' || (i % 5), 1000000 + i * 3, '{}' FROM generate_series(1, 3000) i;
COMMIT;
SELECT live FROM lp_verify('lpn');
VACUUM FULL lpn;
-- (hash, partition key and the numbers' first digits)
SELECT v ->> 'items' AS items, (v ->> 'leaf_prefix_bytes')::float > 8 AS prefixed
FROM ddb_verify('lpn') v;
SELECT count(*) AS n, min((i ->> 'SK')::numeric), max((i ->> 'SK')::numeric)
FROM ddb_query('lpn', 'PK = :p AND SK BETWEEN :a AND :b', '{":p": "P2", ":a": 1000100, ":b": 1004000}') i;
SELECT count(*) AS n FROM lpn WHERE "PK" = 'P3' AND "SK" > 1008000;

-- The build's leaves whose prefix does not fit after their high key
-- (ddb_build.c, leaf_end_v3).  A leaf ends before a key that shares less
-- of its items' prefix than they do, so that its high key, the separator
-- before that key, does not hold the prefix.
CREATE FUNCTION lp_awk(tbl regclass, prog text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  EXECUTE format('COPY %s FROM PROGRAM %L', tbl, format($awk$awk 'BEGIN { %s }'$awk$, prog));
END
$f$;
-- (a) 2,000-byte partition keys, four items of 1,200 bytes a group of sort
-- keys: a leaf a group, ending before the next group, which shares all
-- but the last digit.  A copy of the prefix (2,010 bytes) after the high
-- key (2,009) would make it longer than any separator may be, so each
-- leaf takes the part of the prefix its high key holds.
CREATE TABLE lpc_heap ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));
SELECT lp_awk('lpc_heap', $p$s = sprintf("%2000s", ""); gsub(/ /, "a", s); x = sprintf("%1200s", ""); gsub(/ /, "x", x); for (g = 0; g < 3; g++) for (j = 0; j < 4; j++) printf "%s	%03d#%d	{\"x\": \"%s\"}\n", s, g, j, x$p$);
BEGIN;
CREATE TABLE lpc ("PK" text, "SK" text, item jsonb) USING ddb;
SET LOCAL client_min_messages = debug1;
SELECT lp_awk('lpc', $p$s = sprintf("%2000s", ""); gsub(/ /, "a", s); x = sprintf("%1200s", ""); gsub(/ /, "x", x); for (g = 0; g < 3; g++) for (j = 0; j < 4; j++) printf "%s	%03d#%d	{\"x\": \"%s\"}\n", s, g, j, x$p$);
COMMIT;
-- (b) 990-byte stems in the sort keys, groups of three: a leaf that ends
-- where the groups' first digit changes (099 to 100), the items a byte
-- longer under the prefix its high key holds, has no room for them or
-- for a copy, and ends an item earlier.
CREATE TABLE lpe_heap ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));
SELECT lp_awk('lpe_heap', $p$s = sprintf("%990s", ""); gsub(/ /, "a", s); x = sprintf("%50s", ""); gsub(/ /, "x", x); for (g = 0; g < 300; g++) for (j = 0; j < 3; j++) printf "P0\t%s%03d#%03d\t{\"pad\": \"%s\"}\n", s, g, j, substr(x, 1, (g * 13 + j * 7) % 50)$p$);
BEGIN;
CREATE TABLE lpe ("PK" text, "SK" text, item jsonb) USING ddb;
SET LOCAL client_min_messages = debug1;
SELECT lp_awk('lpe', $p$s = sprintf("%990s", ""); gsub(/ /, "a", s); x = sprintf("%50s", ""); gsub(/ /, "x", x); for (g = 0; g < 300; g++) for (j = 0; j < 3; j++) printf "P0\t%s%03d#%03d\t{\"pad\": \"%s\"}\n", s, g, j, substr(x, 1, (g * 13 + j * 7) % 50)$p$);
COMMIT;
SELECT t, live, storage_version, twin_differ(t, (t || '_heap')::regclass) AS differ
FROM unnest(ARRAY['lpc', 'lpe']::regclass[]) t, lp_verify(t);
SELECT c, twin_query_ok('lpc', 'lpc_heap', repeat('a', 2000), c, v) AS lpc_ok,
       twin_query_ok('lpe', 'lpe_heap', 'P0', c, v) AS lpe_ok
FROM (VALUES ('PK = :p', '{}'::jsonb),
             ('PK = :p AND SK BETWEEN :a AND :b', '{":a": "000#3", ":b": "002#0"}'),
             ('PK = :p AND SK > :a', '{":a": "001"}'),
             ('PK = :p AND begins_with(SK, :a)', '{":a": "001"}')) q(c, v);
SELECT twin_query_ok('lpe', 'lpe_heap', 'P0', 'PK = :p AND SK BETWEEN :a AND :b',
                     jsonb_build_object(':a', repeat('a', 990) || '098', ':b', repeat('a', 990) || '101')) AS lpe_boundary_ok;
-- writes into those leaves: keys between the groups, updates, deletes
INSERT INTO lpc SELECT repeat('a', 2000), lpad(g::text, 3, '0') || '#' || j || 'b', '{}' FROM generate_series(0, 2) g, generate_series(0, 3) j;
INSERT INTO lpc_heap SELECT repeat('a', 2000), lpad(g::text, 3, '0') || '#' || j || 'b', '{}' FROM generate_series(0, 2) g, generate_series(0, 3) j;
INSERT INTO lpe SELECT 'P0', repeat('a', 990) || '099#' || i, '{}' FROM generate_series(1, 40) i;
INSERT INTO lpe_heap SELECT 'P0', repeat('a', 990) || '099#' || i, '{}' FROM generate_series(1, 40) i;
UPDATE lpe SET item = '{"u": 1}' WHERE "SK" LIKE '%a09%';
UPDATE lpe_heap SET item = '{"u": 1}' WHERE "SK" LIKE '%a09%';
DELETE FROM lpe WHERE "SK" LIKE '%a10%';
DELETE FROM lpe_heap WHERE "SK" LIKE '%a10%';
SELECT t, live, twin_differ(t, (t || '_heap')::regclass) AS differ
FROM unnest(ARRAY['lpc', 'lpe']::regclass[]) t, lp_verify(t);

-- A partition that grows at the table's end: its keys go to the table's
-- last leaf, which has no high key to keep a prefix in and fills with
-- whole keys.  With a 990-byte stem in every sort key, a whole item takes
-- about 1,100 bytes and one under the stem about 110: a last leaf of
-- whole keys holds 7, and its splits used to leave leaves of 5 to 7 items
-- behind (a fifth full), by a key-order COPY into a table created
-- earlier as by single inserts.  Now the split bounds the left half by
-- the partition's end and keeps the partition's next keys there under
-- their prefix (ddb_tree.c, last_leaf_append_split and
-- last_leaf_run_split): about as few leaves as the build's.
CREATE TABLE lpt_heap ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));
CREATE TABLE lpt_rows ("PK" text, "SK" text, item jsonb) USING ddb;
CREATE TABLE lpt_ins ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT lp_awk(t, $p$s = sprintf("%990s", ""); gsub(/ /, "a", s); for (p = 0; p < 3; p++) for (g = 0; g < 300; g++) printf "P%d\t%s%05d\t{\"pad\": \"%s\"}\n", p, s, g, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"$p$)
FROM unnest(ARRAY['lpt_heap', 'lpt_rows']::regclass[]) t;
BEGIN;
CREATE TABLE lpt ("PK" text, "SK" text, item jsonb) USING ddb;
INSERT INTO lpt SELECT * FROM lpt_heap;
COMMIT;
VACUUM FULL lpt;
-- one partition, row by row in key order
INSERT INTO lpt_ins SELECT * FROM lpt_heap WHERE "PK" = 'P1' ORDER BY "SK";
SELECT (SELECT leaf_pages FROM lp_verify('lpt_rows'))::float /
       (SELECT leaf_pages FROM lp_verify('lpt')) < 1.1 AS copy_as_few,
       (v ->> 'leaf_fill')::float > 0.5 AS rows_fill_ok, v ->> 'leaf_prefix_copies' AS copies
FROM ddb_verify('lpt_ins') v;
SELECT twin_differ('lpt_rows', 'lpt_heap') AS differ, twin_differ('lpt', 'lpt_heap') AS build_differ,
       (SELECT count(*) FROM ((TABLE lpt_ins EXCEPT ALL SELECT * FROM lpt_heap WHERE "PK" = 'P1')
                              UNION ALL (SELECT * FROM lpt_heap WHERE "PK" = 'P1' EXCEPT ALL TABLE lpt_ins)) d)
         AS rows_differ;
SELECT twin_query_ok('lpt_rows', 'lpt_heap', 'P2', c, v) AS ok
FROM (VALUES ('PK = :p', '{}'::jsonb),
             ('PK = :p AND SK BETWEEN :a AND :b', jsonb_build_object(':a', repeat('a', 990) || '00100', ':b', repeat('a', 990) || '00200'))) q(c, v);
-- and the writes after: the partition's end, a key below its stem, a new
-- partition, updates and deletes, on both
INSERT INTO lpt_rows SELECT 'P' || (i % 4), repeat('a', 990) || lpad((300 + i)::text, 5, '0'), '{}' FROM generate_series(0, 99) i;
INSERT INTO lpt_heap SELECT 'P' || (i % 4), repeat('a', 990) || lpad((300 + i)::text, 5, '0'), '{}' FROM generate_series(0, 99) i;
INSERT INTO lpt_rows VALUES ('P2', 'below', '{}');
INSERT INTO lpt_heap VALUES ('P2', 'below', '{}');
UPDATE lpt_rows SET item = '{"u": 1}' WHERE "SK" LIKE '%0015_';
UPDATE lpt_heap SET item = '{"u": 1}' WHERE "SK" LIKE '%0015_';
DELETE FROM lpt_rows WHERE "SK" LIKE '%0016_';
DELETE FROM lpt_heap WHERE "SK" LIKE '%0016_';
SELECT live, twin_differ('lpt_rows', 'lpt_heap') AS differ FROM lp_verify('lpt_rows');

-- Partitions that grow inside the table, by a key-order COPY into a table
-- created earlier (ddb_tree_insert_multi): COPY hands its rows over in
-- batches, and a split made room for a batch's run of appended keys in an
-- empty right half, which kept the split leaf's prefix (the partition
-- part), so the run went in with whole keys (five items of about 1,400
-- bytes) and the next batch split the leaf again: leaves of five items
-- under a 1,000-byte stem, a quarter full, three times the build's.  Now
-- a leaf about to split takes its items' prefix first when that frees an
-- eighth of it (ddb_leaf_lengthen_prefix): as many leaves as the build's.
CREATE TABLE lpm_heap ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));
CREATE TABLE lpm_rows ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT lp_awk(t, $p$s = sprintf("%1000s", ""); gsub(/ /, "x", s); y = sprintf("%300s", ""); gsub(/ /, "y", y); for (p = 0; p < 8; p++) for (g = 0; g < 250; g++) printf "P%d\t%s%08d\t{\"pad\": \"%s\"}\n", p, s, g, y$p$)
FROM unnest(ARRAY['lpm_heap', 'lpm_rows']::regclass[]) t;
BEGIN;
CREATE TABLE lpm ("PK" text, "SK" text, item jsonb) USING ddb;
INSERT INTO lpm SELECT * FROM lpm_heap;
COMMIT;
VACUUM FULL lpm;
SELECT live, (SELECT leaf_pages FROM lp_verify('lpm_rows'))::float /
       (SELECT leaf_pages FROM lp_verify('lpm')) < 1.1 AS copy_as_few,
       twin_differ('lpm_rows', 'lpm_heap') AS differ
FROM lp_verify('lpm_rows');
SELECT twin_query_ok('lpm_rows', 'lpm_heap', 'P5', c, v) AS ok
FROM (VALUES ('PK = :p', '{}'::jsonb),
             ('PK = :p AND SK BETWEEN :a AND :b', jsonb_build_object(':a', repeat('x', 1000) || '00000100', ':b', repeat('x', 1000) || '00000200'))) q(c, v);
-- and writes into the re-laid leaves: a key that shares less of the
-- prefix (the leaf's prefix shrinks again), updates, deletes
INSERT INTO lpm_rows SELECT 'P' || (i % 8), repeat('x', 999) || 'w' || i, '{}' FROM generate_series(0, 39) i;
INSERT INTO lpm_heap SELECT 'P' || (i % 8), repeat('x', 999) || 'w' || i, '{}' FROM generate_series(0, 39) i;
UPDATE lpm_rows SET item = '{"u": 1}' WHERE "SK" LIKE '%0000015_';
UPDATE lpm_heap SET item = '{"u": 1}' WHERE "SK" LIKE '%0000015_';
DELETE FROM lpm_rows WHERE "SK" LIKE '%0000016_';
DELETE FROM lpm_heap WHERE "SK" LIKE '%0000016_';
SELECT live, twin_differ('lpm_rows', 'lpm_heap') AS differ FROM lp_verify('lpm_rows');

DROP TABLE lp, lp_rows, lp_heap, lpl, lpl_heap, lpn, lpc, lpc_heap, lpe, lpe_heap, lpt, lpt_rows, lpt_ins, lpt_heap, lpm, lpm_rows, lpm_heap;
DROP FUNCTION lp_copy, twin_differ, lp_verify, twin_query_ok, lp_write, lp_newest_descents, lp_awk, wait_no_xmin;
