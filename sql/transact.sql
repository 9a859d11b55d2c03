-- TransactWriteItems and TransactGetItems: the SQL functions (document
-- form) and ddb_api (typed JSON) on one core.  All or nothing; a failed
-- condition cancels the transaction with one CancellationReason per action
-- (in the error's DETAIL); DynamoDB's limits and messages;
-- ClientRequestToken idempotency for ten minutes; indexes follow.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA transact;
SET ddb.schema = transact;
SET search_path = transact, public;

SELECT ddb_create_table('orders', 'PK', 'S', 'SK', 'S');
SELECT ddb_create_table('stock', 'sku', 'S');
SELECT ddb_create_gsi('orders', 'StatusIndex', 'status', sort_key => 'SK');
SELECT ddb_batch_write_item('{"stock": [{"PutRequest": {"Item": {"sku": "apple", "qty": 5}}},
                                        {"PutRequest": {"Item": {"sku": "pear", "qty": 0}}},
                                        {"PutRequest": {"Item": {"sku": "label", "qty": "many"}}}]}');

-- ------------------------------------------------------------------------
-- An order, a stock decrement and a uniqueness marker, in one transaction.
-- ------------------------------------------------------------------------
SELECT ddb_transact_write_items('[
  {"Put": {"TableName": "orders", "Item": {"PK": "CUST#1", "SK": "ORDER#1", "status": "PENDING", "sku": "apple"},
           "ConditionExpression": "attribute_not_exists(PK)"}},
  {"Update": {"TableName": "stock", "Key": {"sku": "apple"},
              "UpdateExpression": "SET qty = qty - :one", "ConditionExpression": "qty >= :one",
              "ExpressionAttributeValues": {":one": 1}}},
  {"Put": {"TableName": "orders", "Item": {"PK": "EMAIL#ann@example.com", "SK": "UNIQUE"},
           "ConditionExpression": "attribute_not_exists(PK)"}},
  {"ConditionCheck": {"TableName": "stock", "Key": {"sku": "pear"}, "ConditionExpression": "attribute_exists(sku)"}}]');
SELECT x FROM ddb_scan('orders') x ORDER BY x ->> 'PK';
SELECT ddb_get_item('stock', '{"sku": "apple"}');
SELECT x ->> 'SK' AS sk FROM ddb_query('orders', '#s = :s', '{":s": "PENDING"}', '{"#s": "status"}',
                                       index_name => 'StatusIndex') x;

