-- ddb_verify_gsi is the oracle of the GSI tests: this proves it can fail.
-- Each class of disagreement between a table and its index -- a missing
-- entry, an extra entry, an entry with a stale key, an entry with a stale
-- projection -- is made by writing the table with the maintenance trigger
-- disabled (the README's warning) or by writing the index table directly,
-- and ddb_verify_gsi must raise data_corrupted (XX001) naming it.  Repairing
-- the damage makes it clean again, so each failure is the planted one.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

CREATE FUNCTION gv_check(tbl regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r jsonb;
BEGIN
  r := ddb_verify_gsi(tbl);
  RETURN 'clean: ' || r::text;
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;

SELECT ddb_create_table('gv_orders', 'id');
INSERT INTO gv_orders VALUES
  ('o1', '{"status": "PENDING", "total": 10}'),
  ('o2', '{"status": "SHIPPED", "total": 20}'),
  ('o3', '{"total": 30}');
SELECT ddb_create_gsi('gv_orders', 'StatusIndex', 'status');
SELECT gv_check('gv_orders');

-- Writes of the table that the index does not see.
CREATE FUNCTION gv_unseen(stmt text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  ALTER TABLE gv_orders DISABLE TRIGGER ddb_gsi_maintain;
  EXECUTE stmt;
  ALTER TABLE gv_orders ENABLE TRIGGER ddb_gsi_maintain;
END $$;
SELECT * FROM ddb_internal."gv_orders__StatusIndex" ORDER BY 1, 2;

-- Missing: an item with an index key written while the trigger was off.
SELECT gv_unseen($$INSERT INTO gv_orders VALUES ('o4', '{"status": "PENDING", "total": 40}')$$);
SELECT gv_check('gv_orders');
INSERT INTO ddb_internal."gv_orders__StatusIndex" VALUES ('PENDING', 'o4', '{"total": 40}');
SELECT gv_check('gv_orders');

-- Missing, from the index's side: an entry deleted from the index table.
DELETE FROM ddb_internal."gv_orders__StatusIndex" WHERE id = 'o2';
SELECT gv_check('gv_orders');
INSERT INTO ddb_internal."gv_orders__StatusIndex" VALUES ('SHIPPED', 'o2', '{"total": 20}');
SELECT gv_check('gv_orders');

-- Extra: an item deleted while the trigger was off leaves its entry.
SELECT gv_unseen($$DELETE FROM gv_orders WHERE id = 'o1'$$);
SELECT gv_check('gv_orders');
DELETE FROM ddb_internal."gv_orders__StatusIndex" WHERE id = 'o1';
SELECT gv_check('gv_orders');

-- Extra, from the index's side: an entry for an item that has no index key.
INSERT INTO ddb_internal."gv_orders__StatusIndex" VALUES ('PENDING', 'o3', '{"total": 30}');
SELECT gv_check('gv_orders');
DELETE FROM ddb_internal."gv_orders__StatusIndex" WHERE id = 'o3';
SELECT gv_check('gv_orders');

-- Wrong key: the item's index key changed while the trigger was off, so
-- its entry sits under the old key (and the new key has none).
SELECT gv_unseen($$UPDATE gv_orders SET item = item || '{"status": "DELIVERED"}' WHERE id = 'o2'$$);
SELECT gv_check('gv_orders');
SELECT gv_unseen($$UPDATE gv_orders SET item = item || '{"status": "SHIPPED"}' WHERE id = 'o2'$$);
SELECT gv_check('gv_orders');

-- Wrong projection: a non-key attribute changed while the trigger was off.
SELECT gv_unseen($$UPDATE gv_orders SET item = item || '{"total": 21}' WHERE id = 'o2'$$);
SELECT gv_check('gv_orders');
SELECT gv_unseen($$UPDATE gv_orders SET item = item || '{"total": 20}' WHERE id = 'o2'$$);
SELECT gv_check('gv_orders');

SELECT * FROM ddb_internal."gv_orders__StatusIndex" ORDER BY 1, 2;
DROP TABLE gv_orders;
DROP FUNCTION gv_check, gv_unseen;
