-- UPDATE, DELETE, row locks, triggers, VACUUM, TOAST: ordinary SQL on a
-- ddb table behaves as on heap.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;

-- wait_no_xmin(), before the VACUUMs whose pruning this file checks
\i test/regress/wait_no_xmin.sql
RESET client_min_messages;

CREATE TABLE orders ("PK" text, "SK" text, item jsonb) USING ddb;
INSERT INTO orders SELECT 'CUST#' || (i % 10), 'ORDER#' || lpad(i::text, 4, '0'),
  jsonb_build_object('total', i, 'status', 'PENDING') FROM generate_series(1, 100) i;

-- UPDATE writes a new version; RETURNING sees it; ctid changes.
SELECT ctid AS old_ctid FROM orders WHERE "PK" = 'CUST#1' AND "SK" = 'ORDER#0001' \gset
UPDATE orders SET item = item || '{"status": "SHIPPED"}'
 WHERE "PK" = 'CUST#1' AND "SK" = 'ORDER#0001' RETURNING "PK", "SK", item;
SELECT ctid <> :'old_ctid'::tid AS new_version FROM orders WHERE "PK" = 'CUST#1' AND "SK" = 'ORDER#0001';

-- Keys are immutable: changing one is refused and changes nothing.
UPDATE orders SET "SK" = 'ORDER#9999' WHERE "PK" = 'CUST#1' AND "SK" = 'ORDER#0011';
SELECT count(*) FROM orders WHERE "SK" = 'ORDER#9999';

-- DELETE ... RETURNING
DELETE FROM orders WHERE "PK" = 'CUST#2' RETURNING "SK";
SELECT count(*) FROM orders;

-- Rollback leaves nothing behind; savepoints undo only their part.
BEGIN;
UPDATE orders SET item = '{}' WHERE "PK" = 'CUST#3';
DELETE FROM orders WHERE "PK" = 'CUST#4';
INSERT INTO orders VALUES ('CUST#X', 'A', '{}');
ROLLBACK;
SELECT count(*), count(*) FILTER (WHERE item = '{}') FROM orders;
BEGIN;
UPDATE orders SET item = item || '{"a": 1}' WHERE "PK" = 'CUST#5' AND "SK" = 'ORDER#0005';
SAVEPOINT s1;
UPDATE orders SET item = item || '{"b": 2}' WHERE "PK" = 'CUST#5' AND "SK" = 'ORDER#0005';
DELETE FROM orders WHERE "PK" = 'CUST#5' AND "SK" = 'ORDER#0015';
ROLLBACK TO s1;
UPDATE orders SET item = item || '{"c": 3}' WHERE "PK" = 'CUST#5' AND "SK" = 'ORDER#0005';
COMMIT;
SELECT item FROM orders WHERE "PK" = 'CUST#5' AND "SK" IN ('ORDER#0005', 'ORDER#0015') ORDER BY "SK";

-- The same row updated many times in one transaction (combo command ids).
BEGIN;
UPDATE orders SET item = jsonb_build_object('n', 1) WHERE "PK" = 'CUST#6' AND "SK" = 'ORDER#0006';
UPDATE orders SET item = jsonb_build_object('n', (item->>'n')::int + 1) WHERE "PK" = 'CUST#6' AND "SK" = 'ORDER#0006';
UPDATE orders SET item = jsonb_build_object('n', (item->>'n')::int + 1) WHERE "PK" = 'CUST#6' AND "SK" = 'ORDER#0006';
SELECT item FROM orders WHERE "PK" = 'CUST#6' AND "SK" = 'ORDER#0006';
COMMIT;

-- Delete then re-insert the same key in one transaction.
BEGIN;
DELETE FROM orders WHERE "PK" = 'CUST#7' AND "SK" = 'ORDER#0007';
INSERT INTO orders VALUES ('CUST#7', 'ORDER#0007', '{"again": true}');
COMMIT;
SELECT item FROM orders WHERE "PK" = 'CUST#7' AND "SK" = 'ORDER#0007';

