-- Range scans whose batches stop early resume where they stopped
-- (ddb_scan.c: a caller that will take few rows says so, ddb_range_want;
-- test builds' ddb.check_scan_batch caps every batch): every read gives
-- the rows of a heap twin, in order, whatever the cap.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

-- 3 partitions of 400 items, about 30 to a leaf, with dead versions
-- beside the live ones (updated and deleted items, not yet pruned).
CREATE TABLE sb ("PK" text, "SK" text COLLATE "C", item jsonb) USING ddb
  WITH (autovacuum_enabled = false);
INSERT INTO sb
SELECT 'P' || (i % 3), 'S' || lpad(i::text, 5, '0'),
       jsonb_build_object('n', i, 'pad', repeat('x', 150))
FROM generate_series(1, 1200) i;
UPDATE sb SET item = item || '{"v": 2}' WHERE "SK" LIKE '%3';
DELETE FROM sb WHERE "SK" LIKE '%7';
CREATE TABLE sb_heap ("PK" text, "SK" text COLLATE "C", item jsonb, PRIMARY KEY ("PK", "SK"));
INSERT INTO sb_heap SELECT * FROM sb;
SELECT (ddb_verify('sb') ->> 'leaf_pages')::int > 30 AS many_leaves;

CREATE FUNCTION sb_rows(q text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE r text[];
BEGIN
  EXECUTE format('SELECT coalesce(array_agg(x::text), ''{}'') FROM (%s) x', q) INTO r;
  RETURN r;
END $$;

-- sb_check(ddb query, heap query): the caps under which the ddb query's
-- rows differ from the heap query's ('ok' when none), and how many rows.
-- (The plain build, whose regression run test/run.sh's part "plain" makes,
-- has no ddb.check_scan_batch: there only the callers' hints stop batches.)
CREATE FUNCTION sb_check(q_ddb text, q_heap text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  ref text[] := sb_rows(q_heap);
  bad text := '';
  cap int;
  caps int[] := CASE WHEN EXISTS (SELECT FROM pg_settings WHERE name = 'ddb.check_scan_batch')
                THEN ARRAY[0, 1, 2, 3, 7, 40] ELSE ARRAY[0] END;
BEGIN
  FOREACH cap IN ARRAY caps LOOP
    IF cardinality(caps) > 1 THEN
      PERFORM set_config('ddb.check_scan_batch', cap::text, true);
    END IF;
    IF sb_rows(q_ddb) IS DISTINCT FROM ref THEN
      bad := bad || ' ' || cap;
    END IF;
  END LOOP;
  IF cardinality(caps) > 1 THEN
    PERFORM set_config('ddb.check_scan_batch', '0', true);
  END IF;
  RETURN coalesce(nullif(bad, ''), 'ok') || ' (' || cardinality(ref) || ' rows)';
END $$;

-- The same SQL on both tables.
CREATE FUNCTION sb_sql(q text) RETURNS text LANGUAGE sql AS $$
  SELECT sb_check(replace(q, 'TBL', 'sb'), replace(q, 'TBL', 'sb_heap'))
$$;

SELECT q, sb_sql(q) FROM (VALUES
  ($$SELECT "SK", item FROM TBL WHERE "PK" = 'P1' ORDER BY "SK"$$),
  ($$SELECT "SK", item FROM TBL WHERE "PK" = 'P1' ORDER BY "SK" DESC$$),
  ($$SELECT "SK" FROM TBL WHERE "PK" = 'P2' AND "SK" BETWEEN 'S00300' AND 'S00900' ORDER BY "SK"$$),
  ($$SELECT "SK" FROM TBL WHERE "PK" = 'P2' AND "SK" BETWEEN 'S00300' AND 'S00900' ORDER BY "SK" DESC$$),
  ($$SELECT "SK", item FROM TBL WHERE "PK" = 'P0' ORDER BY "SK" DESC LIMIT 1$$),
  ($$SELECT "SK" FROM TBL WHERE "PK" = 'P0' ORDER BY "SK" LIMIT 5$$),
  ($$SELECT "SK" FROM TBL WHERE "PK" = 'P0' ORDER BY "SK" DESC LIMIT 5 OFFSET 3$$),
  ($$SELECT "SK" FROM TBL WHERE "PK" = 'P1' AND "SK" LIKE 'S004%' ORDER BY "SK" DESC LIMIT 3$$),
  ($$SELECT "SK" FROM TBL WHERE "PK" = 'P1' AND (item ->> 'n')::int % 5 = 0 ORDER BY "SK" LIMIT 4$$),
  ($$SELECT "PK", "SK" FROM TBL WHERE "PK" = ANY ('{P0,P2}') AND "SK" < 'S00100' ORDER BY "PK", "SK"$$),
  ($$SELECT "PK", "SK", item FROM TBL ORDER BY "PK", "SK"$$),
  ($$SELECT "SK" FROM TBL WHERE "PK" = 'P2' ORDER BY "SK" DESC FETCH FIRST 1 ROWS WITH TIES$$),
  ($$SELECT "SK" FROM TBL WHERE "PK" = 'P2' ORDER BY "SK" FETCH FIRST 1 ROWS WITH TIES$$),
  ($$SELECT "SK" FROM TBL WHERE "PK" = 'P1' AND "SK" < 'S00900' ORDER BY "SK" DESC LIMIT 2$$),
  ($$SELECT "SK" FROM TBL WHERE "PK" = 'P1' AND "SK" LIKE 'S00_9%' ORDER BY "SK" LIMIT 3$$),
  ($$SELECT p, (SELECT "SK" FROM TBL WHERE "PK" = p ORDER BY "SK" DESC LIMIT 1) FROM unnest('{P0,P1,P2,P9}'::text[]) p$$),
  ($$SELECT count(*) FROM (SELECT FROM TBL WHERE "PK" = ANY ('{P0,P2}') LIMIT 70) s$$),
  ($$SELECT "SK" FROM TBL WHERE "PK" = 'P0' ORDER BY item ->> 'n' LIMIT 2$$)
) v(q);

-- A SCROLL cursor over a LIMIT turns back and forth: the rows of the heap's.
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT "SK" FROM sb WHERE "PK" = 'P1' ORDER BY "SK" DESC LIMIT 5;
DECLARE h SCROLL CURSOR FOR SELECT "SK" FROM sb_heap WHERE "PK" = 'P1' ORDER BY "SK" DESC LIMIT 5;
FETCH 3 FROM c;
FETCH 3 FROM h;
FETCH BACKWARD 2 FROM c;
FETCH BACKWARD 2 FROM h;
FETCH FORWARD 4 FROM c;
FETCH FORWARD 4 FROM h;
COMMIT;

-- The API: a Query's Limit is its hint; its items against the heap's rows.
CREATE FUNCTION sb_api(kc text, vals jsonb, fwd bool, lim int, q_heap text) RETURNS text
LANGUAGE sql AS $$
  SELECT sb_check(format('SELECT x ->> ''SK'' FROM ddb_query(%L, %L, %L, forward => %L, "limit" => %s) x',
                         'sb', kc, vals, fwd, coalesce(lim::text, 'NULL')),
                  q_heap)
$$;
SELECT sb_api('PK = :p', '{":p": "P1"}', false, 1,
              $$SELECT "SK" FROM sb_heap WHERE "PK" = 'P1' ORDER BY "SK" DESC LIMIT 1$$);
SELECT sb_api('PK = :p', '{":p": "P1"}', true, 7,
              $$SELECT "SK" FROM sb_heap WHERE "PK" = 'P1' ORDER BY "SK" LIMIT 7$$);
SELECT sb_api('PK = :p AND SK BETWEEN :a AND :b', '{":p": "P2", ":a": "S00500", ":b": "S01000"}', false, 9,
              $$SELECT "SK" FROM sb_heap WHERE "PK" = 'P2' AND "SK" BETWEEN 'S00500' AND 'S01000' ORDER BY "SK" DESC LIMIT 9$$);
SELECT sb_api('PK = :p', '{":p": "P0"}', false, NULL,
              $$SELECT "SK" FROM sb_heap WHERE "PK" = 'P0' ORDER BY "SK" DESC$$);
-- A Scan with a Limit reads that many items of the table's order.
SELECT sb_check($$SELECT x ->> 'SK' FROM ddb_scan('sb', "limit" => 50) x$$,
                $$SELECT x ->> 'SK' FROM (SELECT x FROM ddb_scan('sb') x LIMIT 50) s$$);
SELECT count(*) FROM ddb_scan('sb') x
  JOIN sb_heap h ON h."PK" = x ->> 'PK' AND h."SK" = x ->> 'SK';

-- EXPLAIN VERBOSE shows the hint the plan gives: the LIMIT (and OFFSET)
-- over the scan alone, also under the sort key's bounds; none under
-- another filter, a Sort or a join.
EXPLAIN (VERBOSE, COSTS OFF) SELECT "SK" FROM sb WHERE "PK" = 'P1' ORDER BY "SK" DESC LIMIT 1;
EXPLAIN (VERBOSE, COSTS OFF) SELECT "SK" FROM sb WHERE "PK" = 'P1' ORDER BY "SK" LIMIT 5 OFFSET 3;
-- WITH TIES asks for a row past the hint's (the scan resumes for it).
EXPLAIN (VERBOSE, COSTS OFF) SELECT "SK" FROM sb WHERE "PK" = 'P2' ORDER BY "SK" DESC FETCH FIRST 1 ROWS WITH TIES;
EXPLAIN (VERBOSE, COSTS OFF) SELECT "SK" FROM sb WHERE "PK" = 'P1' AND "SK" < 'S00900' ORDER BY "SK" DESC LIMIT 2;
EXPLAIN (VERBOSE, COSTS OFF) SELECT "SK" FROM sb WHERE "PK" = 'P1' AND item ? 'v' ORDER BY "SK" LIMIT 5;
EXPLAIN (VERBOSE, COSTS OFF) SELECT "SK" FROM sb WHERE "PK" = 'P0' ORDER BY item ->> 'n' LIMIT 2;
EXPLAIN (VERBOSE, COSTS OFF) SELECT s."SK" FROM sb s JOIN sb_heap h USING ("PK", "SK")
  WHERE s."PK" = 'P1' ORDER BY s."SK" LIMIT 2;

SELECT (ddb_verify('sb') ->> 'live')::int AS live;
DROP TABLE sb, sb_heap;
DROP FUNCTION sb_rows, sb_check, sb_sql, sb_api;
