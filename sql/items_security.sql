-- The item API checks privileges itself (it bypasses the executor) and
-- refuses tables under row-level security.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

SELECT ddb_create_table('secure_items', 'PK');
SELECT ddb_put_item('secure_items', '{"PK": "a", "v": 1}');
CREATE ROLE ddb_reader;
CREATE ROLE ddb_nobody;
GRANT SELECT ON secure_items TO ddb_reader;

SET ROLE ddb_nobody;
SELECT ddb_get_item('secure_items', '{"PK": "a"}');
SELECT ddb_put_item('secure_items', '{"PK": "b"}');
RESET ROLE;

-- SELECT is enough to read, not to write.
SET ROLE ddb_reader;
SELECT ddb_get_item('secure_items', '{"PK": "a"}');
SELECT ddb_put_item('secure_items', '{"PK": "b"}');
SELECT ddb_update_item('secure_items', '{"PK": "a"}', 'SET v = :v', vals => '{":v": 2}');
SELECT ddb_delete_item('secure_items', '{"PK": "a"}');
RESET ROLE;

-- Row-level security: refused for everyone it applies to.
ALTER TABLE secure_items ENABLE ROW LEVEL SECURITY;
CREATE POLICY p ON secure_items USING (true);
SET ROLE ddb_reader;
SELECT ddb_get_item('secure_items', '{"PK": "a"}');
RESET ROLE;
ALTER TABLE secure_items DISABLE ROW LEVEL SECURITY;

-- Identifiers are quoted: odd table and key names work and inject nothing.
SELECT ddb_create_table('we.ird-Name_1', 'pk"; DROP TABLE secure_items; --');
SELECT ddb_put_item('we.ird-Name_1', '{"pk\"; DROP TABLE secure_items; --": "k", "v": 1}');
SELECT ddb_get_item('we.ird-Name_1', '{"pk\"; DROP TABLE secure_items; --": "k"}');
SELECT count(*) FROM secure_items;

DROP TABLE secure_items, "we.ird-Name_1";
DROP ROLE ddb_reader;
DROP ROLE ddb_nobody;

-- The item functions write the tree without the executor, so they refuse
-- to write a table whose CHECK constraints, foreign keys or triggers SQL
-- writes would apply (reads stay allowed, and so do deletes where nothing
-- fires on delete); ddb's own index and stream triggers are fine.
CREATE TABLE api_customers (id text PRIMARY KEY);
INSERT INTO api_customers VALUES ('c1');
CREATE TABLE api_orders (cust text REFERENCES api_customers, sk text,
                         item jsonb CHECK (item->>'status' IN ('NEW', 'PAID'))) USING ddb;
INSERT INTO api_orders VALUES ('c1', 'o1', '{"status": "NEW"}');
\set VERBOSITY terse
SELECT ddb_put_item('api_orders', '{"cust": "c404", "sk": "o2", "status": "NEW"}');
SELECT ddb_update_item('api_orders', '{"cust": "c1", "sk": "o1"}', 'SET #s = :s',
                       names => '{"#s": "status"}', vals => '{":s": "LOST"}');
SELECT ddb_api('PutItem', '{"TableName": "api_orders", "Item": {"cust": {"S": "c1"}, "sk": {"S": "o3"}}}');
ALTER TABLE api_orders DROP CONSTRAINT api_orders_item_check;
SELECT ddb_put_item('api_orders', '{"cust": "c404", "sk": "o2", "status": "NEW"}');
SELECT ddb_delete_item('api_orders', '{"cust": "c9", "sk": "none"}', return_values => 'ALL_OLD');
CREATE TABLE api_audit (op text);
CREATE FUNCTION api_audit_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO api_audit VALUES (TG_OP); RETURN NULL; END $$;
CREATE TRIGGER api_orders_audit AFTER DELETE ON api_orders FOR EACH ROW EXECUTE FUNCTION api_audit_fn();
ALTER TABLE api_orders DROP CONSTRAINT api_orders_cust_fkey;
SELECT ddb_put_item('api_orders', '{"cust": "c2", "sk": "o2"}');
SELECT ddb_delete_item('api_orders', '{"cust": "c1", "sk": "o1"}');
ALTER TABLE api_orders DISABLE TRIGGER api_orders_audit;
SELECT ddb_delete_item('api_orders', '{"cust": "c2", "sk": "o2"}');
\set VERBOSITY default
SELECT ddb_get_item('api_orders', '{"cust": "c1", "sk": "o1"}');
SELECT * FROM api_orders;
SELECT * FROM api_audit;
DROP TABLE api_orders, api_customers, api_audit;
DROP FUNCTION api_audit_fn();

