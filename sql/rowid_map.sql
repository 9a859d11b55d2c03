-- The row-id map leaf a backend wrote last is cached in the relation's
-- relcache entry (ddb_rowid.c, map_leaf_for_write): a transaction's
-- entries go straight to it.  The cache must never outlive the file it
-- names.  Each case below caches a leaf of one file (a TID resolution or a
-- commit writes the deferred entries), makes another file the table's or
-- brings an old one back, and writes entries again: with a stale leaf they
-- would go to a block of the wrong file (past its end, a tree page, or
-- another range's map leaf), and the UPDATE of every row, which resolves
-- each TID through the map, or ddb_verify would fail.  Row ids restart
-- at 0 in a new file, and a map leaf covers about a thousand, so each
-- case's row ids fall in the range of the leaf cached before.
-- (ddb_verify's live versions, not all its items: how many dead versions
-- VACUUM FULL or a prune may remove depends on other sessions' snapshots.)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

-- A table created in this transaction is truncated in place (the same
-- relfilenode, its row ids starting over at 0).
BEGIN;
CREATE TABLE rm_inplace (pk text, sk text, item jsonb) USING ddb;
INSERT INTO rm_inplace SELECT 'p' || (i % 7), 's' || i, jsonb_build_object('pad', repeat('x', 200))
  FROM generate_series(1, 300) i;
UPDATE rm_inplace SET item = '{"u": 1}' WHERE pk = 'p1' AND sk = 's1';
TRUNCATE rm_inplace;
INSERT INTO rm_inplace SELECT 'q', 's' || i, jsonb_build_object('pad', repeat('y', 200))
  FROM generate_series(1, 50) i;
UPDATE rm_inplace SET item = '{"u": 2}' WHERE pk = 'q' AND sk = 's2';
COMMIT;
UPDATE rm_inplace SET item = '{"u": 3}';
SELECT count(*) FILTER (WHERE item = '{"u": 3}') AS updated, ddb_verify('rm_inplace') ->> 'live' AS live
  FROM rm_inplace;

-- The leaf where this backend last saw a version (ddb_modify.c,
-- last_fetched: a TID fetch or a key scan of an UPDATE's target notes it,
-- and the next lookup of that TID starts there) must not outlive its file
-- either.  After an in-place TRUNCATE the row id it names is a new row's,
-- and the leaf, from a tree of hundreds of pages, lies past the end of the
-- new file of a few: fetching that TID, or an UPDATE or DELETE that finds
-- its row by a sequential scan (which notes no leaf), read that block and
-- failed with "could not read block".
BEGIN;
CREATE TABLE rm_seen (pk text, sk text, item jsonb) USING ddb;
INSERT INTO rm_seen SELECT 'p' || (i % 50), 's' || i, jsonb_build_object('pad', repeat('x', 1000))
  FROM generate_series(1, 2000) i;
SELECT pk, sk FROM rm_seen WHERE ctid = '(0,6)';
TRUNCATE rm_seen;
INSERT INTO rm_seen SELECT 'q', 's' || i, jsonb_build_object('n', i) FROM generate_series(1, 10) i;
SELECT pg_relation_size('rm_seen') / current_setting('block_size')::int <= 3 AS small_file;
SELECT pk, sk FROM rm_seen WHERE ctid = '(0,6)';
TRUNCATE rm_seen;
INSERT INTO rm_seen SELECT 'p' || (i % 50), 's' || i, jsonb_build_object('pad', repeat('x', 1000))
  FROM generate_series(1, 2000) i;
SELECT pk, sk FROM rm_seen WHERE ctid = '(0,7)';
TRUNCATE rm_seen;
INSERT INTO rm_seen SELECT 'r', 's' || i, jsonb_build_object('n', i) FROM generate_series(1, 10) i;
UPDATE rm_seen SET item = '{"u": 1}' WHERE item ->> 'n' = '7';
COMMIT;
SELECT count(*) AS rows, count(*) FILTER (WHERE item = '{"u": 1}') AS updated,
       ddb_verify('rm_seen') ->> 'live' AS live
  FROM rm_seen;

-- The same across transactions: a temporary table ON COMMIT DELETE ROWS
-- is truncated in place at every commit.
CREATE TEMP TABLE rm_seen_temp (pk text, sk text, item jsonb) USING ddb ON COMMIT DELETE ROWS;
BEGIN;
INSERT INTO rm_seen_temp SELECT 'p' || (i % 50), 's' || i, jsonb_build_object('pad', repeat('x', 1000))
  FROM generate_series(1, 2000) i;
SELECT pk, sk FROM rm_seen_temp WHERE ctid = '(0,7)';
COMMIT;
BEGIN;
INSERT INTO rm_seen_temp SELECT 'r', 's' || i, jsonb_build_object('n', i) FROM generate_series(1, 10) i;
DELETE FROM rm_seen_temp WHERE item ->> 'n' = '7';
SELECT count(*) AS rows FROM rm_seen_temp;
COMMIT;
DROP TABLE rm_seen_temp;

-- A TRUNCATE (a new relfilenode) rolled back: the entries written into the
-- new file were cached, and the old file is back.
CREATE TABLE rm_rollback (pk text, sk text, item jsonb) USING ddb;
INSERT INTO rm_rollback SELECT 'p' || (i % 7), 's' || i, jsonb_build_object('pad', repeat('x', 200))
  FROM generate_series(1, 300) i;
BEGIN;
TRUNCATE rm_rollback;
INSERT INTO rm_rollback SELECT 'q', 's' || i, '{}' FROM generate_series(1, 10) i;
UPDATE rm_rollback SET item = '{"u": 1}' WHERE pk = 'q' AND sk = 's1';
ROLLBACK;
INSERT INTO rm_rollback SELECT 'r', 's' || i, '{}' FROM generate_series(1, 10) i;
UPDATE rm_rollback SET item = '{"u": 2}';
SELECT count(*) FILTER (WHERE item = '{"u": 2}') AS updated, ddb_verify('rm_rollback') ->> 'live' AS live
  FROM rm_rollback;

-- The same with a savepoint: the TRUNCATE's file is cached, then rolled
-- back to the savepoint, and the transaction goes on with the old file.
BEGIN;
INSERT INTO rm_rollback SELECT 's', 's' || i, '{}' FROM generate_series(1, 10) i;
SAVEPOINT a;
TRUNCATE rm_rollback;
INSERT INTO rm_rollback SELECT 'q', 's' || i, '{}' FROM generate_series(1, 10) i;
UPDATE rm_rollback SET item = '{"u": 3}' WHERE pk = 'q' AND sk = 's1';
ROLLBACK TO a;
INSERT INTO rm_rollback SELECT 't', 's' || i, '{}' FROM generate_series(1, 10) i;
UPDATE rm_rollback SET item = '{"u": 4}' WHERE pk IN ('s', 't');
COMMIT;
UPDATE rm_rollback SET item = '{"u": 5}';
SELECT count(*) FILTER (WHERE item = '{"u": 5}') AS updated, ddb_verify('rm_rollback') ->> 'live' AS live
  FROM rm_rollback;

-- A TRUNCATE in a savepoint, then another one in the same savepoint, which
-- truncates the savepoint's file in place, rolled back: the old file is
-- back, and so must be the deferred entries of the rows written into it
-- before the savepoint (a batch defers them with either WAL).  The
-- in-place truncation dropped every entry of the table, and the rows could
-- be read but not updated, nor verified.
CREATE TABLE rm_forget (pk text, sk text, item jsonb) USING ddb;
INSERT INTO rm_forget VALUES ('a', 'b', '{}');
BEGIN;
SELECT ddb_batch_write_item(jsonb_build_object('rm_forget', (
  SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
    jsonb_build_object('pk', 'c', 'sk', i::text)))) FROM generate_series(1, 3) i))) AS unprocessed;
