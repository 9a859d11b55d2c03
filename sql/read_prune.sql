-- Reads clean up behind them (ddb_vacuum.c, ddb_prune_read_leaf; ddb_scan.c,
-- clean_behind): a range scan that finds nothing visible on a leaf, only
-- versions no snapshot sees any more, prunes that leaf once it has read it
-- and unlinks it when the prune empties it, so that the next reader of the
-- range does not walk those versions again.  A leaf where the scan finds
-- something visible is left to VACUUM and to the writers.  A heap twin is
-- the oracle for what the reads return.  (That a snapshot which still sees
-- the versions keeps them, and that a table VACUUM holds is left alone, is
-- read-prune.spec's; that a standby's reads change nothing, TAP 029's.)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;

\i test/regress/wait_no_xmin.sql

CREATE FUNCTION rp_field(t regclass, f text) RETURNS bigint LANGUAGE sql
	AS $$ SELECT (ddb_verify(t)->>f)::bigint $$;
-- the shared buffers a statement touches, by EXPLAIN (ANALYZE, BUFFERS)
CREATE FUNCTION rp_buffers(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	j json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q INTO j;
	RETURN (j -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::int + (j -> 0 -> 'Plan' ->> 'Shared Read Blocks')::int;
END $$;

-- Partitions of 300 items of ~1 kB, about 43 leaves each.
CREATE TABLE rp ("PK" text, "SK" numeric, item jsonb) USING ddb WITH (autovacuum_enabled = false);
CREATE TABLE rp_heap ("PK" text, "SK" numeric, item jsonb, PRIMARY KEY ("PK", "SK"))
	WITH (autovacuum_enabled = false);
INSERT INTO rp_heap SELECT p, i, jsonb_build_object('pad', repeat('x', 1000))
	FROM unnest(ARRAY['a', 'b', 'c', 'e']) p, generate_series(1, 300) i;
INSERT INTO rp SELECT * FROM rp_heap;
-- the table and its twin hold the same rows
CREATE FUNCTION rp_same() RETURNS bool LANGUAGE sql AS $$
	SELECT (SELECT array_agg(("PK", "SK", item)::text ORDER BY "PK", "SK") FROM rp)
	     = (SELECT array_agg(("PK", "SK", item)::text ORDER BY "PK", "SK") FROM rp_heap)
$$;
SELECT rp_field('rp', 'leaf_pages') AS leaves, rp_field('rp', 'items') AS items;

-- A queue's head: the first 290 items of 'a' deleted.  The first read of
-- the partition walks their leaves and prunes them behind it; all but
-- the first and last child of their parent are unlinked.
DELETE FROM rp WHERE "PK" = 'a' AND "SK" <= 290;
DELETE FROM rp_heap WHERE "PK" = 'a' AND "SK" <= 290;
SELECT wait_no_xmin();
SELECT rp_buffers($$SELECT "SK" FROM rp WHERE "PK" = 'a' ORDER BY "SK" LIMIT 1$$) > 40 AS first_read_walks;
SELECT rp_field('rp', 'leaf_pages') AS leaves, rp_field('rp', 'deleted_pages') AS deleted,
	rp_field('rp', 'items') AS items, rp_field('rp', 'live') AS live;
-- the next read of the head finds its first item at once
SELECT rp_buffers($$SELECT "SK" FROM rp WHERE "PK" = 'a' ORDER BY "SK" LIMIT 1$$) AS next_read;
SELECT "SK" FROM rp WHERE "PK" = 'a' ORDER BY "SK" LIMIT 3;
SELECT "SK" FROM rp_heap WHERE "PK" = 'a' ORDER BY "SK" LIMIT 3;

-- The same backward: the last 290 items of 'b', read newest first.
DELETE FROM rp WHERE "PK" = 'b' AND "SK" > 10;
DELETE FROM rp_heap WHERE "PK" = 'b' AND "SK" > 10;
SELECT wait_no_xmin();
SELECT "SK" FROM rp WHERE "PK" = 'b' ORDER BY "SK" DESC LIMIT 2;
SELECT rp_field('rp', 'items') AS items, rp_field('rp', 'live') AS live;
SELECT rp_buffers($$SELECT "SK" FROM rp WHERE "PK" = 'b' ORDER BY "SK" DESC LIMIT 1$$) AS next_read;

-- Through the API: a Query of 'c' whose first 150 items are deleted.
DELETE FROM rp WHERE "PK" = 'c' AND "SK" <= 150;
DELETE FROM rp_heap WHERE "PK" = 'c' AND "SK" <= 150;
SELECT wait_no_xmin();
SELECT x ->> 'SK' AS sk FROM ddb_query('rp', 'PK = :p', '{":p": "c"}', "limit" => 2) x;
SELECT rp_field('rp', 'items') AS items, rp_field('rp', 'live') AS live;

-- Versions of an insert that rolled back are dead at once, with no wait.
BEGIN;
INSERT INTO rp SELECT 'd', i, jsonb_build_object('pad', repeat('y', 1000)) FROM generate_series(1, 100) i;
ROLLBACK;
SELECT rp_field('rp', 'items') - rp_field('rp', 'live') AS dead_versions;
SELECT count(*) FROM rp WHERE "PK" = 'd';
SELECT rp_field('rp', 'items') - rp_field('rp', 'live') AS dead_versions;

-- A delete committed asynchronously: until its commit's WAL is flushed
-- the versions get no hint bit, and the read asks the commit log.
INSERT INTO rp SELECT 'g', i, jsonb_build_object('pad', repeat('w', 1000)) FROM generate_series(1, 100) i;
BEGIN;
SET LOCAL synchronous_commit = off;
DELETE FROM rp WHERE "PK" = 'g';
COMMIT;
SELECT wait_no_xmin();
SELECT rp_field('rp', 'items') - rp_field('rp', 'live') AS dead_versions;
SELECT count(*) FROM rp WHERE "PK" = 'g';
SELECT rp_field('rp', 'items') - rp_field('rp', 'live') AS dead_versions;

-- A leaf where the read finds a visible item is not pruned by it: every
-- other item of 'e' deleted, and every item of 'a' updated, leave their
-- dead versions beside live ones until VACUUM.
DELETE FROM rp WHERE "PK" = 'e' AND "SK" % 2 = 0;
DELETE FROM rp_heap WHERE "PK" = 'e' AND "SK" % 2 = 0;
UPDATE rp SET item = item || '{"u": 1}' WHERE "PK" = 'a';
UPDATE rp_heap SET item = item || '{"u": 1}' WHERE "PK" = 'a';
SELECT wait_no_xmin();
SELECT rp_field('rp', 'items') - rp_field('rp', 'live') AS dead_before;
SELECT count(*) FROM rp WHERE "PK" IN ('a', 'e');
SELECT rp_field('rp', 'items') - rp_field('rp', 'live') AS dead_after;
SELECT rp_same() AS same_as_heap;
VACUUM rp;
SELECT rp_field('rp', 'items') - rp_field('rp', 'live') AS dead_after_vacuum;

-- A whole-table read prunes too, and what it unlinked VACUUM later hands
-- out again (the deleted leaves' reuse): the table keeps its size.
DELETE FROM rp WHERE "PK" = 'e';
DELETE FROM rp_heap WHERE "PK" = 'e';
SELECT wait_no_xmin();
SELECT count(*) FROM rp;
SELECT rp_field('rp', 'items') - rp_field('rp', 'live') AS dead_versions;
SELECT pg_relation_size('rp') AS size_before \gset
SELECT wait_no_xmin();
VACUUM rp;
INSERT INTO rp SELECT 'f', i, jsonb_build_object('pad', repeat('z', 1000)) FROM generate_series(1, 140) i;
INSERT INTO rp_heap SELECT 'f', i, jsonb_build_object('pad', repeat('z', 1000)) FROM generate_series(1, 140) i;
SELECT pg_relation_size('rp') = :size_before AS reused;
SELECT rp_same() AS same_as_heap;

-- What a read unlinks is reused without a VACUUM (ddb_tree.c, "Reuse"):
-- the backend that unlinked the leaves takes them for its own splits once
-- no snapshot can hold their numbers, and lists them in the free space map
-- for every backend at its next unlink.  A queue emptied by reads and
-- refilled keeps its size.  (Before, the file grew by every unlinked leaf
-- until the next VACUUM.)
INSERT INTO rp SELECT p, i, jsonb_build_object('pad', repeat('q', 1000))
	FROM unnest(ARRAY['q', 'r', 's']) p, generate_series(1, 300) i;
INSERT INTO rp_heap SELECT p, i, jsonb_build_object('pad', repeat('q', 1000))
	FROM unnest(ARRAY['q', 'r', 's']) p, generate_series(1, 300) i;
SELECT pg_relation_size('rp') AS size_before \gset
-- 'q': unlinked by this backend's read, refilled by its inserts
DELETE FROM rp WHERE "PK" = 'q' AND "SK" <= 290;
DELETE FROM rp_heap WHERE "PK" = 'q' AND "SK" <= 290;
SELECT wait_no_xmin();
SELECT "SK" FROM rp WHERE "PK" = 'q' ORDER BY "SK" LIMIT 1;
SELECT rp_field('rp', 'deleted_pages') > 30 AS q_unlinked;
SELECT wait_no_xmin();
INSERT INTO rp SELECT 'q', 1000 + i, jsonb_build_object('pad', repeat('Q', 1000)) FROM generate_series(1, 290) i;
INSERT INTO rp_heap SELECT 'q', 1000 + i, jsonb_build_object('pad', repeat('Q', 1000)) FROM generate_series(1, 290) i;
-- (the new keys need a few more leaves than the deleted ones held)
SELECT pg_relation_size('rp') - :size_before <= 4 * 8192 AS own_reused,
	rp_field('rp', 'deleted_pages') < 5 AS few_deleted;
-- 'r' and 's': unlinked by this backend's reads, the second unlink listing
-- what the first freed; a new backend's inserts take them from the map
DELETE FROM rp WHERE "PK" = 'r' AND "SK" <= 290;
DELETE FROM rp_heap WHERE "PK" = 'r' AND "SK" <= 290;
SELECT wait_no_xmin();
SELECT "SK" FROM rp WHERE "PK" = 'r' ORDER BY "SK" LIMIT 1;
SELECT wait_no_xmin();
DELETE FROM rp WHERE "PK" = 's' AND "SK" <= 290;
DELETE FROM rp_heap WHERE "PK" = 's' AND "SK" <= 290;
SELECT wait_no_xmin();
SELECT "SK" FROM rp WHERE "PK" = 's' ORDER BY "SK" LIMIT 1;
\c
SELECT wait_no_xmin();
INSERT INTO rp SELECT 'r', 1000 + i, jsonb_build_object('pad', repeat('R', 1000)) FROM generate_series(1, 250) i;
INSERT INTO rp_heap SELECT 'r', 1000 + i, jsonb_build_object('pad', repeat('R', 1000)) FROM generate_series(1, 250) i;
SELECT pg_relation_size('rp') - :size_before <= 8 * 8192 AS map_reused;
SELECT rp_same() AS same_as_heap;
SELECT rp_field('rp', 'live') = (SELECT count(*) FROM rp_heap) AS verified;

-- Listing the leaves a read unlinked may create the table's free space
-- map, which is announced to other backends at once (an smgr
-- invalidation), not with a relcache message queued in the reading
-- transaction: a subtransaction later in the same statement, here a
-- STABLE function's exception block reading another table whose own map
-- is created then, failed with "cannot start a subtransaction when there
-- are unprocessed inval messages" (a review found it).
CREATE TABLE rpa ("PK" text, "SK" numeric, item jsonb) USING ddb WITH (autovacuum_enabled = false);
CREATE TABLE rpb ("PK" text, "SK" numeric, item jsonb) USING ddb WITH (autovacuum_enabled = false);
INSERT INTO rpa SELECT p, i, jsonb_build_object('pad', repeat('x', 1000))
	FROM unnest(ARRAY['a', 'b']) p, generate_series(1, 300) i;
INSERT INTO rpb SELECT * FROM rpa;
CREATE FUNCTION rpb_head() RETURNS numeric STABLE LANGUAGE plpgsql AS $$
DECLARE
	r numeric;
BEGIN
	BEGIN
		SELECT "SK" INTO r FROM rpb WHERE "PK" = 'b' ORDER BY "SK" LIMIT 1;
	EXCEPTION WHEN division_by_zero THEN
		r := -1;
	END;
	RETURN r;
END $$;
DELETE FROM rpa WHERE "PK" = 'a' AND "SK" <= 290;
DELETE FROM rpb WHERE "PK" = 'a' AND "SK" <= 290;
SELECT wait_no_xmin();
SELECT "SK" FROM rpa WHERE "PK" = 'a' ORDER BY "SK" LIMIT 1;
SELECT "SK" FROM rpb WHERE "PK" = 'a' ORDER BY "SK" LIMIT 1;
DELETE FROM rpa WHERE "PK" = 'b' AND "SK" <= 290;
DELETE FROM rpb WHERE "PK" = 'b' AND "SK" <= 290;
SELECT wait_no_xmin();
SELECT "SK", rpb_head() FROM rpa WHERE "PK" = 'b' ORDER BY "SK" LIMIT 1;
SELECT rp_field('rpa', 'live') AS rpa_live, rp_field('rpb', 'live') AS rpb_live;
DROP TABLE rpa, rpb;
DROP FUNCTION rpb_head;

DROP TABLE rp, rp_heap;
DROP FUNCTION rp_field, rp_buffers, rp_same, wait_no_xmin;