-- A TRUNCATE rolled back to a savepoint brings the old file back, and rows
-- inserted before it stay reachable by TID (UPDATE finds them).
CREATE TABLE sv (k text, item jsonb) USING ddb;
BEGIN;
INSERT INTO sv VALUES ('a', '{}');
SAVEPOINT s;
TRUNCATE sv;
ROLLBACK TO s;
COMMIT;
UPDATE sv SET item = '{"x": 1}';
SELECT * FROM sv;
DROP TABLE sv;

-- Triggers see OLD and NEW (AFTER triggers re-fetch versions by TID).
CREATE TABLE audit (op text, sk text, old jsonb, new jsonb);
CREATE FUNCTION audit_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit VALUES (TG_OP, coalesce(NEW."SK", OLD."SK"),
    CASE WHEN TG_OP <> 'INSERT' THEN OLD.item END,
    CASE WHEN TG_OP <> 'DELETE' THEN NEW.item END);
  RETURN coalesce(NEW, OLD);
END $$;
CREATE TRIGGER orders_audit AFTER INSERT OR UPDATE OR DELETE ON orders
  FOR EACH ROW EXECUTE FUNCTION audit_fn();
-- (a BEFORE UPDATE trigger logs the update a second time)
CREATE TRIGGER orders_stamp BEFORE UPDATE ON orders
  FOR EACH ROW EXECUTE FUNCTION audit_fn();
INSERT INTO orders VALUES ('CUST#8', 'ORDER#0999', '{"t": 1}');
UPDATE orders SET item = '{"t": 2}' WHERE "PK" = 'CUST#8' AND "SK" = 'ORDER#0999';
DELETE FROM orders WHERE "PK" = 'CUST#8' AND "SK" = 'ORDER#0999';
SELECT * FROM audit ORDER BY op, new NULLS LAST;
DROP TRIGGER orders_audit ON orders;
DROP TRIGGER orders_stamp ON orders;

-- SELECT ... FOR UPDATE, and a cursor's WHERE CURRENT OF.
BEGIN;
SELECT "SK" FROM orders WHERE "PK" = 'CUST#9' AND "SK" = 'ORDER#0009' FOR UPDATE;
DECLARE c CURSOR FOR SELECT "SK" FROM orders WHERE "PK" = 'CUST#9' FOR UPDATE;
FETCH 1 FROM c;
UPDATE orders SET item = '{"via": "cursor"}' WHERE CURRENT OF c;
FETCH 1 FROM c;
DELETE FROM orders WHERE CURRENT OF c;
COMMIT;
SELECT count(*) FILTER (WHERE item = '{"via": "cursor"}') AS updated, count(*) AS left_over
FROM orders WHERE "PK" = 'CUST#9';

-- TID scans read the row id.
SELECT "SK" FROM orders WHERE ctid = (SELECT ctid FROM orders WHERE "PK" = 'CUST#1' AND "SK" = 'ORDER#0021');