SAVEPOINT a;
TRUNCATE rm_forget;
INSERT INTO rm_forget VALUES ('q', 's', '{}');
TRUNCATE rm_forget;
ROLLBACK TO a;
COMMIT;
SELECT ddb_verify('rm_forget') ->> 'live' AS live, ddb_verify('rm_forget') ->> 'orphan_map_entries' AS orphans;
UPDATE rm_forget SET item = '{"u": 1}';
SELECT count(*) FILTER (WHERE item = '{"u": 1}') AS updated FROM rm_forget;

-- A DROP TABLE in a savepoint while the pending list fills up (65536
-- entries: its flush writes every relation's entries it can), rolled back:
-- the table is back, and so must be its deferred entries.  The flush found
-- no relation and dropped them.
CREATE TABLE rm_dropped (pk text, sk text, item jsonb) USING ddb;
CREATE TABLE rm_filler (pk text, sk text, item jsonb) USING ddb;
BEGIN;
SELECT ddb_batch_write_item(jsonb_build_object('rm_dropped', (
  SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
    jsonb_build_object('pk', 'c', 'sk', i::text)))) FROM generate_series(1, 3) i))) AS unprocessed;
SAVEPOINT a;
DROP TABLE rm_dropped;
DO $$
BEGIN
  FOR j IN 0 .. 2700 LOOP
    PERFORM ddb_batch_write_item(jsonb_build_object('rm_filler', (
      SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
        jsonb_build_object('pk', 'p' || (i % 100), 'sk', i::text))))
      FROM generate_series(j * 25, j * 25 + 24) i)));
  END LOOP;
