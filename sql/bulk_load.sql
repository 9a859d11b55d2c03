-- Bulk load (ddb_bulk.c): COPY spools its rows and sorts them by key.  Into
-- a table created or truncated in the same subtransaction it builds the
-- tree bottom-up with the builder VACUUM FULL uses; into any other (older
-- files, a second COPY) it inserts them in key order.  This proves that
-- both hold the same items as the row-by-row path, the build in the same
-- tree shape as VACUUM FULL's, and both with leaves at least 90 % full
-- from an interleaved load (the row path leaves them about 70 % full);
-- that duplicates, bad rows and rollbacks leave nothing behind; and which
-- tables keep the row path (triggers, GSIs, ddb.bulk_load = off) and still
-- work.  The DEBUG1 lines "COPY builds the tree ... bottom-up" and "COPY
-- inserts ... in key order" show which path was taken; their absence, that
-- the row path was.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;

-- wait_no_xmin(), before the VACUUMs whose pruning this file checks
\i test/regress/wait_no_xmin.sql
RESET client_min_messages;

-- COPY n generated items (partition i % parts, sort keys ascending, so they
-- arrive interleaved across partitions) into tbl, from a program: plain
-- COPY ... FROM, in the caller's subtransaction (no EXCEPTION block here).
-- 'first' offsets the sort keys; 'dup' repeats the first item at the end.
CREATE FUNCTION bulk_copy(tbl regclass, n int, parts int, first int DEFAULT 0,
                          dup bool DEFAULT false) RETURNS void
LANGUAGE plpgsql AS $f$
BEGIN
  EXECUTE format('COPY %s FROM PROGRAM %L', tbl, format(
    $awk$awk 'BEGIN { for (i = %s; i < %s; i++) printf "CUST#%%d\tORDER#%%06d\t{\"n\": %%d, \"note\": \"%%0120d\"}\n", i %% %s, i, i, i; if (%s) printf "CUST#%%d\tORDER#%%06d\t{}\n", %s %% %s, %s }'$awk$,
    first, first + n, parts, CASE WHEN dup THEN 1 ELSE 0 END, first, parts, first));
END
$f$;