-- ------------------------------------------------------------------------
-- A failed condition cancels everything.  CancellationReasons: one per
-- action, in request order; ALL_OLD puts the item in its reason.
-- ------------------------------------------------------------------------
SELECT ddb_transact_write_items('[
  {"Update": {"TableName": "stock", "Key": {"sku": "apple"},
              "UpdateExpression": "SET qty = qty - :one", "ExpressionAttributeValues": {":one": 1}}},
  {"Put": {"TableName": "orders", "Item": {"PK": "EMAIL#ann@example.com", "SK": "UNIQUE"},
           "ConditionExpression": "attribute_not_exists(PK)", "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
  {"ConditionCheck": {"TableName": "stock", "Key": {"sku": "pear"}, "ConditionExpression": "qty > :z",
                      "ExpressionAttributeValues": {":z": 0}}},
  {"Delete": {"TableName": "orders", "Key": {"PK": "CUST#1", "SK": "ORDER#1"}}}]');
SELECT ddb_get_item('stock', '{"sku": "apple"}');
SELECT count(*) AS orders FROM ddb_scan('orders');

-- An error that depends on the stored item (here "+" on a string) is the
-- action's ValidationError; the other actions still get their reasons.
SELECT ddb_transact_write_items('[
  {"Update": {"TableName": "stock", "Key": {"sku": "label"},
              "UpdateExpression": "SET qty = qty + :one", "ExpressionAttributeValues": {":one": 1}}},
  {"Delete": {"TableName": "orders", "Key": {"PK": "CUST#1", "SK": "ORDER#1"},
              "ConditionExpression": "#s = :s", "ExpressionAttributeNames": {"#s": "status"},
              "ExpressionAttributeValues": {":s": "SHIPPED"}}},
  {"Update": {"TableName": "stock", "Key": {"sku": "apple"},
              "UpdateExpression": "SET qty = qty - :one", "ExpressionAttributeValues": {":one": 1}}}]');
SELECT ddb_get_item('stock', '{"sku": "apple"}');
SELECT count(*) AS orders FROM ddb_scan('orders');
SELECT ddb_verify_gsi('orders');

-- ------------------------------------------------------------------------
-- Errors that do not depend on the items are ValidationExceptions, raised
-- before anything runs.
-- ------------------------------------------------------------------------
\set VERBOSITY terse
-- two actions on one item
SELECT ddb_transact_write_items('[
  {"ConditionCheck": {"TableName": "stock", "Key": {"sku": "apple"}, "ConditionExpression": "attribute_exists(sku)"}},
  {"Update": {"TableName": "stock", "Key": {"sku": "apple"}, "UpdateExpression": "SET qty = :z",
              "ExpressionAttributeValues": {":z": 0}}}]');
-- an action must be exactly one of the four
SELECT ddb_transact_write_items('[{"Put": {"TableName": "stock", "Item": {"sku": "a"}},
                                   "Delete": {"TableName": "stock", "Key": {"sku": "b"}}}]');
SELECT ddb_transact_write_items('[{"Get": {"TableName": "stock", "Key": {"sku": "a"}}}]');
-- required members
SELECT ddb_transact_write_items('[{"ConditionCheck": {"TableName": "stock", "Key": {"sku": "apple"}}}]');
SELECT ddb_transact_write_items('[{"Update": {"TableName": "stock", "Key": {"sku": "apple"}}}]');
SELECT ddb_transact_write_items('[{"Put": {"Item": {"sku": "apple"}}}]');
SELECT ddb_transact_write_items('[{"Delete": {"TableName": "stock"}}]');
SELECT ddb_transact_write_items('[{"Put": {"TableName": "stock", "Item": {"sku": "x"},
                                           "ReturnValuesOnConditionCheckFailure": "ALL_NEW"}}]');
-- the typed form names the same member in the same path
SELECT ddb_api('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "stock", "Item": {"sku": {"S": "x"}}}},
  {"Delete": {"TableName": "stock", "Key": {"sku": {"S": "y"}}, "ReturnValuesOnConditionCheckFailure": "ALL_NEW"}}]}');
-- expressions are checked as the single-item operations check them
SELECT ddb_transact_write_items('[{"Put": {"TableName": "stock", "Item": {"sku": "x"},
                                           "ExpressionAttributeValues": {":a": 1}}}]');
SELECT ddb_transact_write_items('[{"Update": {"TableName": "stock", "Key": {"sku": "x"},
                                              "UpdateExpression": "SET qty = :missing"}}]');
-- keys and tables
SELECT ddb_transact_write_items('[{"Delete": {"TableName": "stock", "Key": {"sku": 1}}}]');
SELECT ddb_transact_write_items('[{"Delete": {"TableName": "nosuch", "Key": {"sku": "x"}}}]');
-- empty, too many, too big
SELECT ddb_transact_write_items('[]');
SELECT ddb_transact_write_items((SELECT jsonb_agg(jsonb_build_object('Put', jsonb_build_object(
  'TableName', 'stock', 'Item', jsonb_build_object('sku', 'n' || i)))) FROM generate_series(1, 101) i));
-- The count comes before any action is read, as DynamoDB checks the
-- members' constraints (the count, table names, required members) before
-- the actions' contents: an over-long list whose last action is malformed
-- is refused for its length without the actions being converted, through
-- SQL and through ddb_api; the other constraints are listed with it
SELECT ddb_transact_write_items((SELECT jsonb_agg(jsonb_build_object('Put', jsonb_build_object(
  'TableName', 'stock', 'Item', jsonb_build_object('sku', 'n' || i)))) FROM generate_series(1, 5000) i) ||
  '[{"Bogus": {}}]');
