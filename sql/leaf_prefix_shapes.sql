-- Leaf prefixes (ddb_page.h, "Leaf prefix") on adversarial key shapes,
-- each table against a heap twin given the same rows and the same writes,
-- with ddb_verify after every step (a CHECKS build also checks every page
-- a write changes, its prefix included): binary keys made of 0x00 and
-- 0xFF runs (the bytes the key encoding escapes, and the largest byte,
-- which no separator can grow); number sort keys of both signs, zero and
-- extreme exponents; string sort keys with a long common stem, read with
-- bounds that are proper prefixes of the leaves' prefixes, bounds that
-- leave them, and begins_with; keys of about 3,000 encoded bytes whose
-- last leaf is too full to be the rightmost at full length (leaf_finish
-- in ddb_build.c); and a table without a sort key of many tiny
-- partitions.  sql/leaf_prefix.sql covers the readers and writers on the
-- usual key shapes.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
\i test/regress/wait_no_xmin.sql
\i test/regress/twin_differ.sql
RESET client_min_messages;

-- ddb_verify's verdict: its count of live items (not of all versions,
-- which depends on what the prunes of the writes could remove) and
-- whether the leaves have prefixes
CREATE FUNCTION ps_verify(t regclass, OUT live int, OUT prefixed bool)
LANGUAGE sql AS $$
  SELECT (v ->> 'live')::int, (v ->> 'leaf_prefix_bytes')::float > 0 FROM ddb_verify(t) v
$$;

-- The sort keys of partition pk that satisfy sql_cond (on "SK", with $1 as
-- the bound) in order, both ways, from the ddb table through plain SQL
-- (its key scan) and from the heap twin: the number of the 2 x 2
-- comparisons that fail.
CREATE FUNCTION ps_sql_ok(t regclass, h regclass, pk anyelement, cond text, bound anycompatible)
RETURNS int LANGUAGE plpgsql AS $f$
DECLARE
  q text := '(SELECT array_agg(x) FROM (SELECT "SK" x FROM %s WHERE "PK" = $1 AND ' ||
            cond || ' ORDER BY "SK" %s) s)';
  up bool;
  down bool;
BEGIN
  EXECUTE format('SELECT %s IS DISTINCT FROM %s', format(q, t, 'ASC'), format(q, h, 'ASC'))
    INTO up USING pk, bound;
  EXECUTE format('SELECT %s IS DISTINCT FROM %s', format(q, t, 'DESC'), format(q, h, 'DESC'))
    INTO down USING pk, bound;
  RETURN up::int + down::int;
END
$f$;

-- 1. Binary keys: partition keys of 30 bytes of 0xFF and one more byte,
-- sort keys of 0xFF runs, then 0x00 runs, then a counter.
CREATE TABLE psb_heap (pk bytea, sk bytea, item jsonb, PRIMARY KEY (pk, sk));
CREATE TABLE psb (pk bytea, sk bytea, item jsonb) USING ddb WITH (autovacuum_enabled = false);
INSERT INTO psb_heap
SELECT decode(repeat('ff', 30) || lpad(to_hex(i % 7), 2, '0'), 'hex'),
       decode(repeat('ff', 20 + i % 3) || lpad(to_hex(i % 256), 2, '0') || repeat('00', i % 5) ||
              lpad(to_hex(i / 256), 4, '0'), 'hex'),
       jsonb_build_object('n', i)
FROM generate_series(0, 7999) i;
INSERT INTO psb SELECT * FROM psb_heap;
VACUUM FULL psb;
ALTER TABLE psb RENAME COLUMN pk TO "PK";
ALTER TABLE psb RENAME COLUMN sk TO "SK";
ALTER TABLE psb_heap RENAME COLUMN pk TO "PK";
ALTER TABLE psb_heap RENAME COLUMN sk TO "SK";
SELECT * FROM ps_verify('psb');
SELECT twin_differ('psb', 'psb_heap') AS differ;
-- bounds: inside the 0xFF runs, at their end, in the 0x00 runs, past all
SELECT b AS bound, c AS cond, ps_sql_ok('psb', 'psb_heap', decode(repeat('ff', 30) || '03', 'hex'), c, decode(b, 'hex')) AS failed
FROM unnest(ARRAY[repeat('ff', 10), repeat('ff', 20), repeat('ff', 21), repeat('ff', 22),
                  repeat('ff', 21) || '80', repeat('ff', 21) || '8000', repeat('ff', 20) || '0300000000',
                  repeat('ff', 40), '00', 'fe']) b,
     unnest(ARRAY['"SK" < $2', '"SK" <= $2', '"SK" > $2', '"SK" >= $2']) c