-- Nor do they compute stored generated columns: a put would store the sort
-- key (or item) the request names, a row SQL could never write.  Reads and
-- deletes stay allowed.
CREATE TABLE api_gen ("PK" text COLLATE "C", "SK" text COLLATE "C" GENERATED ALWAYS AS ("PK" || '#meta') STORED,
                      item jsonb) USING ddb;
INSERT INTO api_gen ("PK", item) VALUES ('a', '{"n": 1}');
\set VERBOSITY terse
SELECT ddb_put_item('api_gen', '{"PK": "z", "SK": "anything"}');
SELECT ddb_update_item('api_gen', '{"PK": "a", "SK": "a#meta"}', 'SET n = :n', vals => '{":n": 2}');
SELECT ddb_batch_write_item('{"api_gen": [{"PutRequest": {"Item": {"PK": "y", "SK": "y"}}}]}');
\set VERBOSITY default
SELECT ddb_get_item('api_gen', '{"PK": "a", "SK": "a#meta"}');
SELECT ddb_delete_item('api_gen', '{"PK": "a", "SK": "a#meta"}', return_values => 'ALL_OLD');
SELECT * FROM api_gen;
DROP TABLE api_gen;

-- Write privileges, as README's table says: puts need INSERT and UPDATE,
-- deletes DELETE, and both SELECT as well when they read the stored item:
-- for a condition, for return values, and for ReturnConsumedCapacity,
-- which bills the larger of the old and new item (so its units tell
-- whether the item exists and how large it is).
SELECT ddb_create_table('priv_items', 'PK');
SELECT ddb_put_item('priv_items', jsonb_build_object('PK', 'big', 'pad', repeat('z', 5000)));
CREATE ROLE ddb_writer;
GRANT INSERT, UPDATE, DELETE ON priv_items TO ddb_writer;
SET ROLE ddb_writer;
\set VERBOSITY terse
SELECT ddb_put_item('priv_items', '{"PK": "w1"}');
SELECT ddb_delete_item('priv_items', '{"PK": "w1"}');
SELECT ddb_api('PutItem', '{"TableName": "priv_items", "Item": {"PK": {"S": "w2"}}}');
SELECT ddb_api('DeleteItem', '{"TableName": "priv_items", "Key": {"PK": {"S": "w2"}}}');
SELECT ddb_batch_write_item('{"priv_items": [{"PutRequest": {"Item": {"PK": "w3"}}}, {"DeleteRequest": {"Key": {"PK": "w4"}}}]}');
SELECT ddb_transact_write_items('[{"Put": {"TableName": "priv_items", "Item": {"PK": "w5"}}},
                                  {"Delete": {"TableName": "priv_items", "Key": {"PK": "w3"}}}]');
-- what reads the item is refused
SELECT ddb_put_item('priv_items', '{"PK": "big"}', 'attribute_exists(PK)');
SELECT ddb_put_item('priv_items', '{"PK": "big"}', return_values => 'ALL_OLD');
SELECT ddb_delete_item('priv_items', '{"PK": "big"}', 'attribute_exists(PK)');
SELECT ddb_update_item('priv_items', '{"PK": "big"}', 'SET n = :n', vals => '{":n": 1}');
SELECT ddb_api('PutItem', '{"TableName": "priv_items", "Item": {"PK": {"S": "big"}}, "ReturnConsumedCapacity": "TOTAL"}');
SELECT ddb_api('DeleteItem', '{"TableName": "priv_items", "Key": {"PK": {"S": "big"}}, "ReturnConsumedCapacity": "INDEXES"}');
SELECT ddb_api('BatchWriteItem', '{"RequestItems": {"priv_items": [{"PutRequest": {"Item": {"PK": {"S": "big"}}}}]},
                                   "ReturnConsumedCapacity": "TOTAL"}');
SELECT ddb_api('BatchWriteItem', '{"RequestItems": {"priv_items": [{"DeleteRequest": {"Key": {"PK": {"S": "big"}}}}]},
                                   "ReturnConsumedCapacity": "TOTAL"}');
