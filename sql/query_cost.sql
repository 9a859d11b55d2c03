-- The cost of a Query does not grow with the table: it reads only the
-- pages of its partition (plus one descent of the tree).  Two tables with
-- 100 items per partition, one of 10^4 items and one of 10^6, loaded
-- interleaved across partitions as real traffic arrives; a 100-item Query
-- on each must touch about the same number of buffers (counted by EXPLAIN
-- (ANALYZE, BUFFERS): shared hit + read, so the cache state does not matter).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

-- Buffers (shared hit + read) a statement touches, from its top plan node;
-- the least of three runs.  The count includes catalog reads, and
-- autovacuum's ANALYZE of a table invalidates its relcache entry (rebuilding
-- it costs about a dozen buffers), so one run could count one by chance.
CREATE FUNCTION buffers_of(stmt text) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  line text;
  n integer;
  least_n integer;
BEGIN
  FOR run IN 1..3 LOOP
    n := NULL;
    FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || stmt LOOP
      IF n IS NULL AND line ~ 'Buffers: shared' THEN
        n := coalesce((regexp_match(line, 'hit=(\d+)'))[1]::int, 0) +
             coalesce((regexp_match(line, 'read=(\d+)'))[1]::int, 0);
      END IF;
    END LOOP;
    least_n := least(least_n, coalesce(n, 0));
  END LOOP;
  RETURN least_n;
END $$;

CREATE TABLE small ("PK" text, "SK" text, item jsonb) USING ddb;
CREATE TABLE large ("PK" text, "SK" text, item jsonb) USING ddb;
INSERT INTO small SELECT 'P#' || (i % 100), lpad((i / 100)::text, 3, '0'), jsonb_build_object('v', i)
FROM generate_series(0, 9999) i;
INSERT INTO large SELECT 'P#' || (i % 10000), lpad((i / 10000)::text, 3, '0'), jsonb_build_object('v', i)
FROM generate_series(0, 999999) i;
-- A partition of 100 items of about 1 kB, spanning many leaves, in both.
INSERT INTO small SELECT 'HOT', lpad(i::text, 3, '0'), jsonb_build_object('pad', repeat('z', 1000)) FROM generate_series(1, 100) i;
INSERT INTO large SELECT 'HOT', lpad(i::text, 3, '0'), jsonb_build_object('pad', repeat('z', 1000)) FROM generate_series(1, 100) i;
SELECT (SELECT count(*) FROM small) AS small_items, (SELECT count(*) FROM large) AS large_items;

-- Each Query returns its 100 items from either table.
SELECT (SELECT count(*) FROM ddb_query('small', 'PK = :p', '{":p": "P#42"}')) AS small_n,
       (SELECT count(*) FROM ddb_query('large', 'PK = :p', '{":p": "P#42"}')) AS large_n,
       (SELECT count(*) FROM ddb_query('small', 'PK = :p', '{":p": "HOT"}')) AS small_hot_n,
       (SELECT count(*) FROM ddb_query('large', 'PK = :p', '{":p": "HOT"}')) AS large_hot_n;

-- Buffers touched: the large table's Query may cost at most twice the
-- small table's plus a few pages (one more tree level), never anything
-- proportional to the 100x larger table.
CREATE TEMP TABLE cost AS
SELECT q.what,
       buffers_of(format('SELECT count(*) FROM ddb_query(%L, %L, %L, forward => %L)', 'small', q.kc, q.vals, q.fwd)) AS small_buffers,
       buffers_of(format('SELECT count(*) FROM ddb_query(%L, %L, %L, forward => %L)', 'large', q.kc, q.vals, q.fwd)) AS large_buffers
FROM (VALUES
  ('partition, forward', 'PK = :p', '{":p": "P#42"}', true),
  ('partition, backward', 'PK = :p', '{":p": "P#42"}', false),
  ('sort key range', 'PK = :p AND SK BETWEEN :a AND :b', '{":p": "P#42", ":a": "010", ":b": "060"}', true),
  ('1 kB items, forward', 'PK = :p', '{":p": "HOT"}', true),
  ('1 kB items, backward', 'PK = :p', '{":p": "HOT"}', false)) AS q(what, kc, vals, fwd);
SELECT what, small_buffers > 0 AS measured, large_buffers <= 2 * small_buffers + 5 AS same_order
FROM cost ORDER BY what;
-- (The numbers themselves, for the curious: SELECT * FROM cost.)

DROP TABLE small, large, cost;
DROP FUNCTION buffers_of;
