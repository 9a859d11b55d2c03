-- A batch of new items goes in with one descent and one WAL record per
-- leaf (ddb_tree.c ddb_tree_insert_multi): COPY's row path, batch by batch
-- as COPY hands them over (a table with insert triggers, or ddb.bulk_load
-- = off, as here: otherwise COPY spools and sorts its rows, bulk_load.sql),
-- and BatchWriteItem's puts of new keys.  Proves: the rows are all there
-- (against a heap shadow of the same rows) and the tree is sound
-- (ddb_verify) after batches that span many leaves and partitions and
-- that split leaves; a duplicate of an existing key is the same
-- unique_violation as before and leaves nothing; one WAL record per leaf
-- (pg_walinspect, in either WAL mode); BatchWriteItem's overwrites,
-- deletes, large items and indexes alongside.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
CREATE EXTENSION IF NOT EXISTS pg_walinspect;
RESET client_min_messages;
CREATE SCHEMA multi;
SET ddb.schema = multi;
SET search_path = multi, public;
SET ddb.bulk_load = off;

-- WAL records on tbl's blocks since lsn (flushed WAL): Generic ones, or
-- ddb's own when ddb is preloaded, so the counts hold in both modes.
CREATE FUNCTION mi_records(lsn pg_lsn, tbl regclass) RETURNS bigint
LANGUAGE sql AS $$
  SELECT count(*) FROM pg_get_wal_records_info(lsn, pg_current_wal_flush_lsn())
  WHERE resource_manager IN ('Generic', 'ddb')
    AND block_ref LIKE '%/' || pg_relation_filenode(tbl) || ' %'
$$;

-- rows of a ddb table and its heap shadow that are not in the other
CREATE FUNCTION mi_diff(a regclass, b regclass) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM ((TABLE %s EXCEPT ALL TABLE %s) UNION ALL (TABLE %s EXCEPT ALL TABLE %s)) d',
                 a, b, b, a) INTO n;
  RETURN n;
END $$;

CREATE TABLE mi ("PK" text, "SK" text, item jsonb) USING ddb;
CREATE TABLE mi_heap ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));
INSERT INTO mi VALUES ('P', 'S00', '{"n": 0}');
INSERT INTO mi_heap VALUES ('P', 'S00', '{"n": 0}');
CHECKPOINT;

-- 20 small rows of one partition into a one-leaf table: one record for
-- the leaf and one for the row-id map at commit (21 before: one per row).
SELECT pg_current_wal_insert_lsn() AS lsn \gset
COPY mi FROM PROGRAM 'seq 1 20 | awk ''{printf "P\tS%02d\t{\"n\": %d}\n", $1, $1}''';
SELECT mi_records(:'lsn', 'mi') AS copy_20_rows_records;
COPY mi_heap FROM PROGRAM 'seq 1 20 | awk ''{printf "P\tS%02d\t{\"n\": %d}\n", $1, $1}''';
SELECT mi_diff('mi', 'mi_heap') AS diff, (SELECT count(*) FROM mi) AS n;

-- Many partitions and leaves, and leaf splits on the way (items of ~400
-- bytes: 20 to a leaf), in COPY's batches of 1,000 rows.
COPY mi FROM PROGRAM 'seq 1 5000 | awk ''{printf "C%d\tS%05d\t{\"pad\": \"%0400d\"}\n", $1 % 97, $1, $1}''';
COPY mi_heap FROM PROGRAM 'seq 1 5000 | awk ''{printf "C%d\tS%05d\t{\"pad\": \"%0400d\"}\n", $1 % 97, $1, $1}''';
SELECT mi_diff('mi', 'mi_heap') AS diff, (SELECT count(*) FROM mi) AS n;
SELECT (v ->> 'leaf_pages')::int > 200 AS many_leaves, v ->> 'live' AS live, v ->> 'items' AS items
FROM ddb_verify('mi') v;
-- every row reachable by its TID (the row-id map) and by its key
SELECT count(*) FROM mi WHERE ctid IN (SELECT ctid FROM mi);
SELECT count(*) FROM mi m JOIN mi_heap h USING ("PK", "SK") WHERE m.item = h.item;
-- A batch's memory is kept from batch to batch (ddb_scratch_enter): one
-- context of each kind for the backend, which keeps its first block and is
-- empty again after the last batch of 1,000 rows.
SELECT name, total_bytes >= CASE name WHEN 'ddb row batch' THEN 1024 * 1024 ELSE 512 * 1024 END AS keeps_its_block,
       used_bytes < 4096 AS reset
FROM pg_backend_memory_contexts WHERE name IN ('ddb row batch', 'ddb multi insert') ORDER BY name;