WHERE ps_sql_ok('psb', 'psb_heap', decode(repeat('ff', 30) || '03', 'hex'), c, decode(b, 'hex')) <> 0;
-- writes: new keys ending in 0x00 runs and in 0xFF, updates, deletes
INSERT INTO psb SELECT "PK", "SK" || '\x0000'::bytea, '{"new": 1}' FROM psb_heap WHERE (item ->> 'n')::int % 3 = 0;
INSERT INTO psb SELECT "PK", "SK" || '\xff'::bytea, '{"new": 2}' FROM psb_heap WHERE (item ->> 'n')::int % 7 = 1;
INSERT INTO psb_heap SELECT "PK", "SK" || '\x0000'::bytea, '{"new": 1}' FROM psb_heap WHERE (item ->> 'n')::int % 3 = 0;
INSERT INTO psb_heap SELECT "PK", "SK" || '\xff'::bytea, '{"new": 2}' FROM psb_heap WHERE (item ->> 'n')::int % 7 = 1;
UPDATE psb SET item = item || '{"u": 1}' WHERE (item ->> 'n')::int % 4 = 0;
UPDATE psb_heap SET item = item || '{"u": 1}' WHERE (item ->> 'n')::int % 4 = 0;
DELETE FROM psb WHERE (item ->> 'n')::int BETWEEN 1000 AND 6000;
DELETE FROM psb_heap WHERE (item ->> 'n')::int BETWEEN 1000 AND 6000;
SELECT * FROM ps_verify('psb');
SELECT twin_differ('psb', 'psb_heap') AS differ;
SELECT wait_no_xmin();
VACUUM psb;
SELECT * FROM ps_verify('psb');
SELECT twin_differ('psb', 'psb_heap') AS differ;
SELECT count(*) AS failed FROM unnest(ARRAY[repeat('ff', 21), repeat('ff', 21) || '0000', repeat('ff', 22) || 'ff']) b,
     unnest(ARRAY['"SK" < $2', '"SK" >= $2']) c, generate_series(0, 6) p
WHERE ps_sql_ok('psb', 'psb_heap', decode(repeat('ff', 30) || lpad(to_hex(p), 2, '0'), 'hex'), c, decode(b, 'hex')) <> 0;
VACUUM FULL psb;
SELECT * FROM ps_verify('psb');
SELECT twin_differ('psb', 'psb_heap') AS differ;

-- 2. Number sort keys: both signs, zero, exponents near both ends, and
-- the same stem of digits (the prefix) under many of them.  Query (and
-- the key scan) with bounds at, between and beyond them, both ways.
CREATE TABLE psn_heap ("PK" text, "SK" numeric, item jsonb, PRIMARY KEY ("PK", "SK"));
CREATE TABLE psn ("PK" text, "SK" numeric, item jsonb) USING ddb WITH (autovacuum_enabled = false);
INSERT INTO psn_heap
SELECT 'P' || (i % 4),
       (ARRAY[-1, 1, 1e100, 1e-100, -1e-120, 123456789])[i % 6 + 1] * (1 + i::numeric / 1000003),
       jsonb_build_object('n', i)
FROM generate_series(1, 6000) i;
INSERT INTO psn_heap VALUES ('P0', 0, '{}'), ('P1', 0, '{}'), ('P2', 1e125, '{}'), ('P2', -1e125, '{}'),
                            ('P3', 1e-129, '{}'), ('P3', -1e-129, '{}');
INSERT INTO psn SELECT * FROM psn_heap;
VACUUM FULL psn;
SELECT * FROM ps_verify('psn');
SELECT twin_differ('psn', 'psn_heap') AS differ;
CREATE FUNCTION psn_query_ok(pk text, cond text, sqlcond text, vals jsonb) RETURNS bool
LANGUAGE plpgsql AS $f$
DECLARE
  s text := replace(replace(sqlcond, ':a', coalesce(vals ->> ':a', 'NULL') || '::numeric'),
                    ':b', coalesce(vals ->> ':b', 'NULL') || '::numeric');
  want_f numeric[]; want_b numeric[]; got_f numeric[]; got_b numeric[];
