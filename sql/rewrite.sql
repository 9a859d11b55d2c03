-- Table rewrites keep every row updatable and deletable (issue 12, item 2).
-- A rewrite fills a new file -- often through a transient relation that is
-- swapped in and dropped before commit -- and the row-id map entries of the
-- rows it writes are deferred to commit.  They must reach the file that
-- becomes the table's, whatever the rewrite path: each case below rewrites
-- a table, then updates and deletes every row (both resolve every row's
-- TID through the map) and runs ddb_verify, which checks that every
-- committed version is found through the map.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

-- Rewrite, then prove every row resolves: verify, update all, verify,
-- delete all, verify, each step its own transaction (ddb_verify counts
-- committed versions).  Reports the row counts seen at each step.
CREATE PROCEDURE rw_check(t regclass) LANGUAGE plpgsql AS $$
DECLARE
	n0 bigint; live0 text; nu bigint; live1 text; nd bigint; live2 text;
BEGIN
	EXECUTE format('SELECT count(*) FROM %s', t) INTO n0;
	live0 := ddb_verify(t) ->> 'live';
	EXECUTE format('UPDATE %s SET item = item || ''{"u": 1}''', t);
	GET DIAGNOSTICS nu = ROW_COUNT;
	COMMIT;
	live1 := ddb_verify(t) ->> 'live';
	EXECUTE format('DELETE FROM %s WHERE (item ->> ''u'')::int = 1', t);
	GET DIAGNOSTICS nd = ROW_COUNT;
	COMMIT;
	live2 := ddb_verify(t) ->> 'live';
	RAISE NOTICE '%: rows %, verified %; updated %, verified %; deleted %, verified %',
		t, n0, live0, nu, live1, nd, live2;
END $$;