SELECT ddb_api('TransactWriteItems', jsonb_build_object('TransactItems',
  (SELECT jsonb_agg(jsonb_build_object('Put', jsonb_build_object(
     'TableName', 'stock', 'Item', jsonb_build_object('sku', jsonb_build_object('S', 'n' || i))))) FROM generate_series(1, 5000) i) ||
  '[{"Put": {"TableName": "stock", "Item": {"sku": {}}}}, {"Put": {}, "Delete": {}}]'));
SELECT ddb_api('TransactWriteItems', jsonb_build_object('TransactItems',
  '[{"Update": {"TableName": "x", "Key": {"sku": {"S": "a"}}}}]'::jsonb ||
  (SELECT jsonb_agg(jsonb_build_object('Put', jsonb_build_object(
     'TableName', 'stock', 'Item', jsonb_build_object('sku', jsonb_build_object('S', 'n' || i))))) FROM generate_series(1, 100) i) ||
  '[{"Put": {"TableName": "stock", "Item": {"sku": {"NULL": false}}}}]'));
-- ... and the SQL function lists them as ddb_api does: the count's error
-- with the actions' errors, not alone
SELECT ddb_transact_write_items('[{"Update": {"TableName": "x", "Key": {"sku": "a"}}}]'::jsonb ||
  (SELECT jsonb_agg(jsonb_build_object('Put', jsonb_build_object(
     'TableName', 'stock', 'Item', jsonb_build_object('sku', 'n' || i)))) FROM generate_series(1, 100) i));
-- within the limit, the same malformed action is refused for itself
SELECT ddb_api('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "stock", "Item": {"sku": {}}}}]}');
SELECT ddb_api('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "stock", "Item": {"sku": {"S": "a"}}}},
                                                         {"Put": {}, "Delete": {}}]}');
SELECT ddb_transact_write_items((SELECT jsonb_agg(jsonb_build_object('Put', jsonb_build_object(
  'TableName', 'stock', 'Item', jsonb_build_object('sku', 'big' || i, 'body', repeat('x', 390000)))))
  FROM generate_series(1, 11) i));
SELECT ddb_transact_write_items('[{"Put": {"TableName": "stock", "Item": {"sku": "x"}}}]', NULL, 0);
\set VERBOSITY default
SELECT count(*) AS stock FROM ddb_scan('stock');

-- PostgreSQL can do more than 100 actions: max_actions lifts the limit.
SELECT ddb_transact_write_items((SELECT jsonb_agg(jsonb_build_object('Put', jsonb_build_object(
  'TableName', 'stock', 'Item', jsonb_build_object('sku', 'n' || i)))) FROM generate_series(1, 150) i),
  max_actions => 150);
SELECT count(*) AS stock FROM ddb_scan('stock');
-- the trees hold every invariant after the transactions and cancellations
SELECT (v ->> 'live')::int AS live FROM ddb_verify('stock') v;
SELECT (v ->> 'live')::int AS live FROM ddb_verify('orders') v;

-- Inside a SQL transaction the call composes with other SQL; ROLLBACK undoes it.
BEGIN;
SELECT ddb_transact_write_items('[{"Delete": {"TableName": "stock", "Key": {"sku": "apple"}}}]');
SELECT ddb_get_item('stock', '{"sku": "apple"}') IS NULL AS deleted;
ROLLBACK;
SELECT ddb_get_item('stock', '{"sku": "apple"}');

-- ------------------------------------------------------------------------
-- ClientRequestToken: the same request again is success without a second
-- write; another request with the token is IdempotentParameterMismatch.
-- ------------------------------------------------------------------------
SELECT ddb_transact_write_items('[{"Update": {"TableName": "stock", "Key": {"sku": "apple"},
  "UpdateExpression": "SET qty = qty + :one", "ExpressionAttributeValues": {":one": 1}}}]', 'token-1');
SELECT ddb_get_item('stock', '{"sku": "apple"}');
SELECT ddb_transact_write_items('[{"Update": {"TableName": "stock", "Key": {"sku": "apple"},
  "UpdateExpression": "SET qty = qty + :one", "ExpressionAttributeValues": {":one": 1}}}]', 'token-1');