BEGIN
  EXECUTE format('SELECT array_agg("SK" ORDER BY "SK"), array_agg("SK" ORDER BY "SK" DESC) '
                 'FROM psn_heap WHERE "PK" = %L AND %s', pk, s) INTO want_f, want_b;
  SELECT array_agg((i ->> 'SK')::numeric) INTO got_f
    FROM ddb_query('psn', 'PK = :p AND ' || cond, vals || jsonb_build_object(':p', pk)) i;
  SELECT array_agg((i ->> 'SK')::numeric) INTO got_b
    FROM ddb_query('psn', 'PK = :p AND ' || cond, vals || jsonb_build_object(':p', pk), forward => false) i;
  RETURN got_f IS NOT DISTINCT FROM want_f AND got_b IS NOT DISTINCT FROM want_b AND
         (vals ? ':b' OR
          ps_sql_ok('psn', 'psn_heap', pk, replace(sqlcond, ':a', '$2'), (vals ->> ':a')::numeric) = 0);
END
$f$;
SELECT b AS bound, c AS cond, p AS pk
FROM unnest(ARRAY['0', '-1', '1', '1e100', '1e-100', '-1e-120', '123456789', '1.00001', '-1.00001',
                  '1.0000099', '1e125', '-1e125', '1e-129', '-1e-129', '2', '-2', '9.9e99', '12345678']) b,
     unnest(ARRAY['SK < :a', 'SK <= :a', 'SK > :a', 'SK >= :a', 'SK = :a']) c,
     unnest(ARRAY['P0', 'P1', 'P2', 'P3']) p
WHERE NOT psn_query_ok(p, c, replace(c, 'SK', '"SK"'), jsonb_build_object(':a', b::numeric));
SELECT a, b FROM unnest(ARRAY['-1e125', '-1', '0', '1e-100', '1', '1.00001', '123456789', '1e100']) a,
                 unnest(ARRAY['-1e-120', '1', '1.000005', '2', '1e100', '1e125']) b
WHERE a::numeric <= b::numeric AND
      NOT psn_query_ok('P2', 'SK BETWEEN :a AND :b', '"SK" BETWEEN :a AND :b',
                       jsonb_build_object(':a', a::numeric, ':b', b::numeric));
UPDATE psn SET item = item || '{"u": 1}' WHERE "SK" < 0;
UPDATE psn_heap SET item = item || '{"u": 1}' WHERE "SK" < 0;
INSERT INTO psn SELECT "PK", -3 * "SK", '{}' FROM psn_heap WHERE "SK" BETWEEN 1e99 AND 1e101;
INSERT INTO psn_heap SELECT "PK", -3 * "SK", '{}' FROM psn_heap WHERE "SK" BETWEEN 1e99 AND 1e101;
SELECT * FROM ps_verify('psn');
SELECT twin_differ('psn', 'psn_heap') AS differ;

-- 3. String sort keys under a 300-byte stem, some with more after it:
-- bounds that are proper prefixes of the leaves' prefix, that leave it
-- below or above, and begins_with of the same, through Query both ways.
CREATE TABLE pss_heap ("PK" text COLLATE "C", "SK" text COLLATE "C", item jsonb, PRIMARY KEY ("PK", "SK"));
CREATE TABLE pss ("PK" text, "SK" text, item jsonb) USING ddb WITH (autovacuum_enabled = false);
INSERT INTO pss_heap
SELECT 'P' || (i % 5),
       repeat('m', 300) || CASE WHEN i % 7 = 0 THEN '' ELSE 'x' END || lpad((i * 7919 % 100000)::text, 5, '0') ||
       repeat('z', i % 3),
       jsonb_build_object('n', i)
FROM generate_series(1, 6000) i;
BEGIN;
TRUNCATE pss;
INSERT INTO pss SELECT * FROM pss_heap;
COMMIT;
VACUUM FULL pss;
SELECT * FROM ps_verify('pss');
SELECT twin_differ('pss', 'pss_heap') AS differ;
CREATE FUNCTION pss_query_ok(pk text, cond text, sqlcond text, a text) RETURNS bool
LANGUAGE plpgsql AS $f$
DECLARE
  want_f text[]; want_b text[]; got_f text[]; got_b text[];