-- n rows over 13 partitions, sort keys S<from> .. S<from + n - 1>
CREATE FUNCTION rw_load(t regclass, n int, "from" int DEFAULT 1) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('INSERT INTO %s SELECT ''P'' || (i %% 13), ''S'' || i, jsonb_build_object(''i'', i)
					FROM generate_series(%s, %s) i', t, "from", "from" + n - 1);
END $$;

-- ALTER TABLE rewrites: SET UNLOGGED, SET LOGGED, a column type change.
CREATE TABLE rw_unlogged ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT rw_load('rw_unlogged', 500);
ALTER TABLE rw_unlogged SET UNLOGGED;
SELECT relpersistence FROM pg_class WHERE oid = 'rw_unlogged'::regclass;
CALL rw_check('rw_unlogged');

CREATE UNLOGGED TABLE rw_logged ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT rw_load('rw_logged', 500);
ALTER TABLE rw_logged SET LOGGED;
CALL rw_check('rw_logged');

CREATE TABLE rw_type ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT rw_load('rw_type', 500);
ALTER TABLE rw_type ALTER COLUMN item TYPE jsonb USING item || '{"t": true}';
SELECT count(*) FROM rw_type WHERE item ? 't';
CALL rw_check('rw_type');

-- The same rewrite with rows inserted, updated and deleted earlier in the
-- rewriting transaction (their deferred entries belong to the old file).
CREATE TABLE rw_samexact ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT rw_load('rw_samexact', 200);
BEGIN;
SELECT rw_load('rw_samexact', 400, 1001);
UPDATE rw_samexact SET item = item || '{"w": 1}' WHERE "PK" = 'P1';
DELETE FROM rw_samexact WHERE "PK" = 'P2';
ALTER TABLE rw_samexact SET UNLOGGED;
SELECT rw_load('rw_samexact', 100, 2001);
COMMIT;
CALL rw_check('rw_samexact');

-- SET ACCESS METHOD, from heap to ddb and from ddb to heap.
CREATE TABLE rw_from_heap ("PK" text NOT NULL, "SK" text NOT NULL, item jsonb);
INSERT INTO rw_from_heap SELECT 'P' || (i % 13), 'S' || i, jsonb_build_object('i', i)
  FROM generate_series(1, 500) i;
ALTER TABLE rw_from_heap SET ACCESS METHOD ddb;
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 'rw_from_heap'::regclass;
CALL rw_check('rw_from_heap');

CREATE TABLE rw_to_heap ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT rw_load('rw_to_heap', 500);
UPDATE rw_to_heap SET item = item || '{"before": 1}' WHERE "PK" = 'P3';
ALTER TABLE rw_to_heap SET ACCESS METHOD heap;
SELECT count(*), count(*) FILTER (WHERE item ? 'before') FROM rw_to_heap;
UPDATE rw_to_heap SET item = item || '{"u": 1}';
DELETE FROM rw_to_heap;
-- and back again, in one transaction with inserts before and after
BEGIN;
INSERT INTO rw_to_heap SELECT 'P' || (i % 13), 'S' || i, '{}' FROM generate_series(1, 300) i;
ALTER TABLE rw_to_heap SET ACCESS METHOD ddb;
INSERT INTO rw_to_heap SELECT 'P' || (i % 13), 'S' || i, '{}' FROM generate_series(301, 600) i;
COMMIT;
CALL rw_check('rw_to_heap');

-- SET TABLESPACE copies the file block by block: rows committed before,
-- and rows inserted in the same transaction (their entries still deferred).
SET allow_in_place_tablespaces = on;
CREATE TABLESPACE rw_space LOCATION '';
RESET allow_in_place_tablespaces;
CREATE TABLE rw_space_t ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT rw_load('rw_space_t', 500);
ALTER TABLE rw_space_t SET TABLESPACE rw_space;
CALL rw_check('rw_space_t');
BEGIN;
SELECT rw_load('rw_space_t', 500, 1001);
ALTER TABLE rw_space_t SET TABLESPACE pg_default;
COMMIT;
CALL rw_check('rw_space_t');
-- created, loaded and moved in one transaction
BEGIN;
CREATE TABLE rw_space_new ("PK" text, "SK" text, item jsonb) USING ddb TABLESPACE rw_space;
SELECT rw_load('rw_space_new', 500);
ALTER TABLE rw_space_new SET TABLESPACE pg_default;
SELECT rw_load('rw_space_new', 100, 1001);
COMMIT;
CALL rw_check('rw_space_new');

-- VACUUM FULL (CLUSTER's path: a new tree and a new map built in bulk),
-- also with a dead version and rows the same transaction cannot see yet.
CREATE TABLE rw_full ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT rw_load('rw_full', 500);
UPDATE rw_full SET item = item || '{"x": 1}' WHERE "PK" = 'P4';
DELETE FROM rw_full WHERE "PK" = 'P5';
VACUUM FULL rw_full;
CALL rw_check('rw_full');

-- TRUNCATE in the creating transaction truncates the file in place; rows
-- inserted before it are gone, rows inserted after it resolve.
BEGIN;
CREATE TABLE rw_trunc ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT rw_load('rw_trunc', 500);
TRUNCATE rw_trunc;
SELECT rw_load('rw_trunc', 300);
COMMIT;
CALL rw_check('rw_trunc');

-- A TRUNCATE rolled back to a savepoint brings the old file back, with the
-- deferred entries of the rows inserted before it, even when entries were
-- written in between (the UPDATE resolves TIDs of the new file).
CREATE TABLE rw_savepoint ("PK" text, "SK" text, item jsonb) USING ddb;
BEGIN;
SELECT rw_load('rw_savepoint', 500);
SAVEPOINT s;
TRUNCATE rw_savepoint;
INSERT INTO rw_savepoint VALUES ('X', 'Y', '{}');
UPDATE rw_savepoint SET item = '{"z": 1}';
ROLLBACK TO s;
COMMIT;
CALL rw_check('rw_savepoint');

-- REFRESH MATERIALIZED VIEW fills a transient relation and swaps its file
-- in, as ALTER TABLE does.  A materialized view cannot be updated, but
-- ddb_verify resolves every row through the map.  (CLUSTER needs an index,
-- which ddb tables refuse; VACUUM FULL above is its path.)
CREATE TABLE rw_src ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT rw_load('rw_src', 500);
CREATE MATERIALIZED VIEW rw_mv USING ddb AS SELECT * FROM rw_src WHERE "PK" <> 'P0';
SELECT ddb_verify('rw_mv') ->> 'live' AS live;
UPDATE rw_src SET item = item || '{"m": 1}';
REFRESH MATERIALIZED VIEW rw_mv;
SELECT count(*) FILTER (WHERE item ? 'm'), ddb_verify('rw_mv') ->> 'live' AS live FROM rw_mv;
-- No parallel plan for it either (its scans refuse one, as a table's do).
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT count(*) FROM rw_mv;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
DROP MATERIALIZED VIEW rw_mv;
DROP TABLE rw_src;

DROP TABLE rw_unlogged, rw_logged, rw_type, rw_samexact, rw_from_heap, rw_to_heap,
	rw_space_t, rw_space_new, rw_full, rw_trunc, rw_savepoint;
DROP TABLESPACE rw_space;
DROP PROCEDURE rw_check(regclass);
DROP FUNCTION rw_load(regclass, int, int);