SELECT ddb_get_item('stock', '{"sku": "apple"}');
-- the same request through ddb_api, in typed JSON, is the same request
SELECT ddb_api('TransactWriteItems', '{"ClientRequestToken": "token-1", "TransactItems": [{"Update": {
  "TableName": "stock", "Key": {"sku": {"S": "apple"}}, "UpdateExpression": "SET qty = qty + :one",
  "ExpressionAttributeValues": {":one": {"N": "1"}}}}]}');
SELECT ddb_get_item('stock', '{"sku": "apple"}');
\set VERBOSITY terse
SELECT ddb_transact_write_items('[{"Update": {"TableName": "stock", "Key": {"sku": "apple"},
  "UpdateExpression": "SET qty = qty + :two", "ExpressionAttributeValues": {":two": 2}}}]', 'token-1');
SELECT ddb_transact_write_items('[{"Delete": {"TableName": "stock", "Key": {"sku": "x"}}}]',
                                repeat('t', 37));
SELECT ddb_transact_write_items('[{"Delete": {"TableName": "stock", "Key": {"sku": "x"}}}]', '');
-- the length is in characters: 36 two-byte characters are a token, 37 are not
SELECT ddb_transact_write_items('[{"Delete": {"TableName": "stock", "Key": {"sku": "x"}}}]',
                                repeat('é', 37));
\set VERBOSITY default
SELECT ddb_transact_write_items('[{"Delete": {"TableName": "stock", "Key": {"sku": "x"}}}]',
                                repeat('é', 36));
SELECT ddb_api('TransactWriteItems', jsonb_build_object('ClientRequestToken', repeat('é', 36),
  'TransactItems', '[{"Delete": {"TableName": "stock", "Key": {"sku": {"S": "x"}}}}]'::jsonb));
SELECT count(*) AS stored FROM ddb_internal.transaction_tokens WHERE token = repeat('é', 36);
-- a canceled transaction stores no token: the retry runs
SELECT ddb_transact_write_items('[{"ConditionCheck": {"TableName": "stock", "Key": {"sku": "apple"},
  "ConditionExpression": "qty > :n", "ExpressionAttributeValues": {":n": 100}}}]', 'token-2');
SELECT count(*) AS stored FROM ddb_internal.transaction_tokens WHERE token = 'token-2';

-- After ten minutes a token is new again: the request writes once more.
UPDATE ddb_internal.transaction_tokens SET used = used - interval '11 minutes' WHERE token = 'token-1';
SELECT ddb_transact_write_items('[{"Update": {"TableName": "stock", "Key": {"sku": "apple"},
  "UpdateExpression": "SET qty = qty + :one", "ExpressionAttributeValues": {":one": 1}}}]', 'token-1');
SELECT ddb_get_item('stock', '{"sku": "apple"}');
SELECT token, used > now() - interval '1 minute' AS renewed FROM ddb_internal.transaction_tokens
 WHERE token LIKE 'token-%' ORDER BY token;

-- Each new token purges up to 16 expired ones, oldest first.
INSERT INTO ddb_internal.transaction_tokens
SELECT 'old-' || i, '\x00', now() - interval '1 hour' - i * interval '1 second' FROM generate_series(1, 20) i;
SELECT ddb_transact_write_items('[{"ConditionCheck": {"TableName": "stock", "Key": {"sku": "apple"},
  "ConditionExpression": "attribute_exists(sku)"}}]', 'token-3');
SELECT count(*) FILTER (WHERE token LIKE 'old-%') AS expired_left,
       string_agg(token, ', ' ORDER BY token) FILTER (WHERE token LIKE 'old-%') AS youngest_kept
FROM ddb_internal.transaction_tokens;

-- 400 KB per item: a Put over it is a plain ValidationException before
-- anything runs; an Update that grows a stored item past it depends on
-- the item, so it is that action's ValidationError and the others still
-- get their reasons.
SELECT ddb_put_item('stock', jsonb_build_object('sku', 'bulky', 'pad', repeat('x', 409000)));
\set VERBOSITY terse
SELECT ddb_transact_write_items(jsonb_build_array(
  jsonb_build_object('Delete', jsonb_build_object('TableName', 'stock', 'Key', '{"sku": "pear"}'::jsonb)),
  jsonb_build_object('Put', jsonb_build_object('TableName', 'stock', 'Item', jsonb_build_object('sku', 'huge', 'pad', repeat('x', 409600))))));
