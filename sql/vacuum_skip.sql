-- VACUUM marks the leaves it leaves all visible in the visibility map and
-- later VACUUMs skip them; every change of a leaf clears its mark first
-- (ddb_vismap.c, ddb_vacuum.c).  ddb_verify counts the marked leaves
-- (all_visible_leaves) and fails on a marked leaf that holds a version not
-- visible to every snapshot, so every change below is checked by it.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;

-- wait_no_xmin(), so that each VACUUM sees every earlier change as old.
-- Its transaction takes an xid and writes nothing, so it commits
-- asynchronously, and until a later commit flushes the WAL past that no
-- hint bit is set for the transactions near it in the commit log (heap's
-- rule: SetHintBits), without which VACUUM, as heap's, does not take a
-- version for all visible yet.  An insert into wal_flush is that commit.
\i test/regress/wait_no_xmin.sql
CREATE TABLE wal_flush (i int);

CREATE FUNCTION marked(t regclass) RETURNS text LANGUAGE sql
	AS $$ SELECT format('%s of %s leaves marked', v->>'all_visible_leaves', v->>'leaf_pages')
		  FROM ddb_verify(t) v $$;
CREATE FUNCTION unmarked(t regclass) RETURNS bigint LANGUAGE sql
	AS $$ SELECT (v->>'leaf_pages')::bigint - (v->>'all_visible_leaves')::bigint
		  FROM ddb_verify(t) v $$;

-- 60 partitions of 50 items of ~200 bytes: a tree of height two.
CREATE TABLE vst ("PK" text, "SK" numeric, item jsonb) USING ddb WITH (autovacuum_enabled = false);
INSERT INTO vst SELECT 'p' || (i % 60), i, jsonb_build_object('pad', repeat('x', 200))
	FROM generate_series(1, 3000) i;
SELECT (ddb_verify('vst')->>'height')::int AS height, marked('vst');
-- the tree is made with a map of one page, which its writers find
SELECT pg_relation_size('vst', 'vm') AS vm_bytes_before;

-- The first VACUUM reads every leaf and marks those it leaves all visible
-- (every one here), and extends the map a page beyond the table.
SELECT wait_no_xmin();
INSERT INTO wal_flush VALUES (1);
SET client_min_messages = info;
VACUUM (VERBOSE, PROCESS_TOAST false) vst;
SET client_min_messages = warning;
SELECT marked('vst'), unmarked('vst') AS unmarked, pg_relation_size('vst', 'vm') AS vm_bytes;
-- The next one reads only that leaf, and leaves relfrozenxid as it was
-- (it did not see the others' xids) and the item count as it was.
SELECT relfrozenxid AS frozen_before FROM pg_class WHERE relname = 'vst' \gset
SET client_min_messages = info;
VACUUM (VERBOSE, PROCESS_TOAST false) vst;
SET client_min_messages = warning;
SELECT relfrozenxid = :'frozen_before' AS relfrozenxid_kept, reltuples FROM pg_class WHERE relname = 'vst';

-- Every kind of change clears the mark of the leaf it changes, before it
-- changes it; ddb_verify would fail on any leaf left marked.
INSERT INTO vst VALUES ('p1', 100001, '{}');
SELECT unmarked('vst') AS after_insert;
UPDATE vst SET item = '{"u": 1}' WHERE "PK" = 'p2' AND "SK" = 2;
SELECT unmarked('vst') AS after_update;
DELETE FROM vst WHERE "PK" = 'p3' AND "SK" = 3;
SELECT unmarked('vst') AS after_delete;
BEGIN;
SELECT "SK" FROM vst WHERE "PK" = 'p4' AND "SK" = 4 FOR UPDATE;
COMMIT;
SELECT unmarked('vst') AS after_row_lock;
SELECT ddb_put_item('vst', '{"PK": "p5", "SK": 5, "n": 1}') IS NULL AS put_overwrite;
SELECT unmarked('vst') AS after_put;
SELECT ddb_update_item('vst', '{"PK": "p6", "SK": 6}', 'SET n = :n', NULL, NULL, '{":n": 2}') IS NULL AS updated;
SELECT unmarked('vst') AS after_update_item;
SELECT ddb_delete_item('vst', '{"PK": "p7", "SK": 7}') IS NULL AS deleted;
SELECT count(*) AS p7_left FROM vst WHERE "PK" = 'p7' AND "SK" = 7;
SELECT unmarked('vst') AS after_delete_item;
SELECT ddb_api('BatchWriteItem', '{"RequestItems": {"vst": [
	{"PutRequest": {"Item": {"PK": {"S": "p8"}, "SK": {"N": "100008"}}}},
	{"PutRequest": {"Item": {"PK": {"S": "p8"}, "SK": {"N": "100009"}}}}]}}') AS batch;