END $$;
ROLLBACK TO a;
COMMIT;
SELECT ddb_verify('rm_dropped') ->> 'live' AS live, ddb_verify('rm_dropped') ->> 'orphan_map_entries' AS orphans;
UPDATE rm_dropped SET item = '{"u": 1}';
SELECT count(*) FILTER (WHERE item = '{"u": 1}') AS updated FROM rm_dropped;

-- A committed TRUNCATE and a rewrite (VACUUM FULL builds the map anew in
-- a new file) after entries of the old file were cached.
INSERT INTO rm_rollback VALUES ('v', 'x', '{}');
TRUNCATE rm_rollback;
INSERT INTO rm_rollback SELECT 'p' || (i % 7), 's' || i, jsonb_build_object('pad', repeat('x', 200))
  FROM generate_series(1, 300) i;
DELETE FROM rm_rollback WHERE pk = 'p3';
VACUUM FULL rm_rollback;
INSERT INTO rm_rollback SELECT 'w', 's' || i, '{}' FROM generate_series(1, 10) i;
UPDATE rm_rollback SET item = '{"u": 6}';
SELECT count(*) FILTER (WHERE item = '{"u": 6}') AS updated, ddb_verify('rm_rollback') ->> 'live' AS live
  FROM rm_rollback;

-- Row ids past the cached leaf's range (about a thousand per map leaf, in
-- batches of 64 per backend): the next leaf is found, or made, through the
-- directory.
CREATE TABLE rm_many (pk text, sk text, item jsonb) USING ddb;
DO $$
BEGIN
  FOR i IN 1..40 LOOP
    INSERT INTO rm_many SELECT 'p' || (j % 5), i || '-' || j, '{}' FROM generate_series(1, 60) j;
    COMMIT;
  END LOOP;
END $$;
UPDATE rm_many SET item = '{"u": 1}';
SELECT count(*) FILTER (WHERE item = '{"u": 1}') AS updated, ddb_verify('rm_many') ->> 'live' AS live
  FROM rm_many;

