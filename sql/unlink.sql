-- VACUUM unlinks the leaves it empties, and later allocations reuse them
-- (ddb_tree.c, "Unlinking empty leaves" and "Reuse"; doc/design-unlink.md).
-- A heap twin of each table is the oracle for what queries return.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;

-- wait_no_xmin(), before the VACUUMs whose pruning this file checks
\i test/regress/wait_no_xmin.sql

CREATE FUNCTION vfield(t regclass, f text) RETURNS bigint LANGUAGE sql
	AS $$ SELECT (ddb_verify(t)->>f)::bigint $$;

-- One partition of 300 items of ~1 kB: about 40 leaves under one parent.
CREATE TABLE q ("PK" text, "SK" numeric, item jsonb) USING ddb WITH (autovacuum_enabled = false);
CREATE TABLE q_heap ("PK" text, "SK" numeric, item jsonb, PRIMARY KEY ("PK", "SK"))
	WITH (autovacuum_enabled = false);
INSERT INTO q SELECT 'a', i, jsonb_build_object('pad', repeat('x', 1000)) FROM generate_series(1, 300) i;
INSERT INTO q_heap SELECT * FROM q;
SELECT vfield('q', 'height') AS height, vfield('q', 'leaf_pages') > 30 AS many_leaves;

-- Nothing to unlink while the deleted versions are still versions.
DELETE FROM q WHERE "SK" BETWEEN 11 AND 290;
DELETE FROM q_heap WHERE "SK" BETWEEN 11 AND 290;
SELECT vfield('q', 'deleted_pages') AS deleted_before;

-- VACUUM prunes them and unlinks the emptied leaves, all but the first and
-- last child of the parent: the leaves holding 1..10 and 291..300 stay.
SELECT wait_no_xmin();
VACUUM q;
SELECT vfield('q', 'leaf_pages') AS leaves, vfield('q', 'deleted_pages') > 30 AS unlinked,
	vfield('q', 'live') AS live;