BEGIN
  EXECUTE format('SELECT array_agg("SK" ORDER BY "SK"), array_agg("SK" ORDER BY "SK" DESC) '
                 'FROM pss_heap WHERE "PK" = %L AND %s', pk, replace(sqlcond, ':a', quote_literal(a)))
    INTO want_f, want_b;
  SELECT array_agg(i ->> 'SK') INTO got_f
    FROM ddb_query('pss', 'PK = :p AND ' || cond, jsonb_build_object(':p', pk, ':a', a)) i;
  SELECT array_agg(i ->> 'SK') INTO got_b
    FROM ddb_query('pss', 'PK = :p AND ' || cond, jsonb_build_object(':p', pk, ':a', a), forward => false) i;
  RETURN got_f IS NOT DISTINCT FROM want_f AND got_b IS NOT DISTINCT FROM want_b;
END
$f$;
SELECT left(b, 3) || '..' || length(b) AS bound, c AS cond, p AS pk
FROM unnest(ARRAY['m', repeat('m', 150), repeat('m', 299), repeat('m', 300), repeat('m', 301),
                  repeat('m', 300) || 'x', repeat('m', 300) || 'y', repeat('m', 300) || 'x5',
                  repeat('m', 300) || 'x50', repeat('m', 300) || '5', repeat('m', 300) || 'x49999zz',
                  repeat('m', 300) || 'x99999z', 'n', 'l', repeat('m', 299) || 'n',
                  repeat('m', 300) || 'x' || chr(127)]) b,
     (VALUES ('SK < :a', '"SK" < :a'), ('SK <= :a', '"SK" <= :a'), ('SK > :a', '"SK" > :a'),
             ('SK >= :a', '"SK" >= :a'), ('SK = :a', '"SK" = :a'),
             ('begins_with(SK, :a)', 'starts_with("SK", :a)')) c(c, sqlc),
     unnest(ARRAY['P0', 'P3']) p
WHERE NOT pss_query_ok(p, c, sqlc, b);
-- GetItem of missing keys just around the stem, and of every present key
SELECT count(*) AS found FROM pss_heap h
WHERE h."PK" = 'P1' AND ddb_get_item('pss', jsonb_build_object('PK', h."PK", 'SK', h."SK")) ->> 'n' = h.item ->> 'n';
SELECT count(*) AS found
FROM unnest(ARRAY[repeat('m', 299), repeat('m', 300), repeat('m', 300) || 'x', repeat('m', 301),
                  repeat('m', 300) || 'x0000', repeat('m', 300) || 'x99999zzz', repeat('m', 299) || 'n']) k,
     unnest(ARRAY['P0', 'P1', 'P2']) p
WHERE ddb_get_item('pss', jsonb_build_object('PK', p, 'SK', k)) IS NOT NULL;
-- COPY into the existing table (the key-order path: ddb_tree_insert_multi
-- on prefixed leaves), MERGE, then VACUUM
CREATE TEMP TABLE pss_new AS
SELECT 'P' || (i % 6) AS "PK",
       repeat('m', 300) || CASE WHEN i % 5 = 0 THEN 'w' ELSE 'x' END || lpad((i * 7919 % 100000)::text, 5, '0') ||
       'c' || repeat('z', i % 4) AS "SK",
       jsonb_build_object('c', i) AS item
FROM generate_series(1, 4000) i;
COPY pss FROM PROGRAM $p$awk 'BEGIN { s = sprintf("%300s", ""); gsub(/ /, "m", s); for (i = 1; i <= 4000; i++) printf "P%d\t%s%s%05dc%s\t{\"c\": %d}\n", i % 6, s, (i % 5 == 0 ? "w" : "x"), (i * 7919) % 100000, substr("zzz", 1, i % 4), i }'$p$;
INSERT INTO pss_heap SELECT * FROM pss_new;
MERGE INTO pss t USING (SELECT * FROM pss_new WHERE (item ->> 'c')::int % 3 = 0) s
  ON t."PK" = s."PK" AND t."SK" = s."SK"
  WHEN MATCHED AND (s.item ->> 'c')::int % 2 = 0 THEN DELETE
  WHEN MATCHED THEN UPDATE SET item = t.item || '{"m": 1}';
