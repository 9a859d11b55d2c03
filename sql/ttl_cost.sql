-- The cost of a TTL sweep grows with what expires, not with the table: it
-- reads only the expired range of the TTL index.  Two tables, of 10^4 and
-- 10^6 live items, every one with a TTL an hour ahead (so the TTL index
-- holds them all), and the same 100 expired items in each; the sweep of
-- each must touch about the same number of buffers (EXPLAIN (ANALYZE,
-- BUFFERS): shared hit + read, so the cache state does not matter).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

CREATE FUNCTION buffers_of(stmt text) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  line text;
  m text[];
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || stmt LOOP
    IF line ~ 'Buffers: shared' THEN
      m := regexp_match(line, 'hit=(\d+)');
      RETURN coalesce(m[1]::int, 0) + coalesce((regexp_match(line, 'read=(\d+)'))[1]::int, 0);
    END IF;
  END LOOP;
  RETURN 0;
END $$;

CREATE TABLE ttl_small ("PK" text, "SK" text, item jsonb) USING ddb;
CREATE TABLE ttl_large ("PK" text, "SK" text, item jsonb) USING ddb;
INSERT INTO ttl_small SELECT 'P#' || (i % 100), lpad((i / 100)::text, 3, '0'),
  jsonb_build_object('v', i, 'exp', extract(epoch FROM now())::bigint + 3600 + i % 1000)
FROM generate_series(0, 9999) i;
INSERT INTO ttl_large SELECT 'P#' || (i % 10000), lpad((i / 10000)::text, 3, '0'),
  jsonb_build_object('v', i, 'exp', extract(epoch FROM now())::bigint + 3600 + i % 1000)
FROM generate_series(0, 999999) i;
-- enabled after the load: the backfill indexes every item
SELECT ddb_update_time_to_live('ttl_small', 'exp', true);
SELECT ddb_update_time_to_live('ttl_large', 'exp', true);
-- 100 expired items in each, spread over the partitions
INSERT INTO ttl_small SELECT 'P#' || (i * 7 % 100), 'X' || i,
  jsonb_build_object('exp', extract(epoch FROM now())::bigint - 60 - i) FROM generate_series(1, 100) i;
INSERT INTO ttl_large SELECT 'P#' || (i * 97 % 10000), 'X' || i,
  jsonb_build_object('exp', extract(epoch FROM now())::bigint - 60 - i) FROM generate_series(1, 100) i;
SELECT (SELECT count(*) FROM ttl_small) AS small_items, (SELECT count(*) FROM ttl_large) AS large_items;

-- Each sweep deletes its 100 expired items; the large one may cost at most
-- twice the small one's (deeper trees) and never anything proportional to
-- the 100x larger table.
CREATE TEMP TABLE cost AS
SELECT buffers_of('SELECT ddb_ttl_sweep(''ttl_small'')') AS small_buffers,
       buffers_of('SELECT ddb_ttl_sweep(''ttl_large'')') AS large_buffers;
SELECT (SELECT count(*) FROM ttl_small WHERE "SK" LIKE 'X%') AS small_expired_left,
       (SELECT count(*) FROM ttl_large WHERE "SK" LIKE 'X%') AS large_expired_left;
SELECT large_buffers <= 2 * small_buffers + 50 AS proportional_to_expired,
       large_buffers < 10000 AS far_below_table_size
FROM cost;
-- An empty sweep reads a few pages of the TTL index, at either size.  The
-- count includes catalog reads, and autovacuum's ANALYZE of a table
-- invalidates its relcache entry (rebuilding it costs about a dozen), so
-- each side takes the least of three sweeps: an empty sweep changes nothing.
SELECT min(buffers_of('SELECT ddb_ttl_sweep(''ttl_small'')')) < 20 AS small_empty_sweep_cheap,
       min(buffers_of('SELECT ddb_ttl_sweep(''ttl_large'')')) < 20 AS large_empty_sweep_cheap
FROM generate_series(1, 3);
\o /dev/null
SELECT * FROM cost;
\o
DROP TABLE ttl_small, ttl_large;
DROP FUNCTION buffers_of(text);