-- (That the VACUUM that deleted them cannot hand them out while a
-- snapshot older than their deletion lives is unlink-reuse-horizon.spec's:
-- here any xid another database's autovacuum takes makes them recyclable.)
SELECT "SK" FROM q WHERE "PK" = 'a' ORDER BY "SK" LIMIT 12;
SELECT "SK" FROM q WHERE "PK" = 'a' ORDER BY "SK" DESC LIMIT 12;
SELECT "SK" FROM q WHERE "PK" = 'a' AND "SK" BETWEEN 9 AND 292 ORDER BY "SK";
SELECT "SK" FROM q WHERE "PK" = 'a' AND "SK" BETWEEN 9 AND 292 ORDER BY "SK" DESC;
SELECT ddb_get_item('q', '{"PK": "a", "SK": 291}') ->> 'SK' AS get_291;

-- A key put into an unlinked leaf's old key space goes to its right
-- sibling, which took that space over.
INSERT INTO q VALUES ('a', 150, '{}');
INSERT INTO q_heap VALUES ('a', 150, '{}');
SELECT "SK" FROM q WHERE "PK" = 'a' AND "SK" BETWEEN 100 AND 295 ORDER BY "SK";
SELECT (SELECT array_agg("SK" ORDER BY "SK") FROM q) = (SELECT array_agg("SK" ORDER BY "SK") FROM q_heap)
	AS same_as_heap;

-- Once xids have moved on (the inserts above) and no snapshot is older,
-- the next VACUUM records them in the free space map.
SELECT wait_no_xmin();
SELECT vfield('q', 'recyclable_pages') = vfield('q', 'deleted_pages') AS all_recyclable;
VACUUM q;

-- New items split leaves into the recycled pages: the file does not grow,
-- the deleted pages are used up, and every row is where the heap has it.
SELECT pg_relation_size('q') AS size_before, vfield('q', 'deleted_pages') AS deleted_before,
	vfield('q', 'leaf_pages') AS leaves_before \gset
INSERT INTO q SELECT 'b', i, jsonb_build_object('pad', repeat('y', 1000)) FROM generate_series(1, 150) i;
INSERT INTO q_heap SELECT 'b', i, jsonb_build_object('pad', repeat('y', 1000)) FROM generate_series(1, 150) i;
SELECT pg_relation_size('q') = :size_before AS same_size,
	:deleted_before - vfield('q', 'deleted_pages') = vfield('q', 'leaf_pages') - :leaves_before
		AS each_new_leaf_a_deleted_page,
	vfield('q', 'leaf_pages') - :leaves_before > 15 AS new_leaves;
SELECT (SELECT array_agg("PK" || "SK" ORDER BY "PK", "SK") FROM q) =
	(SELECT array_agg("PK" || "SK" ORDER BY "PK", "SK") FROM q_heap) AS same_as_heap;
SELECT count(*), min("SK"), max("SK") FROM q WHERE "PK" = 'b';

-- Rows whose row-id map entries name an unlinked leaf: keys put between 21
-- and 22 split the leaf holding 15..21 and moved right from the leaf their
-- entries name; then that leaf is emptied and unlinked.  ddb_verify counts
-- the entries as stale (it used to call them corruption: run it only at
-- the end, since its lookups repair the entries they find stale), and
-- updates and deletes by TID still find the rows: the lookup falls back to
-- searching the key's hash.
CREATE TABLE m ("PK" text, "SK" numeric, item jsonb) USING ddb WITH (autovacuum_enabled = false);
INSERT INTO m SELECT 'a', i, jsonb_build_object('pad', repeat('x', 1000)) FROM generate_series(1, 60) i;
INSERT INTO m SELECT 'a', 21 + i / 1000.0, jsonb_build_object('pad', repeat('x', 1000))
	FROM generate_series(30, 1, -1) i;
DELETE FROM m WHERE "SK" >= 8 AND "SK" < 21.025;
SELECT wait_no_xmin();
VACUUM m;
SELECT (v->>'deleted_pages')::int > 0 AS unlinked, v->>'live' AS live,
	(v->>'stale_map_entries')::int > 0 AS stale_entries
FROM ddb_verify('m') v;
UPDATE m SET item = item || '{"u": 1}' WHERE "SK" BETWEEN 21 AND 23;
DELETE FROM m WHERE "SK" = 24;
SELECT count(*) FILTER (WHERE item ? 'u') AS updated, count(*) AS left FROM m;
SELECT vfield('m', 'live') AS live;

-- A stale entry whose page a split has since reused for keys far left of
-- the version's (another partition's leaf): the lookup does not walk right
-- from there through every leaf in between, but descends to the version's
-- partition.  p holds the partition name that sorts first of a few (its
-- hash is lowest); its 300 items of 1 kB fill about 40 leaves left of 'a'.
-- The 'a' keys put between 21 and 22 leave the leaf their entries name,
-- which is emptied and unlinked; once recyclable, p's new items split its
-- first leaves into the freed pages.  Reading by TID one of the moved
-- versions then costs a few buffers (walking from the reused page: about
-- 67).  ddb_verify runs last: its lookups repair the entries.
CREATE FUNCTION buffers_of(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	j json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || q INTO j;
	RETURN (j -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint
		+ (j -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint;
END $$;
CREATE TABLE fl ("PK" text, "SK" numeric, item jsonb) USING ddb WITH (autovacuum_enabled = false);
INSERT INTO fl SELECT 'z' || i, 0, '{}' FROM generate_series(1, 20) i;
SELECT "PK" AS p FROM fl LIMIT 1 \gset
DELETE FROM fl;
INSERT INTO fl SELECT :'p', i, jsonb_build_object('pad', repeat('z', 1000)) FROM generate_series(100, 399) i;
INSERT INTO fl SELECT 'a', i, jsonb_build_object('pad', repeat('x', 1000)) FROM generate_series(1, 60) i;
INSERT INTO fl SELECT 'a', 21 + i / 1000.0, jsonb_build_object('pad', repeat('x', 1000))
	FROM generate_series(30, 1, -1) i;
SELECT ctid AS moved FROM fl WHERE "PK" = 'a' AND "SK" = 21.030 \gset
DELETE FROM fl WHERE "PK" = 'a' AND "SK" >= 8 AND "SK" < 21.025;
SELECT wait_no_xmin();
VACUUM fl;
SELECT txid_current() > 0 AS xid;
SELECT wait_no_xmin();
VACUUM fl;
INSERT INTO fl SELECT :'p', i / 100.0, jsonb_build_object('pad', repeat('y', 1000)) FROM generate_series(1, 80) i;
SELECT buffers_of(format('SELECT "SK" FROM fl WHERE ctid = %L', :'moved')) < 20 AS few_buffers;
SELECT "SK" FROM fl WHERE ctid = :'moved';
SELECT vfield('fl', 'deleted_pages') AS deleted_left, vfield('fl', 'live') AS live;

-- Not unlinked: a leaf emptied of versions that a snapshot still sees (a
-- repeatable-read transaction in another session is tested in
-- test/isolation/specs/unlink-reuse-horizon.spec), the first and the last
-- leaf of a partition's parent, and the only leaf.
CREATE TABLE one ("PK" text, "SK" numeric, item jsonb) USING ddb WITH (autovacuum_enabled = false);
INSERT INTO one VALUES ('a', 1, '{}'), ('a', 2, '{}');
DELETE FROM one;
VACUUM one;
SELECT vfield('one', 'leaf_pages') AS leaves, vfield('one', 'deleted_pages') AS deleted;

-- Row-id map leaves whose entries VACUUM cleared are freed too, and reused
-- (ddb_rowid.c, "Freeing empty leaves"): a counter updated in place writes
-- a version, and so a row id and its 8-byte map entry, per update.  Ten
-- counters bumped 250 times fill three map leaves, of which the first two
-- hold only dead versions' entries after VACUUM.
CREATE TABLE c ("PK" text, "SK" numeric, item jsonb) USING ddb WITH (autovacuum_enabled = false);
INSERT INTO c SELECT 'c', i, '{"n": 0}' FROM generate_series(1, 10) i;
CREATE PROCEDURE bump(rounds int) LANGUAGE plpgsql AS $$
BEGIN
	FOR r IN 1 .. rounds LOOP
		UPDATE c SET item = jsonb_build_object('n', (item->>'n')::int + 1);
		COMMIT;
	END LOOP;
END $$;
CALL bump(250);
SELECT vfield('c', 'map_pages') AS map_pages_before;
SELECT wait_no_xmin();
VACUUM c;
SELECT vfield('c', 'map_pages') AS map_pages_after, vfield('c', 'deleted_pages') AS freed,
	vfield('c', 'recyclable_pages') AS recyclable, vfield('c', 'live') AS live;
-- the rows are still found by TID
UPDATE c SET item = item || '{"t": 1}' WHERE "SK" <= 5;
SELECT sum((item->>'n')::int) AS total, count(*) FILTER (WHERE item ? 't') AS touched FROM c;
-- The VACUUM that freed the leaves recorded them (a freed map leaf waits
-- out no safexid), so the next 150 rounds' new map leaf takes one of
-- them: the file does not grow.
SELECT pg_relation_size('c') AS c_size \gset
CALL bump(150);
SELECT wait_no_xmin();
VACUUM c;
SELECT pg_relation_size('c') = :c_size AS same_size, vfield('c', 'map_pages') AS map_pages,
	vfield('c', 'live') AS live, (SELECT sum((item->>'n')::int) FROM c) AS total;

-- A batch's map entries are written at commit (ddb_rowid.c, "deferred");
-- those of a subtransaction that rolled back are dropped then and there.
-- Its versions are dead, and the INSERT below prunes them when it finds
-- their leaves full: an entry written at commit after that would name a
-- version that is gone (ddb_verify's orphan_map_entries), and its map leaf
-- would never be freed (the test kept 4 more map pages before the fix).
-- The kept batch and the insert are found by TID, and once everything is
-- deleted VACUUM frees every leaf.
CREATE TABLE sp_map ("PK" text, "SK" text, item jsonb) USING ddb WITH (autovacuum_enabled = false);
CREATE FUNCTION sp_batch(lo int, hi int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 0 .. (hi - lo) / 25 LOOP
		PERFORM ddb_batch_write_item(jsonb_build_object('sp_map', (
			SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
				jsonb_build_object('PK', 'P', 'SK', lpad(g::text, 7, '0'), 'pad', repeat('x', 100)))))
			FROM generate_series(lo + 25 * i, least(lo + 25 * i + 24, hi)) g)));
	END LOOP;
END $$;
BEGIN;
SAVEPOINT a;
SELECT sp_batch(1, 1500);
SAVEPOINT b;
SELECT sp_batch(1501, 3000);
RELEASE b;
ROLLBACK TO a;
SAVEPOINT c;
SELECT sp_batch(3001, 3500);
RELEASE c;
INSERT INTO sp_map SELECT 'P', lpad(g::text, 6, '0'), '{"x": 1}' FROM generate_series(1, 3000) g;
COMMIT;
SELECT vfield('sp_map', 'orphan_map_entries') AS orphan_entries;
UPDATE sp_map SET item = item || '{"u": 1}';
SELECT count(*) AS items, count(*) FILTER (WHERE item ? 'u') AS updated FROM sp_map;
DELETE FROM sp_map;
SELECT wait_no_xmin();
VACUUM sp_map;
SELECT vfield('sp_map', 'map_pages') AS map_pages, vfield('sp_map', 'items') AS items;

-- TRUNCATE and VACUUM FULL start a file without deleted pages.
VACUUM FULL q;
SELECT vfield('q', 'deleted_pages') AS deleted_after_full,
	vfield('q', 'live') = (SELECT count(*) FROM q_heap) AS all_live;

DROP TABLE q, q_heap, m, one, c, fl, sp_map;
DROP FUNCTION sp_batch(int, int);
DROP PROCEDURE bump(int);
DROP FUNCTION wait_no_xmin(), vfield(regclass, text), buffers_of(text);
