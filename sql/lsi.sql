-- Local secondary indexes: created with the table (ddb_create_table's
-- local_secondary_indexes and CreateTable's LocalSecondaryIndexes) with
-- DynamoDB's errors; DescribeTable; Query and Scan in the index's sort
-- order, strongly consistent, returning unprojected attributes by reading
-- the table; sparse; wrong-typed keys refused without a write; maintained
-- by SQL writes, the item API and TTL deletions; dropped with the table.
-- ddb_verify_gsi proves after each step that each index holds exactly its
-- table's entries.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

CREATE FUNCTION sqlstate_of(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE stmt;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;

-- ------------------------------------------------------------------------
-- A customer's orders by date (the table), by amount and by status.
-- ------------------------------------------------------------------------
SELECT ddb_create_table('orders', 'customer', 'S', 'orderDate', 'S', '[
  {"IndexName": "ByAmount",
   "KeySchema": [{"AttributeName": "customer", "KeyType": "HASH"},
                 {"AttributeName": "amount", "KeyType": "RANGE", "AttributeType": "N"}],
   "Projection": {"ProjectionType": "KEYS_ONLY"}},
  {"IndexName": "ByStatus",
   "KeySchema": [{"AttributeName": "customer", "KeyType": "HASH"},
                 {"AttributeName": "status", "KeyType": "RANGE"}],
   "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["amount"]}}]');
SELECT ddb_put_item('orders', '{"customer": "c1", "orderDate": "2024-01-01", "amount": 30, "status": "NEW", "note": "a"}');
SELECT ddb_put_item('orders', '{"customer": "c1", "orderDate": "2024-01-02", "amount": 10, "status": "PAID", "note": "b"}');
SELECT ddb_put_item('orders', '{"customer": "c1", "orderDate": "2024-01-03", "amount": 20, "note": "no status: not in ByStatus"}');
INSERT INTO orders VALUES ('c2', '2024-01-01', '{"amount": 5, "status": "NEW"}');
INSERT INTO orders VALUES ('c1', '2024-01-04', '{"amount": 10.5, "status": "NEW"}');
SELECT ddb_verify_gsi('orders');

-- DescribeTable lists them (no throughput or status: LSIs have none)
SELECT jsonb_pretty(ddb_describe_table('orders') -> 'LocalSecondaryIndexes') AS lsis;
SELECT ddb_describe_table('orders') -> 'AttributeDefinitions' AS defs,
       ddb_describe_table('orders') ? 'GlobalSecondaryIndexes' AS has_gsis;

-- Query in the index's order, both directions, with a sort-key condition
SELECT ddb_query('orders', 'customer = :c', '{":c": "c1"}', index_name => 'ByAmount');
SELECT ddb_query('orders', 'customer = :c AND amount BETWEEN :lo AND :hi', '{":c": "c1", ":lo": 10, ":hi": 20}',
                 index_name => 'ByAmount', forward => false);
SELECT ddb_query('orders', 'customer = :c AND begins_with(#s, :p)', '{":c": "c1", ":p": "N"}', '{"#s": "status"}',
                 index_name => 'ByStatus');
-- only the partition: c2 has one order
SELECT ddb_query('orders', 'customer = :c', '{":c": "c2"}', index_name => 'ByAmount');
-- Scan of an index: every entry
SELECT count(*) FROM ddb_scan('orders', index_name => 'ByStatus');

-- Attributes the index does not project come from the table: a projection,
-- a filter, or Select ALL_ATTRIBUTES (one point lookup per item).  A filter
-- reads them, but the items returned are still what Select asks for, by
-- default the index's projected attributes (no "note" below).
SELECT ddb_query('orders', 'customer = :c', '{":c": "c1"}', index_name => 'ByAmount', projection => 'note, amount');
SELECT ddb_query('orders', 'customer = :c', '{":c": "c1", ":n": "b"}', index_name => 'ByStatus',
                 filter => 'begins_with(note, :n)');
SELECT ddb_api('Query', '{"TableName": "orders", "IndexName": "ByAmount", "KeyConditionExpression": "customer = :c",
  "FilterExpression": "note = :n", "ExpressionAttributeValues": {":c": {"S": "c1"}, ":n": {"S": "a"}}}') -> 'Items';
SELECT ddb_api('Query', '{"TableName": "orders", "IndexName": "ByAmount", "KeyConditionExpression": "customer = :c",
  "ExpressionAttributeValues": {":c": {"S": "c1"}}, "Select": "ALL_ATTRIBUTES", "Limit": 2}');
-- without them, only the projection: ALL_PROJECTED_ATTRIBUTES
SELECT ddb_api('Query', '{"TableName": "orders", "IndexName": "ByStatus", "KeyConditionExpression": "customer = :c",
  "ExpressionAttributeValues": {":c": {"S": "c1"}}, "Select": "ALL_PROJECTED_ATTRIBUTES"}') -> 'Items';
-- strongly consistent reads are allowed on an LSI (not on a GSI)
SELECT ddb_api('Query', '{"TableName": "orders", "IndexName": "ByAmount", "KeyConditionExpression": "customer = :c AND amount > :a",
  "ExpressionAttributeValues": {":c": {"S": "c1"}, ":a": {"N": "25"}}, "ConsistentRead": true}');
SELECT ddb_api('Scan', '{"TableName": "orders", "IndexName": "ByStatus", "ConsistentRead": true, "Select": "COUNT"}');
-- pagination over an index: LastEvaluatedKey has the index and table keys
SELECT ddb_query_page('orders', 'customer = :c', '{":c": "c1"}', index_name => 'ByAmount', "limit" => 2);
SELECT ddb_query_page('orders', 'customer = :c', '{":c": "c1"}', index_name => 'ByAmount', "limit" => 2,
                      start_key => '{"customer": "c1", "amount": 20, "orderDate": "2024-01-03"}');

-- ------------------------------------------------------------------------
-- Writes: wrong types and empty keys are refused and change nothing; every
-- path keeps the indexes.
-- ------------------------------------------------------------------------
SELECT sqlstate_of($$SELECT ddb_put_item('orders', '{"customer": "c1", "orderDate": "2024-02-01", "amount": "lots"}')$$);
SELECT sqlstate_of($$SELECT ddb_put_item('orders', '{"customer": "c1", "orderDate": "2024-02-01", "status": ""}')$$);
SELECT sqlstate_of($$INSERT INTO orders VALUES ('c1', '2024-02-01', '{"amount": true}')$$);
SELECT sqlstate_of($$SELECT ddb_update_item('orders', '{"customer": "c1", "orderDate": "2024-01-01"}', 'SET amount = :a', vals => '{":a": "x"}')$$);
SELECT count(*) AS c1_orders FROM ddb_query('orders', 'customer = :c', '{":c": "c1"}');
SELECT ddb_get_item('orders', '{"customer": "c1", "orderDate": "2024-01-01"}');
-- update moves entries, delete removes them, SQL and API alike
SELECT ddb_update_item('orders', '{"customer": "c1", "orderDate": "2024-01-01"}', 'SET #s = :s REMOVE amount',
                       names => '{"#s": "status"}', vals => '{":s": "SHIPPED"}');
UPDATE orders SET item = item || '{"amount": 99}' WHERE customer = 'c1' AND "orderDate" = '2024-01-03';
DELETE FROM orders WHERE customer = 'c1' AND "orderDate" = '2024-01-02';
SELECT ddb_api('DeleteItem', '{"TableName": "orders", "Key": {"customer": {"S": "c2"}, "orderDate": {"S": "2024-01-01"}}}');
SELECT ddb_query('orders', 'customer = :c', '{":c": "c1"}', index_name => 'ByAmount');
SELECT ddb_query('orders', 'customer = :c', '{":c": "c1"}', index_name => 'ByStatus');
SELECT ddb_verify_gsi('orders');

-- TTL deletions keep the indexes too
SELECT ddb_update_time_to_live('orders', 'exp', true);
UPDATE orders SET item = item || jsonb_build_object('exp', extract(epoch FROM now())::bigint - 10)
WHERE customer = 'c1' AND "orderDate" = '2024-01-04';
SELECT ddb_ttl_sweep('orders');
SELECT ddb_verify_gsi('orders');
SELECT count(*) FROM ddb_query('orders', 'customer = :c', '{":c": "c1"}', index_name => 'ByStatus');

-- ------------------------------------------------------------------------
-- Item collections: a partition's items plus their LSI entries are limited
-- (DynamoDB: 10 GB; here lowered by the GUC); the write that would exceed
-- the limit fails and writes nothing; ReturnItemCollectionMetrics reports
-- the collection.  The sizes are kept per partition key (the internal
-- "$collections" index), checked by ddb_verify_gsi.
-- ------------------------------------------------------------------------
SET ddb.item_collection_size_limit = '2kB';
SELECT ddb_put_item('orders', jsonb_build_object('customer', 'big', 'orderDate', 'd' || i, 'amount', i,
                                                 'pad', repeat('x', 400))) FROM generate_series(1, 3) i;
SELECT sqlstate_of($$SELECT ddb_put_item('orders', jsonb_build_object('customer', 'big', 'orderDate', 'd9', 'amount', 9, 'pad', repeat('x', 1500)))$$);
SELECT sqlstate_of($$INSERT INTO orders VALUES ('big', 'd7', jsonb_build_object('pad', repeat('x', 2000)))$$);
SELECT sqlstate_of($$SELECT ddb_update_item('orders', '{"customer": "big", "orderDate": "d1"}', 'SET #p = :p', names => '{"#p": "pad"}', vals => jsonb_build_object(':p', repeat('y', 2000)))$$);
SELECT sqlstate_of(format($$SELECT ddb_api('PutItem', %L)$$, format('{"TableName": "orders", "Item": {"customer": {"S": "big"}, "orderDate": {"S": "d8"}, "pad": {"S": "%s"}}}', repeat('x', 1500))));
-- in a transaction, the collection grown too large cancels it, as
-- DynamoDB documents: the Put's reason is ItemCollectionSizeLimitExceeded,
-- "Collection size exceeded"; the other actions' None
SELECT ddb_api('TransactWriteItems', format('{"TransactItems": [
  {"ConditionCheck": {"TableName": "orders", "Key": {"customer": {"S": "big"}, "orderDate": {"S": "d1"}},
                      "ConditionExpression": "attribute_exists(customer)"}},
  {"Put": {"TableName": "orders", "Item": {"customer": {"S": "big"}, "orderDate": {"S": "d9"}, "pad": {"S": "%s"}}}},
  {"Put": {"TableName": "orders", "Item": {"customer": {"S": "small"}, "orderDate": {"S": "d9"}}}}]}', repeat('x', 1500))::jsonb);
SELECT ddb_api('ExecuteTransaction', format('{"TransactStatements": [
  {"Statement": "INSERT INTO orders VALUE {''customer'': ''big'', ''orderDate'': ''d9'', ''pad'': ''%s''}"}]}', repeat('x', 1500))::jsonb);
-- in a BatchExecuteStatement, which writes the collection rows after all
-- its items, the statement that grew a collection past its limit fails
-- with ItemCollectionSizeLimitExceeded, as it would alone, and the others
-- stand (the batch runs again, each statement checking its own growth)
SELECT r->'Error'->>'Code' AS code, r->'Error'->>'Message' AS message
FROM jsonb_array_elements(ddb_api('BatchExecuteStatement', format('{"Statements": [
  {"Statement": "INSERT INTO orders VALUE {''customer'': ''small'', ''orderDate'': ''d8''}"},
  {"Statement": "INSERT INTO orders VALUE {''customer'': ''big'', ''orderDate'': ''d9'', ''pad'': ''%s''}"},
  {"Statement": "UPDATE orders SET amount = 7 WHERE customer = ''big'' AND orderDate = ''d1''"}]}', repeat('x', 1500))::jsonb)->'Responses') r;
SELECT ddb_get_item('orders', '{"customer": "big", "orderDate": "d9"}') AS big_d9_not_written,
       ddb_get_item('orders', '{"customer": "small", "orderDate": "d8"}') IS NOT NULL AS small_d8_written,
       ddb_get_item('orders', '{"customer": "big", "orderDate": "d1"}') ->> 'amount' AS big_d1_amount;
SELECT ddb_verify_gsi('orders');
SELECT ddb_delete_item('orders', '{"customer": "small", "orderDate": "d8"}') IS NULL AS removed,
       ddb_update_item('orders', '{"customer": "big", "orderDate": "d1"}', 'SET amount = :a', vals => '{":a": 1}') IS NULL AS restored;
-- a collection row another transaction holds: the batch's statement that
-- writes it meets the lock timeout as it would alone (TransactionConflict)
-- and the others stand, where the rows written at the end failed the whole
-- batch
BEGIN;
SELECT ddb_put_item('orders', '{"customer": "big", "orderDate": "d4"}') IS NULL AS held;
PREPARE TRANSACTION 'hold_big_collection';
SET lock_timeout = '100ms';
SELECT r->'Error'->>'Code' AS code
FROM jsonb_array_elements(ddb_api('BatchExecuteStatement', '{"Statements": [
  {"Statement": "INSERT INTO orders VALUE {''customer'': ''small'', ''orderDate'': ''d7''}"},
  {"Statement": "INSERT INTO orders VALUE {''customer'': ''big'', ''orderDate'': ''d6''}"}]}')->'Responses') r;
RESET lock_timeout;
ROLLBACK PREPARED 'hold_big_collection';
SELECT ddb_get_item('orders', '{"customer": "small", "orderDate": "d7"}') IS NOT NULL AS small_d7_written,
       ddb_get_item('orders', '{"customer": "big", "orderDate": "d6"}') AS big_d6_not_written;
SELECT ddb_delete_item('orders', '{"customer": "small", "orderDate": "d7"}') IS NULL AS removed;
SELECT ddb_transact_write_items(jsonb_build_array(jsonb_build_object('Update', jsonb_build_object(
  'TableName', 'orders', 'Key', '{"customer": "big", "orderDate": "d1"}'::jsonb,
  'UpdateExpression', 'SET #p = :p', 'ExpressionAttributeNames', '{"#p": "pad"}'::jsonb,
  'ExpressionAttributeValues', jsonb_build_object(':p', repeat('y', 2000))))));
SELECT count(*) AS big_items, ddb_get_item('orders', '{"customer": "big", "orderDate": "d1"}') ->> 'pad' = repeat('x', 400) AS d1_unchanged
FROM ddb_query('orders', 'customer = :c', '{":c": "big"}');
SELECT ddb_get_item('orders', '{"customer": "small", "orderDate": "d9"}') AS small_d9_not_written;
-- other partitions are other collections; shrinking writes always pass
SELECT ddb_put_item('orders', jsonb_build_object('customer', 'small', 'orderDate', 'd1', 'pad', repeat('x', 1500)));
SELECT ddb_update_item('orders', '{"customer": "big", "orderDate": "d1"}', 'REMOVE #p', names => '{"#p": "pad"}');
SELECT ddb_api('PutItem', '{"TableName": "orders", "Item": {"customer": {"S": "big"}, "orderDate": {"S": "d2"}, "amount": {"N": "2"}},
  "ReturnItemCollectionMetrics": "SIZE"}');
SELECT ddb_api('DeleteItem', '{"TableName": "orders", "Key": {"customer": {"S": "big"}, "orderDate": {"S": "d3"}},
  "ReturnItemCollectionMetrics": "SIZE", "ReturnValues": "ALL_OLD"}') - 'Attributes';
SELECT ddb_api('UpdateItem', '{"TableName": "orders", "Key": {"customer": {"S": "big"}, "orderDate": {"S": "d2"}},
  "UpdateExpression": "SET amount = :a", "ExpressionAttributeValues": {":a": {"N": "3"}}, "ReturnItemCollectionMetrics": "NONE"}');
-- a batch and a transaction report each collection their writes touched,
-- per table and once each (the table without LSIs has none)
SELECT ddb_create_table('nolsi2', 'id');
SELECT ddb_api('BatchWriteItem', '{"RequestItems": {
  "orders": [{"PutRequest": {"Item": {"customer": {"S": "big"}, "orderDate": {"S": "d5"}}}},
             {"DeleteRequest": {"Key": {"customer": {"S": "big"}, "orderDate": {"S": "d5x"}}}},
             {"PutRequest": {"Item": {"customer": {"S": "small"}, "orderDate": {"S": "d5"}}}}],
  "nolsi2": [{"PutRequest": {"Item": {"id": {"S": "a"}}}}]},
  "ReturnItemCollectionMetrics": "SIZE"}');
SELECT ddb_api('TransactWriteItems', '{"TransactItems": [
  {"Update": {"TableName": "orders", "Key": {"customer": {"S": "big"}, "orderDate": {"S": "d5"}},
              "UpdateExpression": "SET amount = :a", "ExpressionAttributeValues": {":a": {"N": "5"}}}},
  {"ConditionCheck": {"TableName": "orders", "Key": {"customer": {"S": "small"}, "orderDate": {"S": "d1"}},
                      "ConditionExpression": "attribute_exists(customer)"}},
  {"Put": {"TableName": "nolsi2", "Item": {"id": {"S": "b"}}}}],
  "ReturnItemCollectionMetrics": "SIZE"}');
SELECT ddb_api('BatchWriteItem', '{"RequestItems": {"nolsi2": [{"PutRequest": {"Item": {"id": {"S": "c"}}}}]},
  "ReturnItemCollectionMetrics": "SIZE"}');
DROP TABLE nolsi2;
SELECT ddb_delete_item('orders', '{"customer": "big", "orderDate": "d5"}') IS NOT NULL AS deleted,
       ddb_delete_item('orders', '{"customer": "small", "orderDate": "d5"}') IS NOT NULL AS deleted;
RESET ddb.item_collection_size_limit;
SELECT customer, item FROM ddb_internal."orders__$collections" ORDER BY customer;
SELECT ddb_verify_gsi('orders');
-- the verifier notices a wrong size
BEGIN;
UPDATE ddb_internal."orders__$collections" SET item = '{"size": 5}' WHERE customer = 'big';
SELECT sqlstate_of($$SELECT ddb_verify_gsi('orders')$$);
ROLLBACK;
-- One command that writes several items of one partition (a multi-row
-- INSERT, INSERT ... SELECT, COPY, BatchWriteItem, UPDATE or DELETE of many
-- rows) changes their collection's row once per item, each change its own
-- command: a second change at the same command id could not lock the
-- first's version (it looped forever before).
SET statement_timeout = '60s';
INSERT INTO orders VALUES ('multi', 'm1', '{"amount": 1}'), ('multi', 'm2', '{"amount": 2}'), ('multi', 'm3', '{"amount": 3}');
INSERT INTO orders SELECT 'multi', 'n' || i, jsonb_build_object('amount', i) FROM generate_series(1, 5) i;
COPY orders (customer, "orderDate", item) FROM stdin;
multi	c1	{"amount": 1}
multi	c2	{"amount": 2}
\.
SELECT ddb_batch_write_item(jsonb_build_object('orders', (SELECT jsonb_agg(jsonb_build_object('PutRequest',
  jsonb_build_object('Item', jsonb_build_object('customer', 'multi', 'orderDate', 'b' || i, 'amount', i))))
  FROM generate_series(1, 4) i)));
SELECT item FROM ddb_internal."orders__$collections" WHERE customer = 'multi';
UPDATE orders SET item = item || '{"pad": "xxxxxxxxxx"}' WHERE customer = 'multi';
SELECT item FROM ddb_internal."orders__$collections" WHERE customer = 'multi';
DELETE FROM orders WHERE customer = 'multi' AND "orderDate" LIKE 'n%';
SELECT ddb_batch_write_item('{"orders": [{"DeleteRequest": {"Key": {"customer": "multi", "orderDate": "b1"}}},
                                         {"DeleteRequest": {"Key": {"customer": "multi", "orderDate": "b2"}}}]}');
SELECT count(*) AS items, (SELECT item FROM ddb_internal."orders__$collections" WHERE customer = 'multi') AS collection
FROM orders WHERE customer = 'multi';
SELECT ddb_verify_gsi('orders');
DELETE FROM orders WHERE customer = 'multi';
SELECT count(*) FROM ddb_internal."orders__$collections" WHERE customer = 'multi' AND item <> '{"size": 0}';
RESET statement_timeout;
-- a table without LSIs has no item collections: no metrics
SELECT ddb_create_table('nolsi', 'id');
SELECT ddb_api('PutItem', '{"TableName": "nolsi", "Item": {"id": {"S": "a"}}, "ReturnItemCollectionMetrics": "SIZE"}');
DROP TABLE nolsi;

-- ------------------------------------------------------------------------
-- Errors of the definition: DynamoDB's messages, nothing created.
-- ------------------------------------------------------------------------
-- a table without a sort key
SELECT sqlstate_of($$SELECT ddb_create_table('bad', 'a', local_secondary_indexes => '[{"IndexName": "xyz",
  "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "RANGE"}],
  "Projection": {"ProjectionType": "ALL"}}]')$$);
-- another partition key
SELECT sqlstate_of($$SELECT ddb_create_table('bad', 'a', 'S', 's', 'S', '[{"IndexName": "xyz",
  "KeySchema": [{"AttributeName": "b", "KeyType": "HASH"}, {"AttributeName": "c", "KeyType": "RANGE"}],
  "Projection": {"ProjectionType": "ALL"}}]')$$);
-- no sort key
SELECT sqlstate_of($$SELECT ddb_create_table('bad', 'a', 'S', 's', 'S', '[{"IndexName": "xyz",
  "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}]')$$);
-- six indexes
SELECT sqlstate_of(format($$SELECT ddb_create_table('bad', 'a', 'S', 's', 'S', %L)$$,
  (SELECT jsonb_agg(jsonb_build_object('IndexName', 'idx' || i,
     'KeySchema', jsonb_build_array(jsonb_build_object('AttributeName', 'a', 'KeyType', 'HASH'),
                                    jsonb_build_object('AttributeName', 'k' || i, 'KeyType', 'RANGE')),
     'Projection', '{"ProjectionType": "ALL"}'::jsonb)) FROM generate_series(1, 6) i)));
-- an empty list, a duplicate name, a bad name, a bad projection
SELECT sqlstate_of($$SELECT ddb_create_table('bad', 'a', 'S', 's', 'S', '[]')$$);
SELECT sqlstate_of($$SELECT ddb_create_table('bad', 'a', 'S', 's', 'S', '[
  {"IndexName": "dup", "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}},
  {"IndexName": "dup", "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "c", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}]')$$);
SELECT sqlstate_of($$SELECT ddb_create_table('bad', 'a', 'S', 's', 'S', '[{"IndexName": "x",
  "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "RANGE"}],
  "Projection": {"ProjectionType": "ALL"}}]')$$);
SELECT sqlstate_of($$SELECT ddb_create_table('bad', 'a', 'S', 's', 'S', '[{"IndexName": "xyz",
  "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "RANGE"}],
  "Projection": {"ProjectionType": "SOME"}}]')$$);
-- an index key missing from AttributeDefinitions
SELECT sqlstate_of($$SELECT ddb_api('CreateTable', '{"TableName": "bad", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "s", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}, {"AttributeName": "s", "AttributeType": "S"}],
  "LocalSecondaryIndexes": [{"IndexName": "xyz", "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"},
    {"AttributeName": "b", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}]}')$$);
SELECT count(*) AS bad_tables FROM pg_class WHERE relname LIKE 'bad%';
-- an LSI is made with its table only: UpdateTable cannot delete one
SELECT sqlstate_of($$SELECT ddb_drop_gsi('orders', 'ByAmount')$$);
-- an LSI and a GSI of one table: a GSI still refuses ConsistentRead and
-- ALL_ATTRIBUTES when it does not project everything
SELECT ddb_create_gsi('orders', 'ByNote', 'note', projection => 'KEYS_ONLY');
SELECT sqlstate_of($$SELECT ddb_api('Query', '{"TableName": "orders", "IndexName": "ByNote", "KeyConditionExpression": "note = :n",
  "ExpressionAttributeValues": {":n": {"S": "a"}}, "ConsistentRead": true}')$$);
SELECT sqlstate_of($$SELECT ddb_api('Query', '{"TableName": "orders", "IndexName": "ByNote", "KeyConditionExpression": "note = :n",
  "ExpressionAttributeValues": {":n": {"S": "a"}}, "Select": "ALL_ATTRIBUTES"}')$$);
SELECT jsonb_path_query_array(ddb_describe_table('orders'), '$.LocalSecondaryIndexes[*].IndexName') AS lsis,
       jsonb_path_query_array(ddb_describe_table('orders'), '$.GlobalSecondaryIndexes[*].IndexName') AS gsis;
SELECT ddb_verify_gsi('orders');

-- CreateTable through ddb_api, with an LSI and a GSI
SELECT ddb_api('CreateTable', '{"TableName": "threads", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "forum", "KeyType": "HASH"}, {"AttributeName": "subject", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "forum", "AttributeType": "S"}, {"AttributeName": "subject", "AttributeType": "S"},
                           {"AttributeName": "lastPost", "AttributeType": "N"}],
  "LocalSecondaryIndexes": [{"IndexName": "ByLastPost", "KeySchema": [{"AttributeName": "forum", "KeyType": "HASH"},
    {"AttributeName": "lastPost", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "ALL"}}],
  "GlobalSecondaryIndexes": [{"IndexName": "BySubject", "KeySchema": [{"AttributeName": "subject", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}}]}') #> '{TableDescription,LocalSecondaryIndexes,0,IndexName}';
SELECT ddb_put_item('threads', '{"forum": "pg", "subject": "vacuum", "lastPost": 3}');
SELECT ddb_put_item('threads', '{"forum": "pg", "subject": "wal", "lastPost": 1}');
SELECT ddb_query('threads', 'forum = :f', '{":f": "pg"}', index_name => 'ByLastPost', forward => false);

-- ReturnConsumedCapacity INDEXES bills each index under its own member:
-- an LSI under LocalSecondaryIndexes, a GSI under GlobalSecondaryIndexes.
SELECT ddb_api('PutItem', '{"TableName": "threads", "Item": {"forum": {"S": "pg"}, "subject": {"S": "toast"},
  "lastPost": {"N": "2"}}, "ReturnConsumedCapacity": "INDEXES"}') -> 'ConsumedCapacity' AS put_capacity;
SELECT ddb_api('Query', '{"TableName": "threads", "IndexName": "ByLastPost", "KeyConditionExpression": "forum = :f",
  "ExpressionAttributeValues": {":f": {"S": "pg"}}, "Select": "COUNT",
  "ReturnConsumedCapacity": "INDEXES"}') -> 'ConsumedCapacity' AS lsi_query_capacity;
SELECT ddb_api('Query', '{"TableName": "threads", "IndexName": "BySubject", "KeyConditionExpression": "subject = :s",
  "ExpressionAttributeValues": {":s": {"S": "wal"}}, "Select": "COUNT",
  "ReturnConsumedCapacity": "INDEXES"}') -> 'ConsumedCapacity' AS gsi_query_capacity;

-- DROP TABLE drops the index tables
DROP TABLE orders, threads;
SELECT count(*) AS leftovers FROM ddb_internal.gsi;
SELECT count(*) AS index_tables FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'ddb_internal' AND c.relkind = 'r' AND c.relname LIKE '%\_\_%';
DROP FUNCTION sqlstate_of(text);