\set VERBOSITY default
SELECT ddb_transact_write_items(jsonb_build_array(
  jsonb_build_object('Update', jsonb_build_object('TableName', 'stock', 'Key', '{"sku": "bulky"}'::jsonb,
     'UpdateExpression', 'SET more = :m', 'ExpressionAttributeValues', jsonb_build_object(':m', repeat('y', 1000)))),
  jsonb_build_object('Update', jsonb_build_object('TableName', 'stock', 'Key', '{"sku": "apple"}'::jsonb,
     'UpdateExpression', 'SET qty = qty + :one', 'ExpressionAttributeValues', '{":one": 1}'::jsonb))));
SELECT ddb_get_item('stock', '{"sku": "pear"}') IS NOT NULL AS pear_kept,
       ddb_get_item('stock', '{"sku": "apple"}') AS apple;
-- The 4 MB are of all the items written: an Update's item counts as it is
-- once updated, with the Puts' items.  11 items of 390 KB made by Updates,
-- or by Puts and Updates, pass it, and nothing is written; 10 do not.
\set VERBOSITY terse
SELECT ddb_transact_write_items((SELECT jsonb_agg(jsonb_build_object('Update', jsonb_build_object(
  'TableName', 'stock', 'Key', jsonb_build_object('sku', 'up' || i),
  'UpdateExpression', 'SET body = :b', 'ExpressionAttributeValues', jsonb_build_object(':b', repeat('x', 390000)))))
  FROM generate_series(1, 11) i));
SELECT ddb_transact_write_items((SELECT jsonb_agg(CASE WHEN i <= 5
  THEN jsonb_build_object('Put', jsonb_build_object('TableName', 'stock',
         'Item', jsonb_build_object('sku', 'up' || i, 'body', repeat('x', 390000))))
  ELSE jsonb_build_object('Update', jsonb_build_object('TableName', 'stock', 'Key', jsonb_build_object('sku', 'up' || i),
         'UpdateExpression', 'SET body = :b', 'ExpressionAttributeValues', jsonb_build_object(':b', repeat('x', 390000))))
  END) FROM generate_series(1, 11) i));
\set VERBOSITY default
SELECT count(*) AS written FROM ddb_scan('stock') x WHERE x ->> 'sku' LIKE 'up%';
SELECT ddb_transact_write_items((SELECT jsonb_agg(jsonb_build_object('Update', jsonb_build_object(
  'TableName', 'stock', 'Key', jsonb_build_object('sku', 'up' || i),
  'UpdateExpression', 'SET body = :b', 'ExpressionAttributeValues', jsonb_build_object(':b', repeat('x', 390000)))))
  FROM generate_series(1, 10) i));
SELECT count(*) AS deleted FROM (SELECT ddb_delete_item('stock', jsonb_build_object('sku', 'up' || i))
                                 FROM generate_series(1, 10) i) s;
-- 4 MB of items read by TransactGetItems is refused as DynamoDB refuses
-- it (10 items of 400,000 bytes fit, 11 do not).
SELECT count(*) AS stored FROM (SELECT ddb_put_item('stock', jsonb_build_object('sku', 'big' || i, 'pad', repeat('x', 400000)))
                                FROM generate_series(1, 11) i) s;
SELECT jsonb_array_length(ddb_transact_get_items((SELECT jsonb_agg(jsonb_build_object('Get', jsonb_build_object(
  'TableName', 'stock', 'Key', jsonb_build_object('sku', 'big' || i)))) FROM generate_series(1, 10) i)) -> 'Responses') AS read;
\set VERBOSITY terse
SELECT ddb_transact_get_items((SELECT jsonb_agg(jsonb_build_object('Get', jsonb_build_object(
  'TableName', 'stock', 'Key', jsonb_build_object('sku', 'big' || i)))) FROM generate_series(1, 11) i));
\set VERBOSITY default
SELECT count(*) AS deleted FROM (SELECT ddb_delete_item('stock', jsonb_build_object('sku', 'big' || i))
                                 FROM generate_series(1, 11) i) s;
SELECT ddb_delete_item('stock', '{"sku": "bulky"}');