SELECT ddb_api('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "priv_items", "Item": {"PK": {"S": "big"}}}}],
                                       "ReturnConsumedCapacity": "TOTAL"}');
SELECT ddb_api('ExecuteStatement', '{"Statement": "DELETE FROM priv_items WHERE PK = ''big''", "ReturnConsumedCapacity": "TOTAL"}');
-- "NONE" asks for nothing
SELECT ddb_api('PutItem', '{"TableName": "priv_items", "Item": {"PK": {"S": "w6"}}, "ReturnConsumedCapacity": "NONE"}');
\set VERBOSITY default
RESET ROLE;
-- nothing refused was written: big keeps its pad
SELECT "PK", length(item ->> 'pad') AS pad FROM priv_items ORDER BY "PK" COLLATE "C";
GRANT SELECT ON priv_items TO ddb_writer;
SET ROLE ddb_writer;
SELECT ddb_api('DeleteItem', '{"TableName": "priv_items", "Key": {"PK": {"S": "big"}}, "ReturnConsumedCapacity": "TOTAL"}');
RESET ROLE;
DROP TABLE priv_items;
-- ReturnItemCollectionMetrics SIZE answers with the size of the written
-- item's collection, the size of stored items, on a table with a local
-- secondary index: a read too, so it needs SELECT (as INSERT ... RETURNING
-- does), whatever the write; NONE asks for nothing
SELECT ddb_create_table('priv_lsi', 'PK', 'S', 'SK', 'S', '[
  {"IndexName": "ByN", "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"},
                                     {"AttributeName": "n", "KeyType": "RANGE", "AttributeType": "N"}],
   "Projection": {"ProjectionType": "KEYS_ONLY"}}]');
SELECT ddb_put_item('priv_lsi', jsonb_build_object('PK', 'p', 'SK', 'big', 'pad', repeat('z', 5000)));
GRANT INSERT, UPDATE, DELETE ON priv_lsi TO ddb_writer;
SET ROLE ddb_writer;
\set VERBOSITY terse
SELECT ddb_api('PutItem', '{"TableName": "priv_lsi", "Item": {"PK": {"S": "p"}, "SK": {"S": "w1"}},
                            "ReturnItemCollectionMetrics": "SIZE"}');
SELECT ddb_api('DeleteItem', '{"TableName": "priv_lsi", "Key": {"PK": {"S": "p"}, "SK": {"S": "big"}},
                               "ReturnItemCollectionMetrics": "SIZE"}');
SELECT ddb_api('BatchWriteItem', '{"RequestItems": {"priv_lsi": [{"PutRequest": {"Item": {"PK": {"S": "p"}, "SK": {"S": "w2"}}}}]},
                                   "ReturnItemCollectionMetrics": "SIZE"}');
SELECT ddb_api('TransactWriteItems', '{"TransactItems": [{"Delete": {"TableName": "priv_lsi", "Key": {"PK": {"S": "p"}, "SK": {"S": "big"}}}}],
                                       "ReturnItemCollectionMetrics": "SIZE"}');
SELECT ddb_api('PutItem', '{"TableName": "priv_lsi", "Item": {"PK": {"S": "p"}, "SK": {"S": "w3"}},
                            "ReturnItemCollectionMetrics": "NONE"}');
SELECT ddb_api('BatchWriteItem', '{"RequestItems": {"priv_lsi": [{"DeleteRequest": {"Key": {"PK": {"S": "p"}, "SK": {"S": "w3"}}}}]},
                                   "ReturnItemCollectionMetrics": "NONE"}');
\set VERBOSITY default
RESET ROLE;
-- nothing refused was written
SELECT "PK", "SK", length(item ->> 'pad') AS pad FROM priv_lsi ORDER BY "SK" COLLATE "C";
GRANT SELECT ON priv_lsi TO ddb_writer;
SET ROLE ddb_writer;
SELECT ddb_api('PutItem', '{"TableName": "priv_lsi", "Item": {"PK": {"S": "p"}, "SK": {"S": "w1"}},
                            "ReturnItemCollectionMetrics": "SIZE"}');
RESET ROLE;
DROP TABLE priv_lsi;
DROP ROLE ddb_writer;