-- A row id never handed out (at or past the metapage's counter) is not a
-- valid TID, as a block past the end is not on heap: currtid2 says so with
-- heap's error (an empty table has none), TID scans skip it.  Row ids
-- handed out resolve, an old version's to the newest.
CREATE TABLE tids (pk text, item jsonb) USING ddb;
CREATE TABLE tids_heap (pk text, item jsonb);
SELECT currtid2('tids', '(0,1)');
SELECT currtid2('tids_heap', '(0,1)');
INSERT INTO tids SELECT 'k' || i, '{}' FROM generate_series(1, 3) i;
INSERT INTO tids_heap SELECT 'k' || i, '{}' FROM generate_series(1, 3) i;
SELECT currtid2('tids', '(1000000,1)');
SELECT currtid2('tids_heap', '(1000000,1)');
SELECT ctid AS k1_tid FROM tids WHERE pk = 'k1' \gset
UPDATE tids SET item = '{"v": 2}' WHERE pk = 'k1';
SELECT currtid2('tids', :'k1_tid') = (SELECT ctid FROM tids WHERE pk = 'k1') AS newest;
SELECT pk FROM tids WHERE ctid = '(1000000,1)';
EXPLAIN (COSTS OFF) SELECT pk FROM tids WHERE ctid IN ('(1000000,1)', '(0,1)');
SELECT pk FROM tids
 WHERE ctid IN ('(1000000,1)', (SELECT ctid FROM tids WHERE pk = 'k2'), '(4294967295,1)')
 ORDER BY pk;
SELECT pk FROM tids
 WHERE ctid = ANY (ARRAY['(1000000,1)', '(0,0)', (SELECT ctid FROM tids WHERE pk = 'k1')]::tid[])
 ORDER BY pk;
DROP TABLE tids, tids_heap;

-- Foreign keys from a ddb table to a heap table work (a foreign key to a
-- ddb table would need a unique index, and ddb tables have no indexes).
CREATE TABLE customers (id text PRIMARY KEY);
INSERT INTO customers VALUES ('CUST#1');
CREATE TABLE cust_orders (pk text REFERENCES customers, sk text, item jsonb) USING ddb;
INSERT INTO cust_orders VALUES ('CUST#1', 'a', '{}');
INSERT INTO cust_orders VALUES ('CUST#404', 'a', '{}');
DELETE FROM customers;
DROP TABLE cust_orders, customers;

-- INSERT ... ON CONFLICT has no arbiter index on a ddb table: refused at
-- parse analysis, pointing to ddb_put_item.
INSERT INTO orders VALUES ('CUST#1', 'ORDER#0001', '{}') ON CONFLICT DO NOTHING;
INSERT INTO orders VALUES ('CUST#1', 'ORDER#0001', '{}') ON CONFLICT ("PK", "SK") DO NOTHING;
-- The same through a data-modifying WITH, a view, a partitioned table with
-- a ddb partition (at any level) and a view of it: refused at planning,
-- once the rewriter has found the table.  (A partitioned table has no
-- arbiter either, so a duplicate would otherwise be unique_violation.)
WITH ins AS (INSERT INTO orders VALUES ('CUST#1', 'ORDER#0001', '{}') ON CONFLICT DO NOTHING RETURNING 1)
SELECT count(*) FROM ins;
CREATE VIEW orders_v AS SELECT * FROM orders;
INSERT INTO orders_v VALUES ('CUST#1', 'ORDER#0001', '{}') ON CONFLICT DO NOTHING;
CREATE TABLE oc_parts ("PK" text COLLATE "C", "SK" text COLLATE "C", item jsonb) PARTITION BY LIST ("PK");
CREATE TABLE oc_heap PARTITION OF oc_parts FOR VALUES IN ('h');
CREATE TABLE oc_sub PARTITION OF oc_parts FOR VALUES IN ('a', 'b') PARTITION BY LIST ("PK");
CREATE TABLE oc_a PARTITION OF oc_sub FOR VALUES IN ('a') USING ddb;
INSERT INTO oc_parts VALUES ('a', '1', '{}');
INSERT INTO oc_parts VALUES ('a', '1', '{}') ON CONFLICT DO NOTHING;
INSERT INTO oc_parts VALUES ('h', '1', '{}') ON CONFLICT DO NOTHING;
INSERT INTO oc_sub VALUES ('a', '1', '{}') ON CONFLICT DO NOTHING;
CREATE VIEW oc_parts_v AS SELECT * FROM oc_parts;
INSERT INTO oc_parts_v VALUES ('a', '1', '{}') ON CONFLICT DO NOTHING;
-- A plan made before a ddb partition was attached is made again.
ALTER TABLE oc_parts DETACH PARTITION oc_sub;
PREPARE oc_ins AS INSERT INTO oc_parts VALUES ('h', '2', '{}') ON CONFLICT DO NOTHING;
EXECUTE oc_ins;
ALTER TABLE oc_parts ATTACH PARTITION oc_sub FOR VALUES IN ('a', 'b');
EXECUTE oc_ins;
SELECT tableoid::regclass, * FROM oc_parts ORDER BY 2, 3;
DEALLOCATE oc_ins;
-- A ddb partition attached below a sub-partitioned partition invalidates
-- only that partition, which the plan does not name: the plan kept is
-- checked when it starts.
ALTER TABLE oc_sub DETACH PARTITION oc_a;
CREATE TABLE oc_b PARTITION OF oc_sub FOR VALUES IN ('b');
SET plan_cache_mode = force_generic_plan;
PREPARE oc_ins(text) AS INSERT INTO oc_parts VALUES ($1, '1', '{}') ON CONFLICT DO NOTHING;
EXECUTE oc_ins('b');
ALTER TABLE oc_sub ATTACH PARTITION oc_a FOR VALUES IN ('a');
EXECUTE oc_ins('a');
EXECUTE oc_ins('b');
CREATE FUNCTION oc_fn(k text) RETURNS void LANGUAGE plpgsql
  AS $$ BEGIN INSERT INTO oc_parts VALUES (k, '1', '{}') ON CONFLICT DO NOTHING; END $$;
ALTER TABLE oc_sub DETACH PARTITION oc_a;
SELECT oc_fn('b');
ALTER TABLE oc_sub ATTACH PARTITION oc_a FOR VALUES IN ('a');
SELECT oc_fn('a');
SELECT tableoid::regclass, * FROM oc_parts ORDER BY 2, 3;
RESET plan_cache_mode;
DEALLOCATE oc_ins;
DROP FUNCTION oc_fn;
DROP VIEW orders_v, oc_parts_v;
DROP TABLE oc_parts;

-- RETURNING reads the system columns of the version written, as on heap:
-- the inserting transaction, no xmax, the command, the new row id -- also
-- when INSERT ... SELECT hands on the row of the scan that read it.
CREATE TABLE sysret (pk text, sk text, item jsonb) USING ddb;
CREATE TABLE sysret_src (pk text, sk text, item jsonb) USING ddb;
INSERT INTO sysret_src VALUES ('src', '1', '{}');
BEGIN;
SELECT txid_current() AS sysret_x \gset
INSERT INTO sysret VALUES ('a', '1', '{}')
  RETURNING ctid, xmin = :sysret_x::text::xid AS mine, xmax, cmin;
UPDATE sysret SET item = '{"u": 1}' WHERE pk = 'a' AND sk = '1'
  RETURNING ctid, xmin = :sysret_x::text::xid AS mine, xmax, cmin;
INSERT INTO sysret SELECT * FROM sysret_src
  RETURNING ctid, xmin = :sysret_x::text::xid AS mine, xmax, cmin;
SELECT pk, ctid, xmin = :sysret_x::text::xid AS mine, xmax, cmin FROM sysret ORDER BY pk;
SELECT xmin = :sysret_x::text::xid AS mine FROM sysret_src;
COMMIT;
DROP TABLE sysret, sysret_src;

-- A 350 kB item round-trips byte for byte (TOAST).
CREATE TABLE blobs (k text, item jsonb) USING ddb;
INSERT INTO blobs SELECT 'b', jsonb_build_object('data', string_agg(md5(i::text), '')) FROM generate_series(1, 11000) i;
SELECT length(item->>'data') AS chars, md5(item->>'data') = md5((SELECT string_agg(md5(i::text), '') FROM generate_series(1, 11000) i)) AS identical
FROM blobs;
SELECT pg_relation_size(reltoastrelid) > 100000 AS toasted FROM pg_class WHERE relname = 'blobs';
UPDATE blobs SET item = item || '{"v": 2}';
SELECT length(item->>'data'), item->>'v' FROM blobs;
DELETE FROM blobs;
DROP TABLE blobs;

-- VACUUM removes dead versions; the tree stays valid.
DELETE FROM orders WHERE "PK" IN ('CUST#3', 'CUST#4');
SELECT (v->>'items')::int > (v->>'live')::int AS has_dead FROM ddb_verify('orders') v;
SELECT wait_no_xmin();
VACUUM orders;
SELECT (v->>'items')::int = (v->>'live')::int AS no_dead, (v->>'live')::int FROM ddb_verify('orders') v;

-- Steady put/delete churn: once VACUUM (or pruning before a split) has
-- freed the space of deleted versions, the table stops growing.  (Each
-- round's inserts prune the round before: no snapshot may hold that back,
-- hence the wait, and no autovacuum ANALYZE of the table between the
-- wait and the round.)
CREATE TABLE churn (k text, item jsonb) USING ddb WITH (autovacuum_enabled = false);
CREATE PROCEDURE churn_rounds(n int) LANGUAGE plpgsql AS $$
BEGIN
  FOR r IN 1..n LOOP
    PERFORM wait_no_xmin();
    COMMIT;
    DELETE FROM churn;
    INSERT INTO churn SELECT 'k' || i, jsonb_build_object('pad', repeat('x', 200)) FROM generate_series(1, 5000) i;
    COMMIT;
  END LOOP;
END $$;
CALL churn_rounds(2);
SELECT wait_no_xmin();
VACUUM churn;
SELECT pg_relation_size('churn') AS size1 \gset
CALL churn_rounds(10);
SELECT wait_no_xmin();
VACUUM churn;
SELECT pg_relation_size('churn') <= 1.2 * :size1 AS bounded, (ddb_verify('churn')->>'live')::int AS live;
DROP PROCEDURE churn_rounds(int);

-- A row lock taken before a savepoint survives an update or delete rolled
-- back to it: the version's xmax is a multixact of the lock and the update,
-- as on heap (isolation/row-locks.spec shows another session still waiting).
CREATE TABLE locked (k text, item jsonb) USING ddb;
INSERT INTO locked VALUES ('a', '{"n": 1}'), ('b', '{"n": 2}'), ('c', '{"n": 3}');
BEGIN;
SELECT k FROM locked WHERE k IN ('a', 'b') ORDER BY k FOR UPDATE;
SAVEPOINT s;
UPDATE locked SET item = '{"n": 10}' WHERE k = 'a';
DELETE FROM locked WHERE k = 'b';
ROLLBACK TO s;
SELECT k, m.mode FROM locked, pg_get_multixact_members(locked.xmax) m
  WHERE k IN ('a', 'b') ORDER BY k, m.mode;
-- the lock holder may still change the row; a plain rolled-back update
UPDATE locked SET item = '{"n": 11}' WHERE k = 'a';
SAVEPOINT t;
UPDATE locked SET item = '{"n": 30}' WHERE k = 'c';
ROLLBACK TO t;
COMMIT;
SELECT * FROM locked ORDER BY k;
-- VACUUM FREEZE removes the xmax of 'b' (a multixact) and of 'c' (an
-- aborted update); both point to themselves again, as ddb_verify checks.
VACUUM FREEZE locked;
SELECT k, xmax FROM locked ORDER BY k;
SELECT (ddb_verify('locked')->>'live')::int;
DROP TABLE locked;

-- VACUUM FREEZE advances relfrozenxid (freezing every version).
SELECT relfrozenxid AS before FROM pg_class WHERE relname = 'orders' \gset
VACUUM FREEZE orders;
SELECT age(relfrozenxid) < age(:'before'::xid) AS advanced FROM pg_class WHERE relname = 'orders';
SELECT (ddb_verify('orders')->>'live')::int;

-- ANALYZE gives the planner row counts.
ANALYZE orders;
SELECT reltuples FROM pg_class WHERE relname = 'orders';

-- VACUUM FULL rebuilds compactly and keeps every item.
SELECT count(*) AS n, sum((item->>'total')::int) AS s FROM orders \gset
SELECT pg_relation_size('churn') AS churn_before \gset
VACUUM FULL orders;
VACUUM FULL churn;
SELECT count(*) = :n AND sum((item->>'total')::int) = :s AS same FROM orders;
SELECT pg_relation_size('churn') < :churn_before AS smaller;
SELECT (ddb_verify('orders')->>'live')::int, (ddb_verify('churn')->>'live')::int;
-- and works normally afterwards
UPDATE orders SET item = '{}' WHERE "PK" = 'CUST#1' AND "SK" = 'ORDER#0001';
INSERT INTO orders VALUES ('NEW', '1', '{}');
SELECT (ddb_verify('orders')->>'live')::int;

DROP TABLE orders, churn, audit;
DROP FUNCTION audit_fn();
DROP FUNCTION wait_no_xmin();