-- ------------------------------------------------------------------------
-- TransactGetItems: every item from one snapshot, in request order; a
-- missing item is an empty response.
-- ------------------------------------------------------------------------
SELECT ddb_transact_get_items('[
  {"Get": {"TableName": "orders", "Key": {"PK": "CUST#1", "SK": "ORDER#1"},
           "ProjectionExpression": "#s", "ExpressionAttributeNames": {"#s": "status"}}},
  {"Get": {"TableName": "stock", "Key": {"sku": "nothing"}}},
  {"Get": {"TableName": "stock", "Key": {"sku": "pear"}}}]');
\set VERBOSITY terse
SELECT ddb_transact_get_items('[{"Get": {"TableName": "stock", "Key": {"sku": "pear"}}},
                                {"Get": {"TableName": "stock", "Key": {"sku": "pear"}}}]');
SELECT ddb_transact_get_items('[{"Put": {"TableName": "stock", "Item": {"sku": "pear"}}}]');
SELECT ddb_transact_get_items('[]');
SELECT ddb_transact_get_items((SELECT jsonb_agg(jsonb_build_object('Get', jsonb_build_object(
  'TableName', 'stock', 'Key', jsonb_build_object('sku', 'n' || i)))) FROM generate_series(1, 101) i));
SELECT ddb_transact_get_items((SELECT jsonb_agg(jsonb_build_object('Get', jsonb_build_object(
  'TableName', 'stock', 'Key', jsonb_build_object('sku', 'n' || i)))) FROM generate_series(1, 5000) i) ||
  '[{"Put": {"TableName": "stock", "Item": {"sku": "a"}}}]');
SELECT ddb_api('TransactGetItems', jsonb_build_object('TransactItems',
  (SELECT jsonb_agg(jsonb_build_object('Get', jsonb_build_object(
     'TableName', 'stock', 'Key', jsonb_build_object('sku', jsonb_build_object('S', 'n' || i))))) FROM generate_series(1, 5000) i) ||
  '[{"Get": {"TableName": "stock", "Key": {"sku": {"S": "a", "B": "YQ=="}}}}]'));
SELECT ddb_transact_get_items('[{"Get": {"TableName": "x", "Key": {"sku": "a"}}}]'::jsonb ||
  (SELECT jsonb_agg(jsonb_build_object('Get', jsonb_build_object(
     'TableName', 'stock', 'Key', jsonb_build_object('sku', 'n' || i)))) FROM generate_series(1, 100) i));
SELECT ddb_api('TransactGetItems', jsonb_build_object('TransactItems',
  '[{"Get": {"TableName": "x", "Key": {"sku": {"S": "a"}}}}]'::jsonb ||
  (SELECT jsonb_agg(jsonb_build_object('Get', jsonb_build_object(
     'TableName', 'stock', 'Key', jsonb_build_object('sku', jsonb_build_object('S', 'n' || i))))) FROM generate_series(1, 100) i)));
SELECT ddb_transact_get_items('[{"Get": {"TableName": "stock", "Key": {"sku": "pear"}, "ProjectionExpression": "#x"}}]');
\set VERBOSITY default

-- ------------------------------------------------------------------------
-- Through ddb_api: CancellationReasons with typed items, as the endpoint
-- returns them (the DETAIL's members join the error response).
-- ------------------------------------------------------------------------
SELECT ddb_api('TransactWriteItems', '{"TransactItems": [
  {"ConditionCheck": {"TableName": "stock", "Key": {"sku": {"S": "pear"}}, "ConditionExpression": "qty > :z",
                      "ExpressionAttributeValues": {":z": {"N": "0"}}, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
  {"Put": {"TableName": "stock", "Item": {"sku": {"S": "fig"}}}}]}');
SELECT ddb_api('TransactWriteItems', '{"TransactItems": [
  {"Put": {"TableName": "stock", "Item": {"sku": {"S": "fig"}, "qty": {"N": "2"}}}},
  {"Delete": {"TableName": "stock", "Key": {"sku": {"S": "pear"}}}}], "ReturnConsumedCapacity": "TOTAL"}');
SELECT ddb_api('TransactGetItems', '{"TransactItems": [
  {"Get": {"TableName": "stock", "Key": {"sku": {"S": "fig"}}}},
  {"Get": {"TableName": "stock", "Key": {"sku": {"S": "pear"}}}}]}');