SELECT unmarked('vst') AS after_batch;
-- a split of a marked leaf: both halves unmarked
INSERT INTO vst SELECT 'p9', 200000 + i, jsonb_build_object('pad', repeat('y', 200))
	FROM generate_series(1, 40) i;
SELECT unmarked('vst') AS after_split;
COPY vst FROM STDIN;
p10	300000	{}
p11	300000	{}
\.
SELECT unmarked('vst') AS after_copy;

-- The next VACUUM reads the leaves these changed, and only those: it
-- removes the dead versions (live = items again) and marks them again.
SELECT wait_no_xmin();
INSERT INTO wal_flush VALUES (1);
SET client_min_messages = info;
VACUUM (VERBOSE, PROCESS_TOAST false) vst;
SET client_min_messages = warning;
SELECT marked('vst'), (v->>'items') = (v->>'live') AS no_dead_versions
	FROM ddb_verify('vst') v;
SELECT count(*) FROM vst;

-- DISABLE_PAGE_SKIPPING reads every leaf, as does an aggressive VACUUM
-- (FREEZE), which also advances relfrozenxid.
SET client_min_messages = info;
VACUUM (VERBOSE, PROCESS_TOAST false, DISABLE_PAGE_SKIPPING) vst;
SET client_min_messages = warning;
SELECT wait_no_xmin();
INSERT INTO wal_flush VALUES (1);
VACUUM (FREEZE) vst;
SELECT relfrozenxid <> :'frozen_before' AS relfrozenxid_advanced FROM pg_class WHERE relname = 'vst';
SELECT marked('vst');

-- A VACUUM that skips leaves still empties those that changed: a
-- partition deleted whole is unlinked, the leaves around it skipped.
DELETE FROM vst WHERE "PK" = 'p20';
SELECT wait_no_xmin();
INSERT INTO wal_flush VALUES (1);
SET client_min_messages = info;
VACUUM (VERBOSE, PROCESS_TOAST false) vst;
SET client_min_messages = warning;
SELECT count(*) FROM vst WHERE "PK" = 'p20';
SELECT marked('vst'), (v->>'deleted_pages')::int > 0 AS unlinked FROM ddb_verify('vst') v;

-- A tree of one leaf (no level 1: VACUUM walks it by right-links), an
-- unlogged table and a temporary one.
CREATE TEMPORARY TABLE tmp ("PK" text, "SK" numeric, item jsonb) USING ddb;
INSERT INTO tmp SELECT 'p' || (i % 7), i, jsonb_build_object('pad', repeat('x', 200))
	FROM generate_series(1, 500) i;
CREATE TABLE one ("PK" text, item jsonb) USING ddb WITH (autovacuum_enabled = false);
INSERT INTO one VALUES ('a', '{}'), ('b', '{}');
CREATE UNLOGGED TABLE unl ("PK" text, "SK" numeric, item jsonb) USING ddb WITH (autovacuum_enabled = false);
INSERT INTO unl SELECT 'p' || (i % 7), i, jsonb_build_object('pad', repeat('x', 200))
	FROM generate_series(1, 500) i;
SELECT wait_no_xmin();
INSERT INTO wal_flush VALUES (1);
VACUUM one, unl, tmp;
SELECT marked('one') AS one, marked('unl') AS unl, marked('tmp') AS tmp;
DELETE FROM tmp WHERE "SK" < 100;
DELETE FROM unl WHERE "SK" < 100;
DELETE FROM one WHERE "PK" = 'a';
SELECT marked('one') AS one, marked('unl') AS unl, marked('tmp') AS tmp;
SELECT wait_no_xmin();
INSERT INTO wal_flush VALUES (1);
VACUUM one, unl, tmp;
SELECT marked('one') AS one, marked('unl') AS unl, marked('tmp') AS tmp,
	(SELECT count(*) FROM unl) AS ul_rows, (SELECT count(*) FROM tmp) AS tmp_rows;

-- VACUUM FULL and TRUNCATE start a new file: VACUUM FULL's build makes a
-- new map with it, nothing marked; TRUNCATE's empty file has none until
-- its first item.
VACUUM FULL vst;
SELECT marked('vst'), pg_relation_size('vst', 'vm') AS vm_bytes;
TRUNCATE unl;
SELECT pg_relation_size('unl', 'vm') AS vm_bytes;

DROP TABLE vst, one, unl, tmp, wal_flush;
DROP FUNCTION marked(regclass), unmarked(regclass), wait_no_xmin();