MERGE INTO pss_heap t USING (SELECT * FROM pss_new WHERE (item ->> 'c')::int % 3 = 0) s
  ON t."PK" = s."PK" AND t."SK" = s."SK"
  WHEN MATCHED AND (s.item ->> 'c')::int % 2 = 0 THEN DELETE
  WHEN MATCHED THEN UPDATE SET item = t.item || '{"m": 1}';
SELECT * FROM ps_verify('pss');
SELECT twin_differ('pss', 'pss_heap') AS differ;
DELETE FROM pss WHERE "PK" IN ('P1', 'P2');
DELETE FROM pss_heap WHERE "PK" IN ('P1', 'P2');
SELECT wait_no_xmin();
VACUUM pss;
SELECT * FROM ps_verify('pss');
SELECT twin_differ('pss', 'pss_heap') AS differ;
SELECT b AS bound, c AS cond FROM unnest(ARRAY[repeat('m', 299), repeat('m', 300) || 'x5', repeat('m', 300) || 'w']) b,
     (VALUES ('SK < :a', '"SK" < :a'), ('SK >= :a', '"SK" >= :a'), ('begins_with(SK, :a)', 'starts_with("SK", :a)')) c(c, sqlc)
WHERE NOT pss_query_ok('P0', c, sqlc, b) OR NOT pss_query_ok('P5', c, sqlc, b);

-- 4. Keys of about 3,000 encoded bytes in one partition: the leaves'
-- prefixes hold nearly all of them, so the last leaf takes many items at
-- its low bound's prefix, more than fit at full length as the rightmost
-- leaf: the build ends it early.  Then updates, new keys and deletes.
CREATE TABLE psl_heap ("PK" text COLLATE "C", "SK" text COLLATE "C", item jsonb, PRIMARY KEY ("PK", "SK"));
CREATE TABLE psl ("PK" text, "SK" text, item jsonb) USING ddb WITH (autovacuum_enabled = false);
INSERT INTO psl_heap
SELECT repeat('p', 2040), repeat('s', 1010) || lpad(i::text, 6, '0'), jsonb_build_object('n', i)
FROM generate_series(0, 39) i;
INSERT INTO psl SELECT * FROM psl_heap;
VACUUM FULL psl;
SELECT live, prefixed, (v ->> 'leaf_pages')::int < 10 AS few_leaves FROM ps_verify('psl'), ddb_verify('psl') v;
SELECT twin_differ('psl', 'psl_heap') AS differ;
SELECT ps_sql_ok('psl', 'psl_heap', repeat('p', 2040), '"SK" > $2', repeat('s', 1010) || '000020') AS failed;
UPDATE psl SET item = item || '{"u": 1}';
UPDATE psl_heap SET item = item || '{"u": 1}';
INSERT INTO psl SELECT "PK", "SK" || 'x', '{}' FROM psl_heap WHERE (item ->> 'n')::int % 3 = 0;
INSERT INTO psl_heap SELECT "PK", "SK" || 'x', '{}' FROM psl_heap WHERE (item ->> 'n')::int % 3 = 0;
SELECT * FROM ps_verify('psl');
SELECT twin_differ('psl', 'psl_heap') AS differ;
DELETE FROM psl WHERE (item ->> 'n')::int % 4 <> 0;
DELETE FROM psl_heap WHERE (item ->> 'n')::int % 4 <> 0;
SELECT wait_no_xmin();
VACUUM psl;
SELECT * FROM ps_verify('psl');
SELECT twin_differ('psl', 'psl_heap') AS differ;
SELECT count(*) AS rows FROM (SELECT "SK" FROM psl ORDER BY "PK" DESC, "SK" DESC) d;