-- A duplicate of an existing key, anywhere in a batch: the same
-- unique_violation as a single INSERT, and nothing of the batch stays.
COPY mi FROM PROGRAM 'printf "D1\tA\t{}\nC5\tS00005\t{}\nD2\tB\t{}\n"';
INSERT INTO mi VALUES ('C5', 'S00005', '{}');
-- a key twice in one batch: the second is the duplicate
COPY mi FROM PROGRAM 'printf "D3\tA\t{}\nD3\tA\t{}\n"';
SELECT count(*) AS n FROM mi;
SELECT v ->> 'live' AS live FROM ddb_verify('mi') v;
-- under a savepoint, rolled back: the table is as it was
BEGIN;
SAVEPOINT a;
COPY mi FROM PROGRAM 'printf "E1\tA\t{}\nE2\tA\t{}\n"';
SELECT count(*) AS in_savepoint FROM mi WHERE "PK" LIKE 'E%';
ROLLBACK TO a;
COMMIT;
SELECT count(*) AS after_rollback FROM mi WHERE "PK" LIKE 'E%';

-- A deleted key can be loaded again; its dead version stays beside it
-- until VACUUM.
DELETE FROM mi WHERE "PK" = 'P' AND "SK" IN ('S03', 'S04');
COPY mi FROM PROGRAM 'printf "P\tS03\t{\"again\": true}\nP\tS04\t{\"again\": true}\n"';
SELECT "SK", item FROM mi WHERE "PK" = 'P' AND "SK" IN ('S03', 'S04') ORDER BY "SK";
SELECT v ->> 'live' AS live FROM ddb_verify('mi') v;

-- ------------------------------------------------------------------------
-- BatchWriteItem: the puts of new keys together, the rest as before.
-- ------------------------------------------------------------------------
SELECT ddb_create_table('mi_orders', 'PK', 'S', 'SK', 'S') IS NOT NULL AS created;
SELECT ddb_create_gsi('mi_orders', 'StatusIndex', 'status', sort_key => 'SK') IS NULL AS gsi;
SELECT ddb_put_item('mi_orders', '{"PK": "A", "SK": "01", "status": "OLD"}') IS NULL AS put;
SELECT ddb_put_item('mi_orders', '{"PK": "A", "SK": "02", "status": "OLD"}') IS NULL AS put;
CHECKPOINT;

-- 25 new items of one partition: one leaf record (and the map's), and the
-- index saw every item.
SELECT pg_current_wal_insert_lsn() AS lsn \gset
SELECT ddb_batch_write_item(jsonb_build_object('mi_orders', (
  SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
           jsonb_build_object('PK', 'B', 'SK', lpad(i::text, 2, '0'), 'status', 'NEW', 'i', i))))
  FROM generate_series(1, 25) i)));
SELECT mi_records(:'lsn', 'mi_orders'::regclass) AS batch_25_records;
SELECT count(*) AS new_in_index FROM ddb_query('mi_orders', '#s = :s', '{":s": "NEW"}', '{"#s": "status"}',
                                               index_name => 'StatusIndex');

-- New keys over many partitions beside an overwrite, a delete and an
-- item large enough for TOAST, in one call.
SELECT ddb_batch_write_item(jsonb_build_object('mi_orders',
  (SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
            jsonb_build_object('PK', 'C' || i, 'SK', '01', 'status', 'NEW'))))
   FROM generate_series(1, 21) i)
  || '[{"PutRequest": {"Item": {"PK": "A", "SK": "01", "status": "REPLACED"}}},
       {"DeleteRequest": {"Key": {"PK": "A", "SK": "02"}}},
       {"PutRequest": {"Item": {"PK": "D", "SK": "01", "status": "BIG"}}}]'::jsonb
  || jsonb_build_array(jsonb_build_object('PutRequest', jsonb_build_object('Item',
       jsonb_build_object('PK', 'D', 'SK', '02', 'status', 'BIG', 'blob', (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 300) g)))))));
SELECT x ->> 'PK' AS pk, x ->> 'SK' AS sk, x ->> 'status' AS status, length(x ->> 'blob') AS blob
FROM ddb_scan('mi_orders') x WHERE x ->> 'PK' IN ('A', 'D') ORDER BY 1, 2;
SELECT count(*) AS c_items FROM ddb_scan('mi_orders') x WHERE x ->> 'PK' LIKE 'C%';
SELECT x ->> 'status' AS status, count(*) FROM ddb_query('mi_orders', '#s = :s', '{":s": "NEW"}', '{"#s": "status"}',
       index_name => 'StatusIndex') x GROUP BY 1
