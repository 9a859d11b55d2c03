-- WAL records per write (ddb_modify.c ddb_update_version and ddb_tree.c
-- ddb_tree_insert_beside): an update whose new version fits beside the
-- old one on its leaf marks the old version and adds the new one in one
-- WAL record, with one descent; before, it was two records (xmax,
-- then the insert after a second descent).  A full leaf takes the general
-- path, which prunes or splits.  Counted with pg_walinspect (which reads
-- flushed WAL: each write commits on its own), on the table's own blocks;
-- the commit adds the row-id map's record for the new version.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
CREATE EXTENSION IF NOT EXISTS pg_walinspect;
RESET client_min_messages;

CREATE TABLE wr ("PK" text, "SK" text, item jsonb) USING ddb;
INSERT INTO wr SELECT 'P', 'S' || i, '{"n": 0}' FROM generate_series(1, 20) i;
CHECKPOINT;

-- WAL records on tbl's blocks since lsn (flushed WAL): Generic ones, or
-- ddb's own when ddb is preloaded (ddb_wal.c), so the counts hold in both.
CREATE FUNCTION records_since(lsn pg_lsn, tbl regclass) RETURNS bigint
LANGUAGE sql AS $$
  SELECT count(*) FROM pg_get_wal_records_info(lsn, pg_current_wal_flush_lsn())
  WHERE resource_manager IN ('Generic', 'ddb')
    AND block_ref LIKE '%/' || pg_relation_filenode(tbl) || ' %'
$$;

-- Plain SQL UPDATE and the API's UpdateItem and overwriting PutItem: one
-- record each, and the map's at commit (three before: xmax, insert, map).
SELECT pg_current_wal_insert_lsn() AS lsn \gset
UPDATE wr SET item = '{"n": 1}' WHERE "PK" = 'P' AND "SK" = 'S7';
SELECT records_since(:'lsn', 'wr') AS sql_update;
SELECT pg_current_wal_insert_lsn() AS lsn \gset
SELECT ddb_update_item('wr', '{"PK": "P", "SK": "S8"}', 'ADD n :one', vals => '{":one": 1}') IS NULL AS none;
SELECT records_since(:'lsn', 'wr') AS update_item;
SELECT pg_current_wal_insert_lsn() AS lsn \gset
SELECT ddb_put_item('wr', '{"PK": "P", "SK": "S9", "n": 5}') IS NULL AS none;
SELECT records_since(:'lsn', 'wr') AS put_over;

SELECT "SK", item FROM wr WHERE "SK" IN ('S7', 'S8', 'S9') ORDER BY "SK";
SELECT v ->> 'live' AS live, v ->> 'items' AS items FROM ddb_verify('wr') v;

-- A leaf with no room for the new version: the general path (xmax, then
-- the insert after a descent, which prunes or splits).  New keys filled
-- the leaf up to its reserve; three versions of one key in one transaction
-- (none prunable) cannot all fit, so at least one update takes the general
-- path: more than the 3 + 1 records of three one-record updates.
CREATE TABLE wr_full ("PK" text, "SK" text, item jsonb) USING ddb;
INSERT INTO wr_full SELECT 'P', 'S' || lpad(i::text, 3, '0'), jsonb_build_object('pad', repeat('x', 1000))
FROM generate_series(1, 12) i;
SELECT pg_current_wal_insert_lsn() AS lsn \gset
BEGIN;
UPDATE wr_full SET item = jsonb_build_object('pad', repeat('a', 1000)) WHERE "SK" = 'S003';
UPDATE wr_full SET item = jsonb_build_object('pad', repeat('b', 1000)) WHERE "SK" = 'S003';
UPDATE wr_full SET item = jsonb_build_object('pad', repeat('c', 1000)) WHERE "SK" = 'S003';
COMMIT;
SELECT records_since(:'lsn', 'wr_full') > 4 AS general_path;
SELECT "SK", left(item ->> 'pad', 3) AS pad FROM wr_full WHERE "SK" <= 'S004' ORDER BY "SK";
SELECT v ->> 'live' AS live FROM ddb_verify('wr_full') v;

-- One statement updating many rows, in one transaction: a record per row
-- (and the splits), and the map's entries for the new versions together.
-- Resolving each old version's row id through the map used to write this
-- backend's deferred entries first, which with Generic WAL logged one more
-- record per row (about 2 a row; ddb_rowid.c map_flush_for).
CREATE TABLE wr_many ("PK" text, "SK" text, item jsonb) USING ddb WITH (fillfactor = 50);
INSERT INTO wr_many SELECT 'P' || (i % 10), 'S' || i, '{"n": 0}' FROM generate_series(1, 200) i;
SELECT pg_current_wal_insert_lsn() AS lsn \gset
UPDATE wr_many SET item = '{"n": 1}';
SELECT records_since(:'lsn', 'wr_many') BETWEEN 200 AND 260 AS about_one_a_row;
SELECT count(*) FILTER (WHERE item = '{"n": 1}') AS updated, ddb_verify('wr_many') ->> 'live' AS live FROM wr_many;

DROP FUNCTION records_since(pg_lsn, regclass);
DROP TABLE wr, wr_full, wr_many;