-- 5. No sort key, 3,000 partitions of one item each
CREATE TABLE psk_heap ("PK" text COLLATE "C" PRIMARY KEY, item jsonb);
CREATE TABLE psk ("PK" text, item jsonb) USING ddb WITH (autovacuum_enabled = false);
INSERT INTO psk_heap SELECT 'item#' || lpad(i::text, 6, '0'), jsonb_build_object('n', i) FROM generate_series(1, 3000) i;
INSERT INTO psk SELECT * FROM psk_heap;
VACUUM FULL psk;
SELECT live FROM ps_verify('psk');
SELECT count(*) AS found FROM psk_heap h WHERE ddb_get_item('psk', jsonb_build_object('PK', h."PK")) ->> 'n' = h.item ->> 'n';
SELECT ddb_get_item('psk', '{"PK": "item#"}') AS missing, ddb_get_item('psk', '{"PK": "item#0000010"}') AS missing2;
DELETE FROM psk WHERE (item ->> 'n')::int % 3 = 0;
DELETE FROM psk_heap WHERE (item ->> 'n')::int % 3 = 0;
INSERT INTO psk SELECT 'item#' || lpad(i::text, 6, '0') || 'b', '{}' FROM generate_series(1, 3000, 2) i;
INSERT INTO psk_heap SELECT 'item#' || lpad(i::text, 6, '0') || 'b', '{}' FROM generate_series(1, 3000, 2) i;
SELECT wait_no_xmin();
VACUUM psk;
SELECT live FROM ps_verify('psk');
SELECT twin_differ('psk', 'psk_heap') AS differ;
SELECT sum(n) AS scanned FROM (SELECT (SELECT count(*) FROM ddb_scan('psk', segment => s, total_segments => 5)) n
                               FROM generate_series(0, 4) s) x;

-- 6. The split into an emptied right sibling (ddb_tree.c, "Long keys") on
-- prefixed leaves.  Keys of about 3,000 encoded bytes in 60 partitions,
-- items of about 4,800 bytes (a 1,700-byte item column): one item a leaf.
-- VACUUM FULL gives a leaf the hash bytes its low bound and high key
-- share: the leaf of partition 41 (hash 223e...) lies between 1f71... and
-- 225c... (partition 21), so its prefix is 0x22, and the leaf of 21 ends
-- at 26ac...: its high key leaves that prefix.  An update of 41 splits its
-- leaf between the two versions; the next one prunes the old version's
-- leaf and splits into it (the same key space, the same prefix).  VACUUM
-- then unlinks that leaf, emptied again, giving its key space to the leaf
-- of 21; once 21 is deleted, a new key on 41's leaf (398, hash 2237...)
-- splits it into that emptied sibling: the sibling takes 41's current
-- version under the prefix its key space shares, none, and no leaf is
-- added (the split used to refuse such a sibling and take a new leaf,
-- leaving the sibling empty; copying the version with the leaf's prefix
-- would read its key with the sibling's high key's first byte).
CREATE TABLE psr_heap ("PK" text COLLATE "C", "SK" text COLLATE "C", item jsonb, PRIMARY KEY ("PK", "SK"));
CREATE TABLE psr ("PK" text, "SK" text, item jsonb) USING ddb WITH (autovacuum_enabled = false);
INSERT INTO psr_heap
SELECT lpad(i::text, 2048, 'p'), lpad(i::text, 1024, 's'),
       jsonb_build_object('n', 0, 'pad', (SELECT string_agg(md5(i::text || j), '') FROM generate_series(1, 52) j))
FROM generate_series(1, 60) i;
INSERT INTO psr SELECT * FROM psr_heap;
VACUUM FULL psr;
CREATE FUNCTION psr_shape(OUT leaf_pages int, OUT deleted_pages int, OUT live int, OUT prefixed bool)
LANGUAGE sql AS $$
  SELECT (v ->> 'leaf_pages')::int, (v ->> 'deleted_pages')::int, (v ->> 'live')::int,
         (v ->> 'leaf_prefix_bytes')::float > 0
  FROM ddb_verify('psr') v
$$;
-- (a procedure: the write's prunes go by a snapshot and a horizon taken
-- after the wait, not by the calling statement's, nor by one computed
-- while the wait waited; see wait_no_xmin.sql)
CREATE PROCEDURE psr_write(q text) LANGUAGE plpgsql AS $f$
BEGIN
  PERFORM wait_no_xmin();
  COMMIT;
  EXECUTE format(q, 'psr');
  EXECUTE format(q, 'psr_heap');