-- transactional reads bill twice a strongly consistent GetItem's units
SELECT ddb_api('GetItem', '{"TableName": "stock", "Key": {"sku": {"S": "fig"}}, "ConsistentRead": true,
                            "ReturnConsumedCapacity": "TOTAL"}') -> 'ConsumedCapacity' AS get_item,
       ddb_api('TransactGetItems', '{"TransactItems": [{"Get": {"TableName": "stock", "Key": {"sku": {"S": "fig"}}}}],
                                     "ReturnConsumedCapacity": "TOTAL"}') -> 'ConsumedCapacity' AS transact_get;
\set VERBOSITY terse
SELECT ddb_api('TransactWriteItems', '{}');
SELECT ddb_api('TransactWriteItems', '{"TransactItems": [{"Put": {"TableName": "stock", "Item": {"sku": {"S": "a"}}},
                                                          "Delete": {"TableName": "stock", "Key": {"sku": {"S": "a"}}}}]}');
SELECT ddb_api('TransactGetItems', '{"TransactItems": [{}]}');
\set VERBOSITY default

-- ------------------------------------------------------------------------
-- Privileges: each action needs its table's privileges, as the single-item
-- operations do; ConditionCheck locks the item, so it needs UPDATE too.
-- ------------------------------------------------------------------------
-- An update of a key attribute is a fault of the request, not of an item:
-- a plain ValidationException before anything runs, even beside an action
-- whose condition fails (DynamoDB checks the request first).
SELECT ddb_transact_write_items('[
  {"ConditionCheck": {"TableName": "stock", "Key": {"sku": "apple"}, "ConditionExpression": "attribute_not_exists(sku)"}},
  {"Update": {"TableName": "stock", "Key": {"sku": "pear"}, "UpdateExpression": "REMOVE sku"}}]');

CREATE ROLE ddb_tx_reader;
GRANT USAGE ON SCHEMA transact TO ddb_tx_reader;
GRANT SELECT ON stock TO ddb_tx_reader;
SET ROLE ddb_tx_reader;
\set VERBOSITY terse
SELECT ddb_transact_write_items('[{"ConditionCheck": {"TableName": "stock", "Key": {"sku": "apple"},
  "ConditionExpression": "attribute_exists(sku)"}}]');
SELECT ddb_transact_write_items('[{"Put": {"TableName": "stock", "Item": {"sku": "z"}}}]');
\set VERBOSITY default
SELECT ddb_transact_get_items('[{"Get": {"TableName": "stock", "Key": {"sku": "apple"}}}]');
RESET ROLE;
-- an Update needs UPDATE, INSERT and SELECT, as UpdateItem does; with
-- UPDATE and SELECT a ConditionCheck runs
GRANT UPDATE ON stock TO ddb_tx_reader;
SET ROLE ddb_tx_reader;
\set VERBOSITY terse
SELECT ddb_transact_write_items('[{"Update": {"TableName": "stock", "Key": {"sku": "apple"},
  "UpdateExpression": "SET qty = :z", "ExpressionAttributeValues": {":z": 0}}}]');
\set VERBOSITY default
SELECT ddb_transact_write_items('[{"ConditionCheck": {"TableName": "stock", "Key": {"sku": "apple"},
  "ConditionExpression": "attribute_exists(sku)"}}]');
RESET ROLE;
GRANT INSERT ON stock TO ddb_tx_reader;
REVOKE SELECT ON stock FROM ddb_tx_reader;
SET ROLE ddb_tx_reader;
\set VERBOSITY terse
SELECT ddb_transact_write_items('[{"Update": {"TableName": "stock", "Key": {"sku": "apple"},
  "UpdateExpression": "SET qty = :z", "ExpressionAttributeValues": {":z": 0}}}]');
\set VERBOSITY default
RESET ROLE;
SELECT ddb_get_item('stock', '{"sku": "apple"}');

DROP SCHEMA transact CASCADE;
DROP ROLE ddb_tx_reader;
DELETE FROM ddb_internal.transaction_tokens;