-- Key-order inserts (the table's file is older than the COPY's
-- transaction), the bulk path (CREATE TABLE and COPY in one transaction)
-- and the row path (ddb.bulk_load = off) on the same rows.
CREATE TABLE bl_rows ("PK" text, "SK" text, item jsonb) USING ddb;
CREATE TABLE bl_batches ("PK" text, "SK" text, item jsonb) USING ddb;
SET client_min_messages = debug1;
SELECT bulk_copy('bl_rows', 12000, 150);
SET ddb.bulk_load = off;
SELECT bulk_copy('bl_batches', 12000, 150);
RESET ddb.bulk_load;
RESET client_min_messages;
-- In key order the table grows at its right edge and its leaves come out
-- as full as the build's, under their prefixes (the last leaf, which has
-- none, keeps the run's first keys when it splits: last_leaf_run_split);
-- batch by batch, as the rows arrive, they do not.  (Those counted with
-- whole keys, leaf_fill + leaf_prefix_saved: the splits' packing.)
SELECT v ->> 'items' AS items, (v ->> 'leaf_fill')::float >= 0.90 AS fill_ok,
       (v ->> 'leaf_prefix_bytes')::float > 5 AS prefixed
FROM ddb_verify('bl_rows') v;
SELECT v ->> 'items' AS items, ((v ->> 'leaf_fill')::float + (v ->> 'leaf_prefix_saved')::float) >= 0.90 AS fill_ok
FROM ddb_verify('bl_batches') v;
SELECT count(*) AS differ FROM ((TABLE bl_rows EXCEPT ALL TABLE bl_batches)
                                UNION ALL (TABLE bl_batches EXCEPT ALL TABLE bl_rows)) d;
DROP TABLE bl_batches;
BEGIN;
CREATE TABLE bl ("PK" text, "SK" text, item jsonb) USING ddb;
SET LOCAL client_min_messages = debug1;
SELECT bulk_copy('bl', 12000, 150);
RESET client_min_messages;
COMMIT;
SELECT (SELECT count(*) FROM bl) AS bulk, (SELECT count(*) FROM bl_rows) AS rows,
       (SELECT count(*) FROM (SELECT * FROM bl EXCEPT SELECT * FROM bl_rows) d) AS only_bulk,
       (SELECT count(*) FROM (SELECT * FROM bl_rows EXCEPT SELECT * FROM bl) d) AS only_rows;
-- Leaves at least 90 % full (the default fillfactor, 95, less up to an
-- item: ddb_build.c), no more of them than the key-order inserts took
-- (each leaf takes the prefix its items share, as a split gives it;
-- storage version 2's build, the prefix of its key space, took 343); the
-- same tree VACUUM FULL builds from the rows.
SELECT v ->> 'items' AS items, v ->> 'height' AS height,
       (v ->> 'leaf_fill')::float >= 0.90 AS fill_ok, v ->> 'leaf_pages' AS leaf_pages,
       (v ->> 'leaf_pages')::int <= (SELECT (r ->> 'leaf_pages')::int FROM ddb_verify('bl_rows') r)
         AS as_few_as_rows
FROM ddb_verify('bl') v;
VACUUM FULL bl_rows;
SELECT v ->> 'items' AS items, v ->> 'height' AS height, v ->> 'leaf_pages' AS leaf_pages
FROM ddb_verify('bl_rows') v;

-- Reads, writes and row ids after the build: the key scan, UPDATE and
-- DELETE by TID (the row-id map), new items get row ids above the loaded ones.
SELECT "SK", item ->> 'n' AS n FROM bl WHERE "PK" = 'CUST#7' AND "SK" < 'ORDER#000500';
UPDATE bl SET item = '{"updated": true}' WHERE "PK" = 'CUST#7' AND "SK" = 'ORDER#000157';
DELETE FROM bl WHERE "PK" = 'CUST#8';
INSERT INTO bl VALUES ('CUST#8', 'NEW', '{}');
SELECT count(*), count(DISTINCT ctid) FROM bl;
SELECT ctid > '(41,1)' AS above_loaded FROM bl WHERE "PK" = 'CUST#8';
SELECT ddb_get_item('bl', '{"PK": "CUST#7", "SK": "ORDER#000157"}');
SELECT v ->> 'live' AS live FROM ddb_verify('bl') v;
SELECT wait_no_xmin();
VACUUM bl;
SELECT v ->> 'live' AS live, v ->> 'items' AS items FROM ddb_verify('bl') v;

-- TRUNCATE and COPY in one transaction: bulk.  A second COPY in the same
-- transaction finds the tree built and inserts in key order; its duplicate
-- of a bulk-loaded key is caught there.
BEGIN;
TRUNCATE bl;
SET LOCAL client_min_messages = debug1;
SELECT bulk_copy('bl', 3000, 50);
SELECT bulk_copy('bl', 1000, 50, 3000);
RESET client_min_messages;
SELECT count(*) FROM bl;
SAVEPOINT s;
SELECT bulk_copy('bl', 1, 50, 10);
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT count(*), min("SK"), max("SK") FROM bl;
SELECT v ->> 'items' AS items, v ->> 'live' AS live FROM ddb_verify('bl') v;

-- A key twice in the input: the row path's unique_violation, and nothing
-- changes (the TRUNCATE rolls back with it).
BEGIN;
TRUNCATE bl;
SELECT bulk_copy('bl', 500, 20, 0, true);
ROLLBACK;
SELECT count(*) FROM bl;
BEGIN;
CREATE TABLE bl_dup ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT bulk_copy('bl_dup', 500, 20, 0, true);
COMMIT;
SELECT to_regclass('bl_dup');

-- A bad row (an empty partition key: 22023, as DynamoDB refuses it) fails
-- the COPY, reported where its rows were handed to the table (here one
-- past the last line), not at its own line, and nothing stays.
BEGIN;
TRUNCATE bl;
COPY bl FROM stdin;
CUST#1	A	{}
	B	{}
\.
ROLLBACK;
SELECT count(*) FROM bl;

-- ROLLBACK after a bulk COPY leaves the table as before.
BEGIN;
TRUNCATE bl;
SELECT bulk_copy('bl', 2000, 40);
SELECT count(*) FROM bl;
ROLLBACK;
SELECT count(*) FROM bl;
SELECT v ->> 'items' AS items FROM ddb_verify('bl') v;

-- Key-order inserts into a table that has rows: the new keys among the
-- old ones.  A key that is live already, or twice in the input, is the row
-- path's unique_violation (at the end of the COPY, so without its line)
-- and nothing of that COPY stays.  A COPY rolled back to a savepoint
-- leaves dead versions only, which VACUUM removes.
CREATE TABLE bl_more ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT bulk_copy('bl_more', 600, 30);
SET client_min_messages = debug1;
SELECT bulk_copy('bl_more', 600, 30, 600);
RESET client_min_messages;
SELECT count(*), count(DISTINCT "PK") AS partitions, min("SK"), max("SK") FROM bl_more;
SELECT v ->> 'items' AS items, v ->> 'live' AS live FROM ddb_verify('bl_more') v;
SELECT bulk_copy('bl_more', 10, 30, 1195);
SELECT bulk_copy('bl_more', 10, 30, 1300, true);
SELECT count(*) FROM bl_more;
BEGIN;
SAVEPOINT s;
SELECT bulk_copy('bl_more', 300, 30, 2000);
SELECT count(*) FROM bl_more;
ROLLBACK TO SAVEPOINT s;
SELECT count(*) FROM bl_more;
COMMIT;
SELECT v ->> 'live' AS live FROM ddb_verify('bl_more') v;
SELECT wait_no_xmin();
VACUUM bl_more;
SELECT v ->> 'live' AS live, v ->> 'items' AS items FROM ddb_verify('bl_more') v;
DROP TABLE bl_more;

-- Truncated in a savepoint, loaded there, rolled back to it: the table as
-- it was.  And a table created before the savepoint takes key-order
-- inserts, not the build (an error in the savepoint must not leave its
-- file half built).
BEGIN;
SAVEPOINT a;
TRUNCATE bl;
SELECT bulk_copy('bl', 700, 10);
ROLLBACK TO SAVEPOINT a;
SELECT count(*) FROM bl;
CREATE TABLE bl_sp ("PK" text, "SK" text, item jsonb) USING ddb;
SAVEPOINT b;
SET LOCAL client_min_messages = debug1;
SELECT bulk_copy('bl_sp', 300, 10);
RESET client_min_messages;
ROLLBACK TO SAVEPOINT b;
-- (counted by ddb_verify: a read would prune the dead versions it walks)
SELECT v ->> 'live' AS live FROM ddb_verify('bl_sp') v;
SELECT bulk_copy('bl_sp', 300, 10);
COMMIT;
-- 300 live items; the rolled-back COPY's versions are dead, and those on
-- leaves the second COPY did not have to split stay until VACUUM prunes
-- them (a batch prunes a leaf before it splits it, and splits a full leaf
-- once for its whole run of new keys).
SELECT v ->> 'live' AS live, v ->> 'items' AS items FROM ddb_verify('bl_sp') v;
SELECT wait_no_xmin();
VACUUM bl_sp;
SELECT v ->> 'live' AS live, v ->> 'items' AS items FROM ddb_verify('bl_sp') v;

-- COPY of no rows builds nothing; the table works as a new one.
BEGIN;
CREATE TABLE bl_empty ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT bulk_copy('bl_empty', 0, 10);
COMMIT;
SELECT pg_relation_size('bl_empty') AS bytes;
INSERT INTO bl_empty VALUES ('a', 'b', '{}');
SELECT v ->> 'items' AS items FROM ddb_verify('bl_empty') v;

-- ddb.bulk_load = off: the row path.
BEGIN;
CREATE TABLE bl_off ("PK" text, "SK" text, item jsonb) USING ddb;
SET LOCAL ddb.bulk_load = off;
SET LOCAL client_min_messages = debug1;
SELECT bulk_copy('bl_off', 300, 10);
RESET client_min_messages;
COMMIT;
SELECT v ->> 'items' AS items FROM ddb_verify('bl_off') v;

-- Large items are toasted on the way into the spool; a simple key, a number
-- key; temporary and unlogged tables.
BEGIN;
CREATE TABLE bl_big ("PK" numeric, item jsonb) USING ddb;
COPY bl_big FROM PROGRAM 'awk ''BEGIN { for (i = 0; i < 40; i++) { s = ""; for (j = 0; j < 2000; j++) s = s sprintf("%08d", i * j); printf "%d\t{\"s\": \"%s\"}\n", 40 - i, s } }''';
COMMIT;
SELECT count(*), sum(length(item ->> 's')), min("PK"), max("PK") FROM bl_big;
SELECT v ->> 'items' AS items FROM ddb_verify('bl_big') v;
BEGIN;
CREATE TEMP TABLE bl_temp ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT bulk_copy('bl_temp', 2000, 20);
CREATE UNLOGGED TABLE bl_unlogged ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT bulk_copy('bl_unlogged', 2000, 20);
COMMIT;
SELECT (SELECT count(*) FROM bl_temp) AS temp, (SELECT count(*) FROM bl_unlogged) AS unlogged;
SELECT v ->> 'items' AS items FROM ddb_verify('bl_temp') v;
SELECT v ->> 'items' AS items FROM ddb_verify('bl_unlogged') v;
DROP TABLE bl_temp;

-- Insert triggers keep the row path: AFTER ROW triggers read each row by
-- TID and AFTER STATEMENT triggers read the table, both before COPY ends.
CREATE TABLE bl_log (what text, n bigint);
CREATE FUNCTION bl_row_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."SK" = 'ORDER#000042' THEN
    INSERT INTO bl_log SELECT 'row sees itself', count(*) FROM bl_trig WHERE "PK" = NEW."PK" AND "SK" = NEW."SK";
  END IF;
  RETURN NULL;
END $$;
CREATE FUNCTION bl_stmt_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bl_log SELECT 'statement sees', count(*) FROM bl_trig;
  RETURN NULL;
END $$;
BEGIN;
CREATE TABLE bl_trig ("PK" text, "SK" text, item jsonb) USING ddb;
CREATE TRIGGER r AFTER INSERT ON bl_trig FOR EACH ROW EXECUTE FUNCTION bl_row_trigger();
CREATE TRIGGER s AFTER INSERT ON bl_trig FOR EACH STATEMENT EXECUTE FUNCTION bl_stmt_trigger();
SET LOCAL client_min_messages = debug1;
SELECT bulk_copy('bl_trig', 500, 10);
RESET client_min_messages;
COMMIT;
SELECT * FROM bl_log ORDER BY what;

-- A partition whose partition tree has AFTER insert triggers on another
-- table keeps the row path too: COPY into the parent fires the parent's
-- AFTER STATEMENT triggers and the other partitions' AFTER ROW triggers
-- before it finishes its partitions, and here they count all the rows.
-- Each trigger sees the three rows of its COPY; with no trigger left, a
-- partition spools again.
CREATE TABLE bl_parts ("PK" text COLLATE "C", "SK" text COLLATE "C", item jsonb)
  PARTITION BY LIST ("PK");
CREATE TABLE bl_part_a PARTITION OF bl_parts FOR VALUES IN ('a') USING ddb;
CREATE TABLE bl_part_b PARTITION OF bl_parts FOR VALUES IN ('b') USING ddb;
CREATE TABLE bl_part_log (what text, n bigint);
CREATE FUNCTION bl_parts_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO bl_part_log SELECT TG_TABLE_NAME || ' ' || TG_LEVEL, count(*) FROM bl_parts;
  RETURN NULL;
END $$;
CREATE TRIGGER s AFTER INSERT ON bl_parts FOR EACH STATEMENT EXECUTE FUNCTION bl_parts_count();
SET client_min_messages = debug1;
COPY bl_parts FROM stdin;
a	1	{}
a	2	{}
b	1	{}
\.
RESET client_min_messages;
DROP TRIGGER s ON bl_parts;
TRUNCATE bl_parts;
CREATE TRIGGER r AFTER INSERT ON bl_part_b FOR EACH ROW EXECUTE FUNCTION bl_parts_count();
SET client_min_messages = debug1;
COPY bl_parts FROM stdin;
a	1	{}
a	2	{}
b	1	{}
\.
RESET client_min_messages;
DROP TRIGGER r ON bl_part_b;
SET client_min_messages = debug1;
COPY bl_parts FROM stdin;
a	3	{}
b	2	{}
\.
RESET client_min_messages;
SELECT * FROM bl_part_log ORDER BY what;
SELECT "PK", "SK" FROM bl_parts ORDER BY 1, 2;
DROP TABLE bl_parts, bl_part_log;
DROP FUNCTION bl_parts_count();

-- A table with a GSI (maintained by an AFTER ROW trigger): the row path,
-- and the index follows.
CREATE TABLE bl_gsi ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT ddb_create_gsi('bl_gsi', 'ByN', 'n', 'N');
BEGIN;
TRUNCATE bl_gsi;
SET LOCAL client_min_messages = debug1;
SELECT bulk_copy('bl_gsi', 400, 10);
RESET client_min_messages;
COMMIT;
SELECT ddb_query('bl_gsi', 'n = :n', '{":n": 123}', index_name => 'ByN') ->> 'SK' AS sk;
SELECT count(*) FROM bl_gsi;
-- Its last index dropped, the maintenance trigger stays, disabled: the
-- bulk path again.
SELECT ddb_drop_gsi('bl_gsi', 'ByN');
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'bl_gsi'::regclass ORDER BY 1;
BEGIN;
TRUNCATE bl_gsi;
SET LOCAL client_min_messages = debug1;
SELECT bulk_copy('bl_gsi', 400, 10);
RESET client_min_messages;
COMMIT;
SELECT count(*) FROM bl_gsi;

-- Rows inserted another way while COPY spools (here by a CHECK
-- constraint's function, which PostgreSQL leaves to the user): the tree
-- exists by the end, and the spooled rows are inserted in key order after
-- it (the side insert comes after COPY's first batch was spooled).
CREATE FUNCTION bl_side_insert(pk text, sk text) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  IF pk <> 'SIDE' AND sk = 'ORDER#001500' THEN
    INSERT INTO bl_side VALUES ('SIDE', sk, '{}');
  END IF;
  RETURN true;
END $$;
BEGIN;
CREATE TABLE bl_side ("PK" text, "SK" text, item jsonb, CHECK (bl_side_insert("PK", "SK"))) USING ddb;
SET LOCAL client_min_messages = debug1;
SELECT bulk_copy('bl_side', 2000, 10);
RESET client_min_messages;
COMMIT;
SELECT count(*), count(*) FILTER (WHERE "PK" = 'SIDE') AS side FROM bl_side;
SELECT v ->> 'items' AS items FROM ddb_verify('bl_side') v;

-- The function may COPY into the table itself, after the outer COPY
-- handed over its first 1,000 rows: the inner COPY takes the row path, and
-- its end inserts the outer COPY's rows so far.  An inner COPY rolled back
-- by an exception block takes only its own row with it; the outer rows
-- stay reachable by TID (UPDATE) -- into a table with rows (key-order
-- inserts) and into one new in the transaction (the spool of a build).
CREATE FUNCTION bl_nested_copy(tbl text, pk text, sk text) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  IF pk <> 'NESTED' AND sk = 'ORDER#001500' THEN
    BEGIN
      EXECUTE format('COPY %I FROM PROGRAM %L', tbl, 'printf "NESTED\tA\t{}\n"');
      RAISE EXCEPTION 'undo the inner COPY';
    EXCEPTION WHEN raise_exception THEN
      NULL;
    END;
    EXECUTE format('COPY %I FROM PROGRAM %L', tbl, 'printf "NESTED\tB\t{}\n"');
  END IF;
  RETURN true;
END $$;
CREATE TABLE bl_nest ("PK" text, "SK" text, item jsonb,
                      CHECK (bl_nested_copy('bl_nest', "PK", "SK"))) USING ddb;
INSERT INTO bl_nest VALUES ('OLD', 'x', '{}');
BEGIN;
CREATE TABLE bl_nest_new ("PK" text, "SK" text, item jsonb,
                          CHECK (bl_nested_copy('bl_nest_new', "PK", "SK"))) USING ddb;
SELECT bulk_copy('bl_nest', 2000, 10);
SELECT bulk_copy('bl_nest_new', 2000, 10);
COMMIT;
UPDATE bl_nest SET item = '{"u": 1}' WHERE "SK" <> 'ORDER#001500';
UPDATE bl_nest_new SET item = '{"u": 1}' WHERE "SK" <> 'ORDER#001500';
SELECT count(*), count(*) FILTER (WHERE item ? 'u') AS updated,
       string_agg("SK", ',') FILTER (WHERE "PK" = 'NESTED') AS nested FROM bl_nest;
SELECT count(*), count(*) FILTER (WHERE item ? 'u') AS updated,
       string_agg("SK", ',') FILTER (WHERE "PK" = 'NESTED') AS nested FROM bl_nest_new;
SELECT wait_no_xmin();
VACUUM bl_nest;
VACUUM bl_nest_new;
SELECT v ->> 'live' AS live, v ->> 'items' AS items, v ->> 'orphan_map_entries' AS orphans
FROM ddb_verify('bl_nest') v;
SELECT v ->> 'live' AS live, v ->> 'items' AS items, v ->> 'orphan_map_entries' AS orphans
FROM ddb_verify('bl_nest_new') v;
DROP TABLE bl_nest, bl_nest_new;
DROP FUNCTION bl_nested_copy(text, text, text);

DROP TABLE bl, bl_rows, bl_sp, bl_empty, bl_off, bl_big, bl_unlogged, bl_trig, bl_log, bl_gsi, bl_side;
DROP FUNCTION bulk_copy(regclass, int, int, int, bool), bl_row_trigger(), bl_stmt_trigger(), bl_side_insert(text, text);
DROP FUNCTION wait_no_xmin();