END
$f$;
SELECT ddb_hash32(lpad(i::text, 2048, 'p')) BETWEEN x'22000000'::int AND x'22ffffff'::int AS in_22
FROM unnest(ARRAY[59, 41, 21, 5, 398]) i;
SELECT * FROM psr_shape();
-- 41's leaf splits between its versions: one more leaf
CALL psr_write($q$UPDATE %s SET item = item || '{"n": 1}' WHERE "PK" = lpad('41', 2048, 'p')$q$);
SELECT * FROM psr_shape();
-- the old version's leaf, pruned, takes the split: no more leaves
CALL psr_write($q$UPDATE %s SET item = item || '{"n": 2}' WHERE "PK" = lpad('41', 2048, 'p')$q$);
SELECT * FROM psr_shape();
SELECT wait_no_xmin();
VACUUM psr;
SELECT * FROM psr_shape();
CALL psr_write($q$DELETE FROM %s WHERE "PK" = lpad('21', 2048, 'p')$q$);
SELECT * FROM psr_shape();
-- 398 before 41 on its leaf: 41's current version moves right, no leaf added
CALL psr_write($q$INSERT INTO %s VALUES (lpad('398', 2048, 'p'), lpad('398', 1024, 's'),
                                            jsonb_build_object('n', 398, 'pad', repeat('q', 1700)))$q$);
SELECT * FROM psr_shape();
SELECT twin_differ('psr', 'psr_heap') AS differ;
SELECT i, ddb_get_item('psr', jsonb_build_object('PK', lpad(i::text, 2048, 'p'),
                                                 'SK', lpad(i::text, 1024, 's'))) ->> 'n' AS n
FROM unnest(ARRAY[41, 21, 398, 5]) i;
SELECT count(*) AS rows FROM (SELECT "PK" FROM psr ORDER BY "PK" DESC, "SK" DESC) d;
-- more updates of 41, on both leaves, then VACUUM
CALL psr_write($q$UPDATE %s SET item = item || '{"n": 3}' WHERE "PK" = lpad('41', 2048, 'p')$q$);
CALL psr_write($q$UPDATE %s SET item = item || '{"n": 4}' WHERE "PK" IN (lpad('41', 2048, 'p'), lpad('398', 2048, 'p'))$q$);
SELECT * FROM psr_shape();
SELECT twin_differ('psr', 'psr_heap') AS differ;
SELECT wait_no_xmin();
VACUUM psr;
SELECT * FROM psr_shape();
SELECT twin_differ('psr', 'psr_heap') AS differ;

-- The same into the rightmost leaf, whose prefix is none: the leaf of 38
-- (hash f95f...) has prefix 0xF9; VACUUM unlinks its key's emptied
-- older-version leaf, and the emptied leaf of 35 after it, into the
-- rightmost leaf (57); once 57 is deleted, a new key on 38's leaf (2045,
-- hash f922...) splits it into the rightmost leaf, which takes 38's
-- current version with its whole key.
CALL psr_write($q$UPDATE %s SET item = item || '{"n": 1}' WHERE "PK" = lpad('38', 2048, 'p')$q$);
CALL psr_write($q$UPDATE %s SET item = item || '{"n": 2}' WHERE "PK" = lpad('38', 2048, 'p')$q$);
CALL psr_write($q$DELETE FROM %s WHERE "PK" = lpad('35', 2048, 'p')$q$);
SELECT wait_no_xmin();
VACUUM psr;
CALL psr_write($q$DELETE FROM %s WHERE "PK" = lpad('57', 2048, 'p')$q$);
SELECT * FROM psr_shape();
CALL psr_write($q$INSERT INTO %s VALUES (lpad('2045', 2048, 'p'), lpad('2045', 1024, 's'),
                                            jsonb_build_object('n', 2045, 'pad', repeat('r', 1700)))$q$);
SELECT * FROM psr_shape();
SELECT twin_differ('psr', 'psr_heap') AS differ;
SELECT i, ddb_get_item('psr', jsonb_build_object('PK', lpad(i::text, 2048, 'p'),
                                                 'SK', lpad(i::text, 1024, 's'))) ->> 'n' AS n
FROM unnest(ARRAY[38, 2045, 57]) i;
SELECT count(*) AS rows FROM (SELECT "PK" FROM psr ORDER BY "PK" DESC, "SK" DESC) d;

DROP TABLE psb, psb_heap, psn, psn_heap, pss, pss_heap, psl, psl_heap, psk, psk_heap, psr, psr_heap;
DROP FUNCTION twin_differ, ps_verify, ps_sql_ok, psn_query_ok, pss_query_ok, psr_shape, wait_no_xmin;
DROP PROCEDURE psr_write;