UNION ALL
SELECT x ->> 'status', count(*) FROM ddb_query('mi_orders', '#s = :s', '{":s": "REPLACED"}', '{"#s": "status"}',
       index_name => 'StatusIndex') x GROUP BY 1
UNION ALL
SELECT 'OLD', count(*) FROM ddb_query('mi_orders', '#s = :s', '{":s": "OLD"}', '{"#s": "status"}',
       index_name => 'StatusIndex') x;
SELECT v ->> 'live' AS live FROM ddb_verify('mi_orders') v;

-- Under REPEATABLE READ the puts read the current item first, as PutItem
-- does: the same result.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT ddb_batch_write_item('{"mi_orders": [
  {"PutRequest": {"Item": {"PK": "E", "SK": "01", "status": "RR"}}},
  {"PutRequest": {"Item": {"PK": "B", "SK": "01", "status": "RR"}}}]}');
COMMIT;
SELECT x ->> 'PK' AS pk, x ->> 'status' AS status FROM ddb_scan('mi_orders') x
WHERE x ->> 'status' = 'RR' ORDER BY 1;

-- Through ddb_api (typed JSON): the same core.
SELECT ddb_api('BatchWriteItem', '{"RequestItems": {"mi_orders": [
  {"PutRequest": {"Item": {"PK": {"S": "F"}, "SK": {"S": "01"}, "status": {"S": "API"}}}},
  {"PutRequest": {"Item": {"PK": {"S": "F"}, "SK": {"S": "02"}, "status": {"S": "API"}}}}]}}');
SELECT count(*) AS api_items FROM ddb_query('mi_orders', '#s = :s', '{":s": "API"}', '{"#s": "status"}',
                                            index_name => 'StatusIndex');

-- A batch of 25 puts into a leaf that is full: leaves split on the way.
CREATE TABLE mi_split ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT ddb_batch_write_item(jsonb_build_object('mi_split', (
  SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
           jsonb_build_object('PK', 'P', 'SK', lpad((b * 25 + i)::text, 4, '0'), 'pad', repeat('x', 700)))))
  FROM generate_series(1, 25) i)))
FROM generate_series(0, 3) b;
SELECT count(*) AS n, min(x ->> 'SK') AS first, max(x ->> 'SK') AS last FROM ddb_scan('mi_split') x;
SELECT (v ->> 'leaf_pages')::int >= 10 AS split, v ->> 'live' AS live FROM ddb_verify('mi_split') v;

-- One split makes room for a batch's whole run of new keys
-- (ddb_split_point_for_run): a full leaf that a run of 25 new items
-- overflows splits once, where splitting for each item that does not fit
-- split it two or three times.  leaf_pages counts the splits.
CREATE TABLE mi_run ("PK" text, "SK" text, item jsonb) USING ddb;
INSERT INTO mi_run SELECT 'Q' || (i % 4), lpad(i::text, 3, '0'), jsonb_build_object('pad', repeat('y', 250))
FROM generate_series(1, 24) i;
SELECT v ->> 'leaf_pages' AS leaves, v ->> 'live' AS live FROM ddb_verify('mi_run') v;
-- appended to partition Q1's end
SELECT ddb_batch_write_item(jsonb_build_object('mi_run', (
  SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
           jsonb_build_object('PK', 'Q1', 'SK', 'N' || lpad(i::text, 2, '0'), 'pad', repeat('z', 200)))))
  FROM generate_series(1, 25) i)));
SELECT v ->> 'leaf_pages' AS leaves, v ->> 'live' AS live FROM ddb_verify('mi_run') v;
-- at partition Q2's start, then between Q3's items (existing keys inside the run)
SELECT ddb_batch_write_item(jsonb_build_object('mi_run', (
  SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
           jsonb_build_object('PK', 'Q2', 'SK', '!' || lpad(i::text, 2, '0'), 'pad', repeat('z', 200)))))
  FROM generate_series(1, 25) i)));
SELECT v ->> 'leaf_pages' AS leaves, v ->> 'live' AS live FROM ddb_verify('mi_run') v;
SELECT ddb_batch_write_item(jsonb_build_object('mi_run', (
  SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
           jsonb_build_object('PK', 'Q3', 'SK', lpad(i::text, 3, '0') || 'x', 'pad', repeat('z', 200)))))
  FROM generate_series(1, 25) i)));
SELECT v ->> 'leaf_pages' AS leaves, v ->> 'live' AS live FROM ddb_verify('mi_run') v;
SELECT x ->> 'PK' AS pk, count(*) FROM ddb_scan('mi_run') x GROUP BY 1 ORDER BY 1;

SET client_min_messages = warning;
DROP SCHEMA multi CASCADE;
RESET client_min_messages;