-- ddb_verify inside a transaction whose map entries are still deferred
-- (with Generic WAL): checking the map writes them, which adds map pages
-- here, and the check must count them as part of the file (it reported
-- "bad row-id map link" when it read the file's size first).  Rows of the
-- open transaction are not yet live to it.
CREATE TABLE rm_verify (pk text, sk text, item jsonb) USING ddb;
INSERT INTO rm_verify VALUES ('a', 'b', '{}');
BEGIN;
INSERT INTO rm_verify SELECT 'p' || (i % 50), 's' || i, '{}' FROM generate_series(1, 3000) i;
SELECT ddb_verify('rm_verify') ->> 'live' AS live_in_transaction;
COMMIT;
SELECT ddb_verify('rm_verify') ->> 'live' AS live;

-- Deferred entries of a table's earlier file, kept for a savepoint
-- rollback, and those of its current file have row ids alike (both count
-- from 0): the current file's entries are still written a map leaf at a
-- time, not in a record each (about 750 records here when the two files'
-- entries were sorted together by row id alone).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_walinspect;
RESET client_min_messages;
CREATE TABLE rm_files (pk text, sk text, item jsonb) USING ddb;
CREATE FUNCTION rm_batches(tbl text, tag text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR j IN 0 .. 39 LOOP
    PERFORM ddb_batch_write_item(jsonb_build_object(tbl, (
      SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
        jsonb_build_object('pk', tag || (i % 10), 'sk', i::text))))
      FROM generate_series(j * 25, j * 25 + 24) i)));
  END LOOP;
END $$;
BEGIN;
SELECT rm_batches('rm_files', 'a');
SAVEPOINT a;
TRUNCATE rm_files;
SELECT rm_batches('rm_files', 'b');
SELECT pg_current_wal_insert_lsn() AS lsn \gset
COMMIT;
SELECT count(*) BETWEEN 1 AND 20 AS a_record_per_map_leaf
  FROM pg_get_wal_records_info(:'lsn', pg_current_wal_flush_lsn())
  WHERE resource_manager IN ('Generic', 'ddb')
    AND block_ref LIKE '%/' || pg_relation_filenode('rm_files') || ' %';
SELECT count(*) AS rows, ddb_verify('rm_files') ->> 'orphan_map_entries' AS orphans FROM rm_files;
UPDATE rm_files SET item = '{"u": 1}';
SELECT count(*) FILTER (WHERE item = '{"u": 1}') AS updated FROM rm_files;

-- A parallel query's workers resolve TIDs through the map too, and they
-- cannot see the deferred entries of the backend that started them: those
-- are written before the query starts.  The batch defers its entries with
-- or without ddb's own WAL, a single INSERT without it.  The join below runs
-- whole in a worker, whose TID scan must find every row of the transaction.
CREATE TABLE rm_parallel (pk text, sk text, item jsonb) USING ddb;
INSERT INTO rm_parallel VALUES ('old', '1', '{}');
BEGIN;
SELECT ddb_batch_write_item('{"rm_parallel": [
  {"PutRequest": {"Item": {"pk": "bw", "sk": "1"}}},
  {"PutRequest": {"Item": {"pk": "bw", "sk": "2"}}}]}');
INSERT INTO rm_parallel VALUES ('ins', '1', '{"i": 1}');
SET LOCAL force_parallel_mode = on;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
EXPLAIN (COSTS OFF)
SELECT b.pk, b.sk, b.item FROM rm_parallel a JOIN rm_parallel b ON b.ctid = a.ctid ORDER BY 1, 2;
SELECT b.pk, b.sk, b.item FROM rm_parallel a JOIN rm_parallel b ON b.ctid = a.ctid ORDER BY 1, 2;
COMMIT;

DROP TABLE rm_inplace, rm_seen, rm_rollback, rm_forget, rm_dropped, rm_filler, rm_many, rm_verify, rm_files, rm_parallel;
DROP FUNCTION rm_batches(text, text);
